//go:build !fsbridge_osroot

package fsbridge

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A walk on Linux lists and opens with bare descriptors: every directory and
// file is opened with openat2 beneath its directory's descriptor
// (RESOLVE_BENEATH, and RESOLVE_NO_SYMLINKS for directories, which a walk
// never follows), listed with getdents64 or read, and closed. An os.File
// would cost a second open per directory (os.Root does not lend its
// descriptor for listing) and, for every file, a failed epoll_ctl and fcntl
// calls. The kernel confines each open as os.Root does, to the directory
// (and so the root) it is made from. Where openat2 is missing (Linux before
// 5.6) or refused (a seccomp filter), the walk goes through os.Root, as it
// does on other systems and when built with the tag fsbridge_osroot.

// beneath are the openat2 resolve flags of every open in a walk.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// openWalk opens the directory canon for a walk. Anything else put in its
// place since it was looked at (a FIFO would block the open) is refused.
func (l *Local) openWalk(canon string) (walkDir, error) {
	f, err := l.root.OpenFile(canon, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var errno error
	if err := rc.Control(func(dir uintptr) {
		fd, errno = openat2(int(dir), ".", unix.O_RDONLY|unix.O_DIRECTORY, beneath|unix.RESOLVE_NO_SYMLINKS)
	}); err != nil {
		return nil, err
	}
	switch {
	case errno == nil:
		return fdDir(fd), nil
	case errors.Is(errno, unix.ENOSYS), errors.Is(errno, unix.EPERM):
		r, err := l.root.OpenRoot(canon)
		if err != nil {
			return nil, err
		}
		return rootDir{r}, nil
	}
	return nil, &fs.PathError{Op: "openat2", Path: canon, Err: errno}
}

// openat2 opens name beneath the directory dir, close-on-exec.
func openat2(dir int, name string, flags int, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	for {
		fd, err := unix.Openat2(dir, name, &how)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fdDir is a directory's descriptor during a walk.
type fdDir int

func (d fdDir) list(buf []byte) ([]dirent, error) {
	var out []dirent
	for {
		n, err := unix.Getdents(int(d), buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, &os.SyscallError{Syscall: "getdents64", Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		if out, err = appendDirents(out, buf[:n], func(name string) (fs.FileMode, error) {
			var st unix.Stat_t
			if err := unix.Fstatat(int(d), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return 0, err
			}
			return fileMode(st.Mode).Type(), nil
		}); err != nil {
			return out, err
		}
	}
}

func (d fdDir) sub(name string) (walkDir, error) {
	fd, err := openat2(int(d), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, beneath|unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		return nil, &fs.PathError{Op: "openat2", Path: name, Err: err}
	}
	return fdDir(fd), nil
}

// open opens a file beneath d. A symbolic link that leads out of d
// (RESOLVE_BENEATH refuses it) may still lead to a file in the root, and
// other failures are explained by resolving the path: when the open fails,
// the path is opened from the root, as Local.Open does.
func (d fdDir) open(l *Local, name, p string) (fs.File, error) {
	fd, err := openat2(int(d), name, unix.O_RDONLY|openFlags, beneath)
	if err != nil {
		return l.Open(context.Background(), p)
	}
	f := &fdFile{fd: fd, info: fdInfo{name: name}}
	if err := syscall.Fstat(fd, &f.info.st); err != nil {
		unix.Close(fd)
		return nil, l.osErr("read", p, &fs.PathError{Op: "fstat", Path: name, Err: err})
	}
	if err := l.checkInfo(p, &f.info); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return f, nil
}

func (d fdDir) close() error { return unix.Close(int(d)) }

// fdFile is a file opened for reading in a walk. Its Stat is the file as
// it was opened.
type fdFile struct {
	fd   int
	info fdInfo
}

func (f *fdFile) Stat() (fs.FileInfo, error) { return &f.info, nil }

func (f *fdFile) Read(b []byte) (int, error) {
	if f.fd < 0 {
		return 0, fs.ErrClosed
	}
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.info.name, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *fdFile) Close() error {
	if f.fd < 0 {
		return fs.ErrClosed
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// fdInfo describes a file from its fstat.
type fdInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *fdInfo) Name() string       { return i.name }
func (i *fdInfo) Size() int64        { return i.st.Size }
func (i *fdInfo) Mode() fs.FileMode  { return fileMode(i.st.Mode) }
func (i *fdInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *fdInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *fdInfo) Sys() any           { return &i.st }

// fileMode converts a stat mode to a file mode, as os.Stat does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
