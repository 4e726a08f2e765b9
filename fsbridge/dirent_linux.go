package fsbridge

import (
	"encoding/binary"
	"io/fs"
	"os"
	"syscall"
)

// listDir lists the open directory f (of d) with getdents, taking each
// entry's type from the listing. (os.File.ReadDir calls lstat for every
// entry of a directory opened in a Root, which doubles the cost of a walk.)
// Entries whose type the file system does not give are looked up.
func listDir(d *os.Root, f *os.File) ([]dirent, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []dirent
	buf := make([]byte, 32<<10)
	for {
		var n int
		var errno error
		if err := rc.Read(func(fd uintptr) bool {
			n, errno = syscall.Getdents(int(fd), buf)
			return true
		}); err != nil {
			return out, err
		}
		if errno == syscall.EINTR {
			continue
		}
		if errno != nil {
			return out, &os.SyscallError{Syscall: "getdents64", Err: errno}
		}
		if n <= 0 {
			return out, nil
		}
		if out, err = appendDirents(out, buf[:n], func(name string) (fs.FileMode, error) {
			fi, err := d.Lstat(name)
			if err != nil {
				return 0, err
			}
			return fi.Mode().Type(), nil
		}); err != nil {
			return out, err
		}
	}
}

// appendDirents appends the entries of getdents64's records recs to out,
// leaving out "." and "..". An entry whose type the file system does not
// give is looked up with lstat, and left out if it is gone.
func appendDirents(out []dirent, recs []byte, lstat func(name string) (fs.FileMode, error)) ([]dirent, error) {
	for rec := recs; len(rec) >= 19; {
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
		if reclen < 19 || reclen > len(rec) {
			return out, &os.SyscallError{Syscall: "getdents64", Err: syscall.EIO}
		}
		name := rec[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		typ, known := direntType(rec[18])
		rec = rec[reclen:]
		if s := string(name); s != "." && s != ".." {
			if !known {
				t, err := lstat(s)
				if err != nil {
					continue // gone since it was listed
				}
				typ = t
			}
			out = append(out, dirent{s, typ})
		}
	}
	return out, nil
}

// direntType maps a d_type value to a file type; DT_UNKNOWN is not known.
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}
