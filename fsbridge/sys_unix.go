//go:build unix

package fsbridge

import (
	"io/fs"
	"os"
	"syscall"
)

// openFlags are added when opening a file for reading: a FIFO must not block
// the open.
const openFlags = syscall.O_NONBLOCK

// linkCount returns the number of hard links to the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// keepOwner gives f the owner and group of the file old describes, when the
// process may (that is, runs as root); otherwise the new file is the
// process's, as with any write.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// lockTemp marks a temporary file as being written: the lock lasts until the
// file is closed or the process ends.
func lockTemp(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) })
	}
}

// unlocked reports whether no process holds the lock of a temporary file,
// that is, whether no one is writing it. The lock taken to find out is
// released when f is closed.
func unlocked(f *os.File, _ fs.FileInfo) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	free := false
	_ = rc.Control(func(fd uintptr) { free = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) == nil })
	return free
}

// renameOpenFiles says a file may be renamed while it is open, so a
// temporary file stays locked until it is in place.
const renameOpenFiles = true
