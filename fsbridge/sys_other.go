//go:build !unix

package fsbridge

import (
	"io/fs"
	"os"
)

// openFlags are added when opening a file for reading.
const openFlags = 0

// linkCount returns 1: hard links are not counted on this system.
func linkCount(fs.FileInfo) uint64 { return 1 }

// keepOwner does nothing on this system.
func keepOwner(*os.File, fs.FileInfo) {}
