package docs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// scratch is a new user of Toolbelt, as the examples assume one: a home
// directory holding nothing of this machine's user, with the XDG
// directories under it, and a copy of the repository outside it, as a
// fresh clone would be, so no example can depend on where a checkout lives.
type scratch struct {
	// work holds the rest; tmp is the temp directory.
	work, home, tmp string
	// checkout is the repository's copy, $WORK/toolbelt, as `git clone`
	// names it.
	checkout string
}

// newScratch makes a scratch user in a test's temp directory.
func newScratch(t *testing.T) scratch {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := scratch{work: work, home: filepath.Join(work, "home"), tmp: filepath.Join(work, "tmp"), checkout: filepath.Join(work, "toolbelt")}
	// Telemetry off: the go command would otherwise leave an upload
	// process behind, writing in the scratch home as it is removed.
	telemetry := filepath.Join(s.home, ".config", "go", "telemetry")
	for _, d := range []string{s.home, s.tmp, telemetry} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(telemetry, "mode"), []byte("off"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyCheckout(t, s.checkout)
	return s
}

// env is the environment of a command the scratch user runs, with path
// as PATH and the go command's caches shared with the test's.
func (s scratch) env(t *testing.T, path string) []string {
	t.Helper()
	caches, err := goCaches()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{
		"PATH=" + path, "HOME=" + s.home, "TMPDIR=" + s.tmp, "USER=you", "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"), "XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(s.home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"TERM=dumb", "NO_COLOR=1", "TZ=UTC", "GOTOOLCHAIN=local",
	}, caches...)
}

// goCaches returns, once, GOCACHE, GOMODCACHE and GOPATH as the test's go
// command has them (NAME=VALUE), so the scratch user's go command builds
// from what is already there instead of the network.
var goCaches = sync.OnceValues(func() ([]string, error) {
	names := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	values := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(values) != len(names) {
		return nil, fmt.Errorf("go env %s printed %q", strings.Join(names, " "), out)
	}
	for i, n := range names {
		values[i] = n + "=" + values[i]
	}
	return values, nil
})

// repoFiles lists, once, the files a clone of the repository would hold
// if what is being edited were committed: the tracked files and the new
// ones git does not ignore, as the working tree has them. Not a clone of
// HEAD: the pages and the CLI under test are the working tree's, and their
// examples must run against the same tree.
var repoFiles = sync.OnceValues(func() ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files (the examples run in a copy of what a clone holds, so they need a git checkout): %v\n%s", err, stderr.Bytes())
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), nil
})

// copyCheckout copies the repository's files (repoFiles) to dst.
func copyCheckout(t *testing.T, dst string) {
	t.Helper()
	files, err := repoFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range files {
		src := filepath.Join(root, rel)
		info, err := os.Stat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, b, info.Mode().Perm()|0o200); err != nil {
			t.Fatal(err)
		}
	}
}
