// Package fsbridge gives tools one interface to a file system — a local
// directory confined to a root, memory, or anything else that can stat, read,
// write, list, remove and rename — so file tools never touch paths directly.
package fsbridge

import (
	"context"
	"io"
	"io/fs"
)

// Bridge is storage that file tools read and write through. Paths are
// slash-separated and relative to the bridge's root; implementations refuse
// any path that would leave it.
type Bridge interface {
	// Stat describes the file at path.
	Stat(ctx context.Context, path string) (fs.FileInfo, error)
	// Open opens the file at path for reading.
	Open(ctx context.Context, path string) (io.ReadCloser, error)
	// ReadFile returns the whole content of the file at path.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces the file at path atomically: readers see the old
	// content or the new, never a mix. An existing file keeps its mode; a new
	// one gets perm.
	WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error
	// MkdirAll creates the directory at path and any missing parents.
	MkdirAll(ctx context.Context, path string) error
	// ReadDir lists the directory at path, sorted by name.
	ReadDir(ctx context.Context, path string) ([]fs.DirEntry, error)
	// Remove deletes the file or empty directory at path.
	Remove(ctx context.Context, path string) error
	// Rename moves oldPath to newPath, replacing a file there.
	Rename(ctx context.Context, oldPath, newPath string) error
}
