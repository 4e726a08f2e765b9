//go:build !linux

package fsbridge

import (
	"os"
)

// listDir lists the open directory f.
func listDir(_ *os.Root, f *os.File) ([]dirent, error) {
	entries, err := f.ReadDir(-1)
	out := make([]dirent, len(entries))
	for i, e := range entries {
		out[i] = dirent{e.Name(), e.Type()}
	}
	return out, err
}
