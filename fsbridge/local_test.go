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

// layout is a workspace root beside a directory outside it that holds a
// canary file.
type layout struct {
	root, outside, canary string
	l                     *fsbridge.Local
}

const canaryText = "CANARY: outside the workspace"

func newLayout(t *testing.T, opts ...fsbridge.Option) *layout {
	t.Helper()
	base := t.TempDir()
	lay := &layout{root: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside")}
	must(t, os.Mkdir(lay.root, 0o755))
	must(t, os.Mkdir(lay.outside, 0o755))
	lay.canary = filepath.Join(lay.outside, "canary.txt")
	must(t, os.WriteFile(lay.canary, []byte(canaryText), 0o644))
	l, err := fsbridge.OpenLocal(lay.root, opts...)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	lay.l = l
	return lay
}

// intact fails the test when anything outside the root changed.
func (lay *layout) intact(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(lay.canary)
	if err != nil || string(b) != canaryText {
		t.Fatalf("canary changed: %q, %v", b, err)
	}
	entries, err := os.ReadDir(lay.outside)
	must(t, err)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files appeared outside the root: %v", names)
	}
}

func TestLocalLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lay := newLayout(t)
	r := lay.root
	must(t, os.WriteFile(filepath.Join(r, "real.txt"), []byte("real"), 0o640))
	must(t, os.Mkdir(filepath.Join(r, "dir"), 0o755))
	must(t, os.Symlink("real.txt", filepath.Join(r, "rel-link")))
	must(t, os.Symlink(filepath.Join(r, "real.txt"), filepath.Join(r, "abs-link")))
	must(t, os.Symlink("../dir", filepath.Join(r, "dir", "up")))
	must(t, os.Symlink("missing.txt", filepath.Join(r, "dangling-inside")))
	must(t, os.Symlink(lay.canary, filepath.Join(r, "out-file")))
	must(t, os.Symlink(lay.outside, filepath.Join(r, "out-dir")))
	must(t, os.Symlink("../outside", filepath.Join(r, "out-rel")))
	must(t, os.Symlink(filepath.Join(lay.outside, "new.txt"), filepath.Join(r, "dangling-out")))
	must(t, os.Symlink("../outside/new.txt", filepath.Join(r, "dangling-out-rel")))
	must(t, os.Symlink("loop-b", filepath.Join(r, "loop-a")))
	must(t, os.Symlink("loop-a", filepath.Join(r, "loop-b")))

	// Links inside the root work, absolute ones too.
	for _, p := range []string{"rel-link", "abs-link", "dir/up/up/../real.txt"} {
		b, err := lay.l.ReadFile(ctx, p)
		if err != nil || string(b) != "real" {
			t.Errorf("read %s = %q, %v", p, b, err)
		}
	}
	if canon, err := lay.l.Resolve(ctx, "abs-link"); err != nil || canon != "real.txt" {
		t.Errorf("Resolve(abs-link) = %q, %v", canon, err)
	}
	// Writing through a link writes its target and keeps the link and mode.
	must(t, lay.l.WriteFile(ctx, "rel-link", []byte("via link"), 0o600))
	if fi, err := os.Lstat(filepath.Join(r, "rel-link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(r, "real.txt")); string(b) != "via link" {
		t.Errorf("target = %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(r, "real.txt")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", fi.Mode().Perm())
	}
	// A dangling link inside the root creates its target.
	must(t, lay.l.WriteFile(ctx, "dangling-inside", []byte("made"), 0o644))
	if b, _ := os.ReadFile(filepath.Join(r, "missing.txt")); string(b) != "made" {
		t.Errorf("missing.txt = %q", b)
	}

	// Links out of the root are refused, for reading and for writing, and
	// the refusal names the link.
	for _, p := range []string{"out-file", "out-dir/canary.txt", "out-rel/canary.txt", "out-dir/../proj/real.txt", "dangling-out", "dangling-out-rel", "loop-a"} {
		_, rerr := lay.l.ReadFile(ctx, p)
		werr := lay.l.WriteFile(ctx, p, []byte("pwned"), 0o644)
		_, lerr := lay.l.ReadDir(ctx, p)
		for op, err := range map[string]error{"read": rerr, "write": werr, "list": lerr} {
			if !errors.Is(err, fsbridge.ErrRefused) {
				t.Errorf("%s %s: %v, want refused", op, p, err)
			} else if !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%s %s: %q does not mention the link", op, p, err)
			}
		}
	}
	// Removing or moving a link acts on the link itself.
	must(t, lay.l.Rename(ctx, "out-file", "moved-link"))
	must(t, lay.l.Remove(ctx, "moved-link"))
	lay.intact(t)
}

func TestLocalSiblingPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	root, sibling := filepath.Join(base, "proj"), filepath.Join(base, "proj2")
	must(t, os.Mkdir(root, 0o755))
	must(t, os.Mkdir(sibling, 0o755))
	must(t, os.WriteFile(filepath.Join(sibling, "secret"), []byte("s"), 0o644))
	l, err := fsbridge.OpenLocal(root)
	must(t, err)
	defer l.Close()
	for _, p := range []string{filepath.Join(sibling, "secret"), root + "2/secret", "../proj2/secret"} {
		if _, err := l.ReadFile(ctx, p); !errors.Is(err, fsbridge.ErrRefused) {
			t.Errorf("read %s: %v, want refused", p, err)
		}
		if err := l.WriteFile(ctx, p, []byte("x"), 0o644); !errors.Is(err, fsbridge.ErrRefused) {
			t.Errorf("write %s: %v, want refused", p, err)
		}
	}
	// An absolute path inside the root is fine.
	must(t, l.WriteFile(ctx, filepath.Join(root, "ok.txt"), []byte("ok"), 0o644))
	if b, _ := os.ReadFile(filepath.Join(sibling, "secret")); string(b) != "s" {
		t.Fatalf("sibling changed: %q", b)
	}
}

// TestLocalHardLinks: a file with several hard links (another may be a
// file outside the root) is neither written nor read — by path, through a
// walk's entry, or its directory's entry — unless AllowHardLinks is
// given; its refusals match ErrHardLinked. Stat and listings still show
// it.
func TestLocalHardLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lay := newLayout(t)
	if err := os.Link(lay.canary, filepath.Join(lay.root, "hard.txt")); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fsbridge.ErrRefused) || !errors.Is(err, fsbridge.ErrHardLinked) || !strings.Contains(err.Error(), "2 hard links") {
			t.Errorf("%s: %v, want a hard-link refusal", what, err)
		}
	}
	refused("write", lay.l.WriteFile(ctx, "hard.txt", []byte("pwned"), 0o644))
	refused("CheckWrite", lay.l.CheckWrite(ctx, "hard.txt"))
	_, err := lay.l.ReadFile(ctx, "hard.txt")
	refused("ReadFile", err)
	_, err = lay.l.Open(ctx, "./hard.txt")
	refused("Open", err)
	walked := 0
	must(t, lay.l.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
		if p != "hard.txt" {
			return err
		}
		walked++
		o := d.(fsbridge.Opener)
		_, err = o.Open()
		refused("a walk's entry", err)
		return nil
	}))
	must(t, lay.l.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
		if p == "hard.txt" {
			_, err := d.(fsbridge.Opener).OpenSibling("hard.txt")
			refused("OpenSibling", err)
		}
		return err
	}))
	if st, err := lay.l.Stat(ctx, "hard.txt"); err != nil || walked != 1 || st.Size() == 0 {
		t.Errorf("the file is not seen: stat %v, walked %d", err, walked)
	}
	lay.intact(t)

	// Allowed, the file is read, and a write replaces it: the outside link
	// keeps its content.
	allowed, err := fsbridge.OpenLocal(lay.root, fsbridge.AllowHardLinks())
	must(t, err)
	defer allowed.Close()
	if b, err := allowed.ReadFile(ctx, "hard.txt"); err != nil || len(b) == 0 {
		t.Fatalf("read with hard links allowed: %q %v", b, err)
	}
	must(t, allowed.WriteFile(ctx, "hard.txt", []byte("new"), 0o644))
	lay.intact(t)
}

func TestLocalProtectedThroughLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lay := newLayout(t)
	r := lay.root
	must(t, os.MkdirAll(filepath.Join(r, ".git", "hooks"), 0o755))
	must(t, os.Symlink(".git", filepath.Join(r, "g")))
	must(t, os.Symlink(".git/config", filepath.Join(r, "cfg")))
	must(t, os.Symlink("hooks", filepath.Join(r, ".git", "h")))
	for _, p := range []string{"g/config", "cfg", "g/h/pre-commit", "g/hooks/post-checkout"} {
		err := lay.l.WriteFile(ctx, p, []byte("pwned"), 0o755)
		if !errors.Is(err, fsbridge.ErrRefused) || !strings.Contains(err.Error(), "protected") {
			t.Errorf("write %s: %v, want a protected-path refusal", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(r, ".git", "config")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf(".git/config was created: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(r, ".git", "hooks"))
	if len(entries) != 0 {
		t.Fatalf("a hook was created")
	}
}

func TestLocalAtomicWriteLeavesNoTemporaryFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lay := newLayout(t)
	must(t, lay.l.WriteFile(ctx, "a.txt", []byte("1"), 0o644))
	must(t, lay.l.WriteFile(ctx, "a.txt", []byte("2"), 0o644))
	entries, _ := os.ReadDir(lay.root)
	if len(entries) != 1 || entries[0].Name() != "a.txt" {
		t.Fatalf("root holds %v", entries)
	}
	// A cancelled write leaves the old content and no temporary file.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := lay.l.WriteFile(cctx, "a.txt", []byte("3"), 0o644); err == nil {
		t.Fatal("write with a cancelled context succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(lay.root, "a.txt")); string(b) != "2" {
		t.Fatalf("content = %q", b)
	}
}

// TestLocalWalkOpensLinks: a walk's entries open links that stay in the
// root, wherever they lead in it (a link out of its own directory, an
// absolute one), and refuse links out of the root; a link to a directory is
// reported, not entered. (On Linux the walk opens beneath each directory's
// descriptor; -tags fsbridge_osroot runs the same through os.Root.)
func TestLocalWalkOpensLinks(t *testing.T) {
	t.Parallel()
	lay := newLayout(t)
	must(t, os.MkdirAll(filepath.Join(lay.root, "a"), 0o755))
	must(t, os.MkdirAll(filepath.Join(lay.root, "b"), 0o755))
	must(t, os.WriteFile(filepath.Join(lay.root, "a", "x.txt"), []byte("x"), 0o644))
	for name, target := range map[string]string{
		"b/up":      "../a/x.txt",
		"b/abs":     filepath.Join(lay.root, "a", "x.txt"),
		"b/out":     lay.canary,
		"b/out-rel": "../../outside/canary.txt",
		"b/dir":     "../a",
	} {
		must(t, os.Symlink(target, filepath.Join(lay.root, name)))
	}
	got := map[string]string{}
	must(t, lay.l.WalkDir(context.Background(), "b", func(p string, d fs.DirEntry, err error) error {
		must(t, err)
		if p == "b" {
			return nil
		}
		if d.Type() != fs.ModeSymlink {
			t.Errorf("%s: type %v, want a symbolic link", p, d.Type())
		}
		f, err := d.(fsbridge.Opener).Open()
		if err != nil {
			got[p] = "error: " + err.Error()
			return nil
		}
		defer f.Close()
		b := make([]byte, 64)
		n, _ := f.Read(b)
		got[p] = string(b[:n])
		return nil
	}))
	if got["b/up"] != "x" || got["b/abs"] != "x" {
		t.Errorf("links inside the root: %q", got)
	}
	for _, p := range []string{"b/out", "b/out-rel"} {
		if !strings.Contains(got[p], "outside the workspace") {
			t.Errorf("%s: %q, want a refusal", p, got[p])
		}
	}
	if _, ok := got["b/dir/x.txt"]; ok {
		t.Errorf("the walk entered a link to a directory: %q", got)
	}
	lay.intact(t)
}
