package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// protection is a Protection for the tests: names listed, matched by their
// last element or as a directory prefix.
type protection []string

func (p protection) Match(rel string) bool {
	for _, n := range p {
		if rel == n || strings.HasPrefix(rel, n+"/") || strings.HasSuffix(rel, "/"+n) || strings.Contains(rel, "/"+n+"/") {
			return true
		}
	}
	return false
}

func (p protection) Names() []string { return p }

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

// TestHold: a protected name that does not exist is held by a placeholder
// while any sandbox of the workspace runs, and removed when the last one
// ends; names that exist, or lie behind a link, are left alone.
func TestHold(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mkdirs(t, root, ".git", "outside")
	if err := os.Symlink("outside", filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	p := protection{".git", "toolbelt.yaml", ".github/copilot-instructions.md", ".github/instructions", "linked/x"}

	first, err := hold(root, p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := hold(root, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"toolbelt.yaml", ".github"} {
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil || fi.Mode() != placeholderMode {
			t.Errorf("%s is not held: %v %v", name, fi, err)
		}
	}
	// One placeholder holds .github for both names below it, and nothing is
	// created through the link.
	if got := entries(t, filepath.Join(root, ".github")); len(got) != 0 {
		t.Errorf(".github holds %v, want nothing", got)
	}
	if got := entries(t, filepath.Join(root, "outside")); len(got) != 0 {
		t.Errorf("a placeholder was made through a link: %v", got)
	}

	first.release()
	first.release() // again: nothing
	if _, err := os.Lstat(filepath.Join(root, "toolbelt.yaml")); err != nil {
		t.Errorf("a placeholder was removed while another sandbox still runs: %v", err)
	}
	second.release()
	got := entries(t, root)
	slices.Sort(got)
	if want := []string{".git", "linked", "outside"}; !slices.Equal(got, want) {
		t.Errorf("after the last sandbox the workspace holds %v, want %v", got, want)
	}
}

// TestHoldTidiesLeftovers: placeholders a killed process left are removed
// the next time, unless something was put in them.
func TestHoldTidiesLeftovers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	// .github holds a placeholder another process made in it while it
	// was being made.
	for _, name := range []string{".cursor", ".vscode", ".github", ".github/instructions"} {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{".cursor", ".vscode", ".github/instructions", ".github"} {
		if err := os.Chmod(filepath.Join(root, name), placeholderMode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".vscode", "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, ".vscode"), placeholderMode); err != nil {
		t.Fatal(err)
	}
	h, err := hold(root, protection{".cursor", ".vscode", ".github/instructions"})
	if err != nil {
		t.Fatal(err)
	}
	h.release()
	for _, name := range []string{".cursor", ".github"} {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			t.Errorf("the leftover placeholder %s was not removed", name)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".vscode", "settings.json")); err != nil {
		t.Errorf("a placeholder with a file in it was removed: %v", err)
	}
}

// TestSurvey: every protected path is found at any depth, once, at its
// highest; links lead to what they protect inside the workspace; sockets
// are found everywhere but in concealed directories.
func TestSurvey(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkdirs(t, root, ".git/hooks", "vendor/x/.git", "src", "data", "real")
	for _, f := range []string{"toolbelt.yaml", "src/toolbelt.yaml", "real/AGENTS.md", "src/main.go"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("real/AGENTS.md", filepath.Join(root, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	var sockets []string
	for _, s := range []string{"src/a.sock", ".git/fsmonitor.ipc", "data/hidden.sock"} {
		p := filepath.Join(root, s)
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Skipf("cannot make a Unix socket here: %v", err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		if s != "data/hidden.sock" {
			sockets = append(sockets, p)
		}
	}
	c := survey(root, protection{".git", "toolbelt.yaml", "CLAUDE.md"}, []string{filepath.Join(root, "data")})
	var want []string
	for _, p := range []string{".git", "real/AGENTS.md", "src/toolbelt.yaml", "toolbelt.yaml", "vendor/x/.git"} {
		want = append(want, filepath.Join(root, p))
	}
	slices.Sort(c.protected)
	if !slices.Equal(c.protected, want) {
		t.Errorf("protected:\n got %v\nwant %v", c.protected, want)
	}
	slices.Sort(c.sockets)
	slices.Sort(sockets)
	if !slices.Equal(c.sockets, sockets) {
		t.Errorf("sockets:\n got %v\nwant %v", c.sockets, sockets)
	}
}
