package fsbridge_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
)

// TestConceal: a concealed directory inside the root (a data directory in a
// home-directory workspace) can be neither read, listed, walked, stated,
// written nor moved, by any spelling or through a link.
func TestConceal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	data := filepath.Join(root, ".local", "share", "toolbelt")
	must(t, os.MkdirAll(data, 0o755))
	must(t, os.WriteFile(filepath.Join(data, "toolbelt.db"), []byte("audit log"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, ".local", "share", "other.txt"), []byte("fine"), 0o600))
	must(t, os.Symlink(data, filepath.Join(root, "link")))
	must(t, os.Symlink(filepath.Join(data, "toolbelt.db"), filepath.Join(root, "db-link")))
	l, err := fsbridge.OpenLocal(root, fsbridge.Conceal(data))
	must(t, err)
	defer l.Close()
	// What tools that reach files by other ways (a shell) must hide too.
	if got := l.Concealed(); len(got) == 0 || got[0] != data {
		t.Errorf("Concealed() = %q, want it to start with %q", got, data)
	}

	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fsbridge.ErrRefused) || !strings.Contains(err.Error(), "data directory") {
			t.Errorf("%s: %v, want refused as the data directory", what, err)
		}
	}
	for _, p := range []string{
		".local/share/toolbelt/toolbelt.db", ".local/share/toolbelt", ".LOCAL/share/toolbelt/toolbelt.db",
		"x/../.local/share/toolbelt/toolbelt.db", "link/toolbelt.db", "db-link", data + "/toolbelt.db",
	} {
		_, err := l.ReadFile(ctx, p)
		refused("read "+p, err)
		_, err = l.Stat(ctx, p)
		refused("stat "+p, err)
		refused("write "+p, l.WriteFile(ctx, p, []byte("x"), 0o644))
	}
	_, err = l.ReadDir(ctx, "link")
	refused("list link", err)
	refused("mkdir", l.MkdirAll(ctx, ".local/share/toolbelt/new"))
	refused("move the parent", l.Rename(ctx, ".local", "moved"))
	refused("move out", l.Rename(ctx, ".local/share/toolbelt/toolbelt.db", "stolen.db"))

	// Listings and walks leave it out; the rest stays usable.
	entries, err := l.ReadDir(ctx, ".local/share")
	must(t, err)
	if len(entries) != 1 || entries[0].Name() != "other.txt" {
		t.Errorf("listing: %v", entries)
	}
	var walked []string
	must(t, l.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if f, ok := d.(fsbridge.Opener); ok && !d.IsDir() {
			if file, err := f.Open(); err == nil {
				file.Close()
			} else if !strings.Contains(err.Error(), "data directory") {
				return err
			} else {
				return nil // a link into it: refused to open
			}
		}
		walked = append(walked, p)
		return nil
	}))
	for _, p := range walked {
		if strings.Contains(p, "toolbelt") || p == "db-link" {
			t.Errorf("the walk reached %s: %v", p, walked)
		}
	}
	if b, err := l.ReadFile(ctx, ".local/share/other.txt"); err != nil || string(b) != "fine" {
		t.Errorf("a neighbour: %q %v", b, err)
	}
	if _, err := fsbridge.OpenLocal(root, fsbridge.Conceal("relative/dir")); err == nil {
		t.Error("a relative concealed directory was accepted")
	}
}
