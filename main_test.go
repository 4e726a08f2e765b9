package toolbelt_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine the root started (its
// services, the store opened in the background, a call it waited for)
// outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
