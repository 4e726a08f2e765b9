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
