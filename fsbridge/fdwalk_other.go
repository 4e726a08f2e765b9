//go:build !linux || fsbridge_osroot

package fsbridge

// openWalk opens the directory canon for a walk through [os.Root]. (On
// Linux, unless built with the tag fsbridge_osroot, walks use descriptors
// directly: see fdwalk_linux.go.)
func (l *Local) openWalk(canon string) (walkDir, error) {
	r, err := l.root.OpenRoot(canon)
	if err != nil {
		return nil, err
	}
	return rootDir{r}, nil
}
