//go:build !unix

package fsbridge

import (
	"io/fs"
	"os"
	"time"
)

// openFlags are added when opening a file for reading.
const openFlags = 0

// linkCount returns 1: hard links are not counted on this system.
func linkCount(fs.FileInfo) uint64 { return 1 }

// keepOwner does nothing on this system.
func keepOwner(*os.File, fs.FileInfo) {}

// noFollow is not available on this system; RemoveStaleTemp checks the
// file it opened against the name instead.
const noFollow = 0

// lockTemp does nothing on this system.
func lockTemp(*os.File) {}

// unlocked reports whether a temporary file is stale: without file locks,
// when it has not been written for an hour.
func unlocked(_ *os.File, fi fs.FileInfo) bool { return time.Since(fi.ModTime()) > time.Hour }

// renameOpenFiles says a file may be renamed while it is open; not here.
const renameOpenFiles = false
