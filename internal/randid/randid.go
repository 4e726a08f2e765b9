// Package randid makes the random ids of sessions, runs, schedules, jobs,
// fetches and temporary files: a prefix and random bytes from crypto/rand
// in lowercase hexadecimal.
package randid

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns prefix followed by n random bytes as 2n lowercase hexadecimal
// digits: New("run-", 6) is like "run-3f9a0c51b2e4".
func New(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // it never returns an error
	return prefix + hex.EncodeToString(b)
}
