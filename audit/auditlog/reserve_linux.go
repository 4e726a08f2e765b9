package auditlog

import (
	"errors"
	"os"
	"syscall"
)

// reserve allocates the disk blocks of f from off for n bytes without
// changing its size (fallocate with FALLOC_FL_KEEP_SIZE), so that writing
// them later cannot fail for want of space. It returns errNoReserve when the
// file system cannot allocate ahead.
func reserve(f *os.File, off, n int64) error {
	const keepSize = 0x1 // FALLOC_FL_KEEP_SIZE
	for {
		err := syscall.Fallocate(int(f.Fd()), keepSize, off, n)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL):
			return errNoReserve
		case err != nil:
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
		}
		return nil
	}
}
