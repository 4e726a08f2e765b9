package channels

// VerifiedSender is verifiedSender, for the tests.
var VerifiedSender = verifiedSender
