//go:build race

package crashtest

// raceEnabled: the test runs with the race detector.
const raceEnabled = true
