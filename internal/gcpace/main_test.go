package gcpace

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine its code started outlives
// the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
