// Package realpath resolves paths as the file system will see them, links
// followed even where they lead to what does not exist yet, so that
// checks of where a path lies cannot be dodged with a symbolic link.
package realpath

import (
	"os"
	"path/filepath"
	"strings"
)

// Within says whether path is root or below it, after following the
// symbolic links of both.
func Within(path, root string) bool {
	rel, err := filepath.Rel(Resolve(root), Resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Resolve follows the symbolic links of path as far as it exists, dangling
// ones included: a link to a directory not made yet still leads there.
func Resolve(path string) string {
	path = filepath.Clean(path)
	for range 40 {
		existing, rest := path, ""
		for {
			if _, err := os.Lstat(existing); err == nil {
				break
			}
			parent := filepath.Dir(existing)
			if parent == existing {
				return path
			}
			rest = filepath.Join(filepath.Base(existing), rest)
			existing = parent
		}
		if real, err := filepath.EvalSymlinks(existing); err == nil {
			return filepath.Join(real, rest)
		}
		// existing is a link to something that does not exist (yet).
		target, err := os.Readlink(existing)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(existing), target)
		}
		path = filepath.Join(target, rest)
	}
	return path
}
