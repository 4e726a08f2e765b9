//go:build unix

package fsbridge_test

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
)

// TestLocalSpecialFiles: a named pipe is refused at once for reading (an
// open would otherwise block) and for writing.
func TestLocalSpecialFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lay := newLayout(t)
	if err := syscall.Mkfifo(filepath.Join(lay.root, "pipe"), 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	if _, err := lay.l.ReadFile(ctx, "pipe"); !errors.Is(err, fsbridge.ErrRefused) {
		t.Errorf("read pipe: %v, want refused", err)
	}
	if err := lay.l.WriteFile(ctx, "pipe", []byte("x"), 0o644); !errors.Is(err, fsbridge.ErrRefused) {
		t.Errorf("write pipe: %v, want refused", err)
	}
}
