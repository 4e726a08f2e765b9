package shell

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// Bounds of the workspace hash: a bigger workspace is not hashed, and
// "allow always" is not offered for the commands that would be bound to it.
const (
	maxHashEntries = 200_000
	maxHashBytes   = 2 << 30
)

// maxCachedTrees bounds the workspaces whose file hashes are remembered.
const maxCachedTrees = 16

// racyAge is how old a file's last change must be before its hash is
// cached by its metadata: a file changed twice within one tick of the
// file system's clock could keep its size and times, so a recent one is
// read every time (git's "racy clean" problem).
const racyAge = 2 * time.Second

// treeHashes computes workspace hashes, remembering the hash of each file
// by its metadata so that an unchanged file is not read again. It is safe
// for concurrent use.
type treeHashes struct {
	// maxEntries, maxBytes and racyAge, when set, replace maxHashEntries,
	// maxHashBytes and racyAge (for tests).
	maxEntries int
	maxBytes   int64
	racyAge    time.Duration

	mu    sync.Mutex
	trees map[string]*treeCache // by workspace root
}

// treeCache is the remembered file hashes of one workspace; mu serializes
// the hashing of that workspace.
type treeCache struct {
	mu    sync.Mutex
	files map[string]knownFile // by path
}

// knownFile is a file's content hash and the metadata it was read with: any
// change of content changes the ctime, which the file's owner cannot set.
type knownFile struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
	sum          [sha256.Size]byte
}

// hash returns the hex SHA-256 of the workspace root (a real path): the
// path, type and permissions of every entry in it, the content hash of
// every regular file and the target of every symbolic link, in the order
// of the walk — everything but the concealed directories (Toolbelt's data,
// which the tools can neither read nor write). Git's directory is hashed
// like any other: its configuration and hooks are code. Special files are
// never opened. The tree is listed first, and not read at all when it has
// more than maxHashEntries entries or maxHashBytes of file content; it
// fails then, or when a file cannot be read, with an error that says so
// for people.
func (h *treeHashes) hash(ctx context.Context, root string, conceal []string) (string, error) {
	h.mu.Lock()
	if h.trees == nil {
		h.trees = map[string]*treeCache{}
	}
	c := h.trees[root]
	if c == nil {
		if len(h.trees) == maxCachedTrees {
			for other := range h.trees { // any one: it is only a cache
				delete(h.trees, other)
				break
			}
		}
		c = &treeCache{}
		h.trees[root] = c
	}
	h.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	l := treeList{ctx: ctx, root: root, conceal: conceal,
		maxEntries: cmp.Or(h.maxEntries, maxHashEntries), maxBytes: cmp.Or(h.maxBytes, maxHashBytes)}
	if err := filepath.WalkDir(root, l.add); err != nil {
		return "", err
	}
	r := fileReader{old: c.files, seen: make(map[string]knownFile, len(c.files)),
		stable: time.Now().Add(-cmp.Or(h.racyAge, racyAge)).UnixNano()}
	sum := sha256.New()
	var line []byte
	for _, e := range l.entries {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		body := e.link
		if e.info.Mode().IsRegular() {
			s, err := r.sum(e.path, e.info)
			if err != nil {
				return "", fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", e.rel, err)
			}
			body = hex.EncodeToString(s[:])
		}
		line = fmt.Appendf(line[:0], "%x %o %d:%s %d:%s\n", uint32(e.info.Mode().Type()), uint32(e.info.Mode().Perm()), len(e.rel), e.rel, len(body), body)
		sum.Write(line)
	}
	c.files = r.seen
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// treeList lists a workspace for its hash, within bounds.
type treeList struct {
	ctx             context.Context
	root            string
	conceal         []string
	maxEntries      int
	maxBytes, bytes int64
	entries         []treeEntry
}

// treeEntry is one entry of a workspace: its path (absolute and relative
// to the workspace), its lstat and, for a symbolic link, its target.
type treeEntry struct {
	path, rel, link string
	info            fs.FileInfo
}

// add lists one entry of the walk.
func (l *treeList) add(p string, d fs.DirEntry, err error) error {
	rel := relTo(l.root, p)
	if err != nil {
		return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if d.IsDir() && p != l.root && slices.Contains(l.conceal, p) {
		return filepath.SkipDir
	}
	if len(l.entries) == l.maxEntries {
		return fmt.Errorf("the workspace has more than %d files, too many to fingerprint", l.maxEntries)
	}
	e := treeEntry{path: p, rel: rel}
	if e.info, err = d.Info(); err != nil {
		return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
	}
	switch {
	case sandbox.IsPlaceholder(e.info.Mode()):
		// The sandbox's placeholder for a protected name comes and goes
		// with the sandboxes running in the workspace; an empty directory
		// holds no code, and what one may hold is listed (the walk goes on
		// into it).
		return nil
	case e.info.Mode().IsRegular():
		if l.bytes += e.info.Size(); l.bytes > l.maxBytes {
			return fmt.Errorf("the workspace's files hold more than %d MiB, too much to fingerprint", l.maxBytes>>20)
		}
	case e.info.Mode().Type() == fs.ModeSymlink:
		if e.link, err = os.Readlink(p); err != nil {
			return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
		}
	}
	l.entries = append(l.entries, e)
	return nil
}

// fileReader hashes files, taking a remembered hash when a file's metadata
// has not changed since it was read.
type fileReader struct {
	old, seen map[string]knownFile
	stable    int64 // files last changed before it may be remembered
	buf       [32 << 10]byte
}

// sum returns the content hash of the regular file p (lstat st): the
// remembered one when its metadata is unchanged, else read. It is opened
// without following a link and without blocking, and read only if it is
// still a regular file.
func (r *fileReader) sum(p string, st fs.FileInfo) ([sha256.Size]byte, error) {
	if m, ok := metaOf(st); ok {
		if old, ok := r.old[p]; ok && old.sameFile(m) {
			r.seen[p] = old
			return old.sum, nil
		}
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	if !fst.Mode().IsRegular() {
		return [sha256.Size]byte{}, errors.New("it changed while it was read")
	}
	h := sha256.New()
	// The buffer is used only if f's own WriteTo (which makes one) is not.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, r.buf[:]); err != nil {
		return [sha256.Size]byte{}, err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if m, ok := metaOf(fst); ok && m.ctime < r.stable && m.mtime < r.stable {
		m.sum = sum
		r.seen[p] = m
	}
	return sum, nil
}

// sameFile reports whether m is the metadata f was read with.
func (f knownFile) sameFile(m knownFile) bool {
	return f.dev == m.dev && f.ino == m.ino && f.size == m.size && f.mtime == m.mtime && f.ctime == m.ctime
}
