package fsbridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"regexp"
	"time"
)

// tempPattern matches the names tempName gives temporary files.
var tempPattern = regexp.MustCompile(`^\..*\.toolbelt-[0-9a-f]{12}\.tmp$`)

// staleAfter is how old a temporary file must be for RemoveStaleTemp to
// take it for a leftover. File times are coarser than the clock (a few
// milliseconds): a file written just after RemoveStaleTemp began may carry
// an earlier time.
const staleAfter = time.Second

// RemoveStaleTemp removes the temporary files that interrupted atomic writes
// left behind (a process killed between writing the temporary file and
// renaming it). Only files that are named as WriteFile names them, are
// regular files (a link of that name is left alone, and links to
// directories are not followed), and are not being written — a writer holds
// a lock on its temporary file until the rename — and were last written
// staleAfter or more before RemoveStaleTemp began are removed: a write that
// starts while it runs, in this process or another, is never taken for a
// leftover, not even in the moment between creating its file and locking
// it, so it may run beside the calls of a server that has just started. The .git
// directories and concealed ones (see Conceal) are not walked. It returns the paths removed, relative to the
// root and slash-separated; it stops early when ctx is done.
func (l *Local) RemoveStaleTemp(ctx context.Context) ([]string, error) {
	before := time.Now().Add(-staleAfter)
	var removed []string
	err := fs.WalkDir(l.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return nil // an unreadable directory: go on with the rest
		}
		if d.IsDir() {
			if d.Name() == ".git" || p != "." && l.concealed(p) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !tempPattern.MatchString(d.Name()) {
			return nil
		}
		if l.removeIfStale(p, before) {
			removed = append(removed, p)
		}
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return removed, err
	}
	return removed, nil
}

// removeIfStale removes the temporary file at p if it is a regular file no
// one is writing, last written before the time given.
func (l *Local) removeIfStale(p string, before time.Time) bool {
	f, err := l.root.OpenFile(p, os.O_RDONLY|noFollow|openFlags, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := f.Stat()
	if err != nil || !held.Mode().IsRegular() || !held.ModTime().Before(before) || !unlocked(f, held) {
		return false
	}
	// Still the same file under that name, and not a link?
	now, err := l.root.Lstat(p)
	if err != nil || !now.Mode().IsRegular() || !os.SameFile(held, now) || !tempPattern.MatchString(path.Base(p)) {
		return false
	}
	return l.root.Remove(p) == nil
}
