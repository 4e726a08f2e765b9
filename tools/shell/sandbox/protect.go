package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A protected name that does not exist cannot be kept from being created by
// mounting something over it: a mount needs an entry to cover, and the
// sandbox can write the directory the name would go in. So while a sandbox
// runs, Toolbelt creates that entry — a placeholder, an empty directory
// that the sandbox sees read-only — and removes it when no sandbox in the
// workspace needs it any more. Git and Toolbelt's own configuration search
// pass over an empty directory (reading a file from it fails), and nothing
// can be written under it in the sandbox.
//
// Sandboxes of one workspace, in this process or another, share the
// placeholders. Each holds a shared lock (flock) on the workspace directory
// from before it makes them until its process has exited; one that ends
// removes them only if it can then take the lock exclusively, that is when
// no other sandbox is running there. A placeholder is recognised by its
// mode (placeholderMode), which nobody gives a directory of their own, so
// ones left by a process that was killed are removed the next time.

// placeholderMode marks a placeholder: read and search for everyone, no
// writing, and the sticky bit, which means nothing on a directory nobody
// can write.
const placeholderMode = 0o555 | os.ModeSticky | os.ModeDir

// IsPlaceholder reports whether an entry of mode m is a placeholder (or
// looks like one): what it holds matters, its own entry does not.
func IsPlaceholder(m fs.FileMode) bool { return m == placeholderMode }

// lockWait bounds the wait for another process's removal of placeholders
// (which takes the workspace's lock exclusively for a moment).
const lockWait = 10 * time.Second

// holding is one sandbox's share of the workspace's placeholders.
type holding struct {
	root  string
	names []string
	lock  *os.File
	once  sync.Once
}

// hold makes a placeholder for each of p's names that does not exist in
// root, under a shared lock on root that the holding keeps until release.
// A name whose way into root goes through a symbolic link or a file is
// left alone (the sandbox follows links as the host does; see
// docs/security.md, "Known limits").
func hold(root string, p Protection) (*holding, error) {
	h := &holding{root: root}
	if p == nil {
		return h, nil
	}
	h.names = p.Names()
	lock, err := lockShared(root)
	if err != nil {
		return nil, err
	}
	h.lock = lock
	// One holder at a time makes placeholders in this process: another's
	// half-made one (created, its mode not set yet) would look like a
	// directory of the workspace, and a placeholder be made inside it.
	creating.Lock()
	defer creating.Unlock()
	for _, name := range h.names {
		if err := placeholder(root, name); err != nil {
			h.release()
			return nil, fmt.Errorf("this command must run in the sandbox, but the protected path %s could not be held read-only (%v), so the command was not run", filepath.Join(root, name), err)
		}
	}
	return h, nil
}

// creating serializes the making of placeholders in the process.
var creating sync.Mutex

// lockShared opens root and takes a shared lock on it, waiting (up to
// lockWait) while another process holds it exclusively.
func lockShared(root string) (*os.File, error) {
	f, err := os.Open(root)
	if err != nil {
		return nil, fmt.Errorf("this command must run in the sandbox, but the workspace %s cannot be opened: %w", root, err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("this command must run in the sandbox, but the lock on the workspace %s, which sandboxes share, could not be taken (%v), so the command was not run. Another process holds it exclusively; retry, or find that process (fuser %s)", root, err, root)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// placeholder makes the placeholder for name (relative to root) at its
// first element that does not exist, if any does not.
func placeholder(root, name string) error {
	cur := root
	for _, e := range strings.Split(name, "/") {
		cur = filepath.Join(cur, e)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return makePlaceholder(cur)
		case err != nil:
			return err
		case !fi.IsDir(), fi.Mode() == placeholderMode:
			return nil // held already, or a file (or a link): what is protected, or nothing can be below it
		}
	}
	return nil // it exists
}

// makePlaceholder creates an empty directory with placeholderMode at p.
// Another sandbox (or someone) creating p at the same moment is fine: what
// is there then is mounted read-only like any protected path. A workspace
// where nothing can be created (a read-only file system, no permission)
// needs no placeholder: the sandbox, with the same rights or fewer, cannot
// create it either.
func makePlaceholder(p string) error {
	err := os.Mkdir(p, placeholderMode.Perm()|os.ModeSticky) // as it will be, unless the umask says otherwise
	switch {
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return nil
	case err != nil:
		return err
	}
	return os.Chmod(p, placeholderMode)
}

// release ends h's share: it drops the shared lock and, when no other
// sandbox holds it, removes the placeholders.
func (h *holding) release() {
	h.once.Do(func() {
		if h.lock == nil {
			return
		}
		_ = h.lock.Close()
		tidy(h.root, h.names)
	})
}

// tidy removes the placeholders of names in root if no sandbox is running
// there (the workspace's lock can be taken exclusively).
func tidy(root string, names []string) {
	f, err := os.Open(root)
	if err != nil {
		return
	}
	defer f.Close() // and with it the lock
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // another sandbox runs: the last to end removes them
	}
	for _, name := range names {
		cur := root
		for _, e := range strings.Split(name, "/") {
			cur = filepath.Join(cur, e)
			fi, err := os.Lstat(cur)
			if err != nil || !fi.IsDir() {
				break
			}
			if fi.Mode() == placeholderMode {
				removePlaceholder(cur)
				break
			}
		}
	}
}

// removePlaceholder removes the placeholder p, and the placeholders in it
// first: another process may have made one in p while p was being made. It
// stays if anything else was put in it.
func removePlaceholder(p string) {
	if entries, err := os.ReadDir(p); err == nil {
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && fi.Mode() == placeholderMode {
				removePlaceholder(filepath.Join(p, e.Name()))
			}
		}
	}
	_ = syscall.Rmdir(p)
}

// coverage is what a sandbox must cover in the workspace.
type coverage struct {
	// protected are the protected paths that exist, each at its highest (a
	// protected directory, not what is in it), and the paths inside root
	// that protected symbolic links lead to.
	protected []string
	// sockets are the Unix sockets in the workspace: a host process may
	// listen on one, and connecting to it would reach outside the sandbox.
	sockets []string
}

// socketArgs covers the sockets with /dev/null: connecting fails.
func (c coverage) socketArgs() []string {
	var args []string
	for _, p := range c.sockets {
		args = append(args, "--ro-bind", os.DevNull, p)
	}
	return args
}

// survey walks root for what a sandbox must cover (see coverage), and
// leaves out the directories of conceal, which are covered as a whole. A
// directory it cannot read is skipped: the sandbox, with the same rights
// or fewer, cannot list it either.
func survey(root string, p Protection, conceal []string) coverage {
	var c coverage
	under := "" // the protected directory being walked, if any
	_ = filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable (or gone): skipped
		}
		if d.IsDir() && name != root && slices.Contains(conceal, name) {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSocket != 0 {
			c.sockets = append(c.sockets, name)
		}
		if p == nil || under != "" && strings.HasPrefix(name, under+"/") {
			return nil
		}
		rel, err := filepath.Rel(root, name)
		if err != nil || !p.Match(filepath.ToSlash(rel)) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if target, err := filepath.EvalSymlinks(name); err == nil && inside(target, root) && !slices.Contains(c.protected, target) {
				c.protected = append(c.protected, target)
			}
			return nil
		}
		c.protected = append(c.protected, name)
		if d.IsDir() {
			under = name
		}
		return nil
	})
	return c
}

// inside reports whether the clean absolute path p is root or lies in it.
func inside(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}
