// Package liveness tells whether the process that left a record still
// runs. Each process holds an exclusive lock (flock(2)) on a file of its
// own in a directory the processes share; the kernel releases the lock when
// the process ends, however it ends (kill -9 included), so another process
// that can take the lock knows its holder is gone.
//
// A file gets its name only once it is locked — it is made under a
// temporary name, locked, then renamed — so no one ever finds an unlocked
// file of a process that still runs.
package liveness

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// suffix ends the name of every lock file.
const suffix = ".lock"

// Holder is this process's lock: its name tells other processes which
// file to test.
type Holder struct {
	dir, name string
	f         *os.File
}

// Hold makes a lock file in dir (created 0700 if missing) and locks it for
// as long as the process runs, or until Release.
func Hold(dir string) (*Holder, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the process lock in %s: %w", dir, err)
	}
	id := randomID()
	tmp := filepath.Join(dir, "."+id+".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the process lock in %s: %w", dir, err)
	}
	name := fmt.Sprintf("%d-%s%s", os.Getpid(), id, suffix)
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("the process lock in %s: %w", dir, err)
	}
	return &Holder{dir: dir, name: name, f: f}, nil
}

// Name is the name of the holder's file, which Alive takes.
func (h *Holder) Name() string { return h.name }

// Release unlocks the holder's file, removing it first when remove is set
// (when no record names it any more). The file of a process that ends
// without Release stays, unlocked, until a Sweep.
func (h *Holder) Release(remove bool) error {
	var err error
	if remove {
		if err = os.Remove(filepath.Join(h.dir, h.name)); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	return errors.Join(err, h.f.Close())
}

// Alive reports whether the process that holds the lock file name in dir
// still runs. A missing file is a process that ended (its file was swept);
// "" names no process.
func Alive(dir, name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	if name != filepath.Base(name) || !strings.HasSuffix(name, suffix) {
		return false, fmt.Errorf("%q is not the name of a process lock", name)
	}
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("testing the process lock %s: %w", name, err)
	}
	defer f.Close()
	return !free(f), nil
}

// PID is the process id in the name of a lock file Hold made (its name
// begins with it); false for a name that is not one.
func PID(name string) (int, bool) {
	head, _, ok := strings.Cut(name, "-")
	if !ok || !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	pid, err := strconv.Atoi(head)
	return pid, err == nil && pid > 0
}

// Sweep removes from dir the lock files of processes that ended, except
// those keep says are still named by a record.
func Sweep(dir string, keep func(name string) bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sweeping the process locks: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), suffix) || keep(e.Name()) {
			continue
		}
		if err := removeIfFree(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeIfFree removes the lock file at path when no process holds it,
// holding its lock meanwhile.
func removeIfFree(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sweeping the process lock %s: %w", path, err)
	}
	defer f.Close()
	if !free(f) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sweeping the process lock %s: %w", path, err)
	}
	return nil
}

// free takes f's lock if no one holds it, and reports whether it did; the
// lock goes when f is closed.
func free(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// Site returns the id of dir: made at random the first time, then kept in
// dir's file "site". Processes that share dir share its id, so a record
// can say which processes may test its lock.
func Site(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the site id in %s: %w", dir, err)
	}
	path := filepath.Join(dir, "site")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	// Written whole under a temporary name, then linked into place: a
	// reader never sees half an id, and of two processes the first wins.
	tmp := filepath.Join(dir, "."+randomID()+".tmp")
	if err := os.WriteFile(tmp, []byte(randomID()+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("the site id in %s: %w", dir, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("the site id in %s: %w", dir, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the site id in %s: %w", dir, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
