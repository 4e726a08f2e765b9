package channels

// VerifiedSender is verifiedSender, for the tests.
var VerifiedSender = verifiedSender

// SetIMAPLimits bounds what email channel a takes from its INBOX at a time
// (call it before Start).
func SetIMAPLimits(a Adapter, perPoll, batch int, maxBytes int64) {
	a.(*Email).limits = imapLimits{perPoll: perPoll, batch: batch, batchBytes: 32 << 20, maxBytes: maxBytes}
}
