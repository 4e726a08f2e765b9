package shell

import (
	"io/fs"
	"syscall"
)

// metaOf returns the metadata a file's hash is remembered by.
func metaOf(st fs.FileInfo) (knownFile, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return knownFile{}, false
	}
	return knownFile{
		dev: uint64(sys.Dev), ino: uint64(sys.Ino), size: st.Size(),
		mtime: st.ModTime().UnixNano(), ctime: sys.Ctim.Nano(),
	}, true
}
