package shell

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Bounds of the workspace hash: a bigger workspace is not hashed, and
// "allow always" is not offered for the commands that would be bound to it.
const (
	maxHashEntries = 200_000
	maxHashBytes   = 4 << 30
)

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
// never opened. It fails when the workspace has more than maxHashEntries
// entries or maxHashBytes of file content, or a file cannot be read; the
// error says so for people.
func (h *treeHashes) hash(ctx context.Context, root string, conceal []string) (string, error) {
	h.mu.Lock()
	if h.trees == nil {
		h.trees = map[string]*treeCache{}
	}
	c := h.trees[root]
	if c == nil {
		c = &treeCache{}
		h.trees[root] = c
	}
	h.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	w := treeWalk{ctx: ctx, root: root, conceal: conceal, old: c.files, seen: map[string]knownFile{},
		sum: sha256.New(), stable: time.Now().Add(-cmp.Or(h.racyAge, racyAge)).UnixNano(),
		maxEntries: cmp.Or(h.maxEntries, maxHashEntries), maxBytes: cmp.Or(h.maxBytes, maxHashBytes)}
	if err := filepath.WalkDir(root, w.entry); err != nil {
		return "", err
	}
	c.files = w.seen
	return hex.EncodeToString(w.sum.Sum(nil)), nil
}

// treeWalk is one walk of a workspace for its hash.
type treeWalk struct {
	ctx       context.Context
	root      string
	conceal   []string
	old, seen map[string]knownFile
	sum       hash.Hash
	entries   int
	bytes     int64
	// maxEntries and maxBytes bound the walk.
	maxEntries int
	maxBytes   int64
	stable     int64 // files last changed before it may be remembered
	buf        [32 << 10]byte
}

// entry adds one entry of the walk to the hash.
func (w *treeWalk) entry(p string, d fs.DirEntry, err error) error {
	rel := relTo(w.root, p)
	if err != nil {
		return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if d.IsDir() && p != w.root && w.concealed(p) {
		return filepath.SkipDir
	}
	if w.entries++; w.entries > w.maxEntries {
		return fmt.Errorf("the workspace has more than %d files, too many to fingerprint", w.maxEntries)
	}
	st, err := d.Info()
	if err != nil {
		return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
	}
	var body string
	switch t := st.Mode().Type(); {
	case t == 0:
		sum, err := w.file(p, st)
		if err != nil {
			return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
		}
		body = hex.EncodeToString(sum[:])
	case t == fs.ModeSymlink:
		if body, err = os.Readlink(p); err != nil {
			return fmt.Errorf("%s cannot be read to fingerprint the workspace: %v", rel, err)
		}
	}
	fmt.Fprintf(w.sum, "%x %o %d:%s %d:%s\n", uint32(st.Mode().Type()), uint32(st.Mode().Perm()), len(rel), rel, len(body), body)
	return nil
}

// concealed reports whether the directory p is one the tools cannot see.
func (w *treeWalk) concealed(p string) bool {
	for _, d := range w.conceal {
		if p == d {
			return true
		}
	}
	return false
}

// file returns the content hash of the regular file p (lstat st): the
// remembered one when its metadata is unchanged, else read. It is opened
// without following a link and without blocking, and read only if it is
// still a regular file.
func (w *treeWalk) file(p string, st fs.FileInfo) ([sha256.Size]byte, error) {
	if w.bytes += st.Size(); w.bytes > w.maxBytes {
		return [sha256.Size]byte{}, fmt.Errorf("the workspace's files hold more than %d MiB, too much to fingerprint", w.maxBytes>>20)
	}
	if m, ok := metaOf(st); ok {
		if old, ok := w.old[p]; ok && old.sameFile(m) {
			w.seen[p] = old
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
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, w.buf[:]); err != nil {
		return [sha256.Size]byte{}, err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if m, ok := metaOf(fst); ok && m.ctime < w.stable && m.mtime < w.stable {
		m.sum = sum
		w.seen[p] = m
	}
	return sum, nil
}

// sameFile reports whether m is the metadata f was read with.
func (f knownFile) sameFile(m knownFile) bool {
	return f.dev == m.dev && f.ino == m.ino && f.size == m.size && f.mtime == m.mtime && f.ctime == m.ctime
}
