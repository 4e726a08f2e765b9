package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// concealScript reads, lists and writes the concealed directory "data".
const concealScript = "cat data/secret.txt; ls -A data; echo x > data/new; echo done"

// dataDir makes root/data holding a secret that any user may read, owned
// by the sandbox's user when the tests run as root.
func dataDir(t *testing.T, root string) string {
	t.Helper()
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "secret.txt"), "SECRET\n", 0o644)
	if os.Geteuid() == 0 {
		for _, p := range []string{data, filepath.Join(data, "secret.txt")} {
			if err := os.Chown(p, sandbox.SandboxUID, sandbox.SandboxUID); err != nil {
				t.Fatal(err)
			}
		}
	}
	return data
}

// concealing returns a runner whose commands must all run in the sandbox,
// in root through a file bridge that conceals the directory data.
func concealing(t *testing.T, root, data string) *env {
	t.Helper()
	return newEnvAt(t, root, map[string]any{"sandbox": map[string]any{"required": true}}, func(tc *tool.Context) {
		b, err := fsbridge.OpenLocal(root, fsbridge.Conceal(data))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		tc.FS = b
	})
}

// TestBubblewrapConceals: bubblewrap covers the directories the file
// bridge conceals (Toolbelt's data directory inside the workspace) with an
// empty, read-only file system, both for a command contained unasked and
// for one a person approved in the sandbox; without concealment the same
// command does read the secret (the control).
func TestBubblewrapConceals(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, data, out string) {
		t.Helper()
		listed := slices.Contains(strings.Split(out, "\n"), "secret.txt") // by ls
		if strings.Contains(out, "SECRET") || listed || !strings.Contains(out, "done") {
			t.Errorf("the command saw the concealed directory:\n%s", out)
		}
		mustNotExist(t, filepath.Join(data, "new"))
	}
	t.Run("contained", func(t *testing.T) {
		t.Parallel()
		if !canContain(t) {
			t.Skip("bubblewrap cannot contain commands here")
		}
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data := dataDir(t, root)
		b := NewManager().container(context.Background(), "", root)
		plan := b.Contain(root, root, []string{data}, []string{lookPath(t, "bash"), "-c", concealScript})
		out, _ := exec.Command(plan.Path, plan.Args...).CombinedOutput()
		check(t, data, string(out))
	})
	t.Run("sandbox", func(t *testing.T) {
		t.Parallel()
		root, _ := sandboxWorkspace(t)
		data := dataDir(t, root)
		control, _ := sandboxed(t, root, nil).exec(map[string]any{"command": "cat data/secret.txt"}, false)
		if !strings.Contains(control, "SECRET") {
			t.Fatalf("without concealment the sandbox cannot read the secret either, so the test proves nothing:\n%s", control)
		}
		e := concealing(t, root, data)
		out, info := e.exec(map[string]any{"command": concealScript}, false)
		if info.Mode != modeSandbox {
			t.Errorf("mode %q, want %q", info.Mode, modeSandbox)
		}
		check(t, data, out)
	})
	// A data directory inside a protected one (.toolbelt/data) stays
	// concealed: mounting the protected directory read-only does not show
	// it again.
	t.Run("sandbox, in a protected directory", func(t *testing.T) {
		t.Parallel()
		root, _ := sandboxWorkspace(t)
		if err := os.Mkdir(filepath.Join(root, ".toolbelt"), 0o777); err != nil {
			t.Fatal(err)
		}
		data := dataDir(t, filepath.Join(root, ".toolbelt"))
		e := concealing(t, root, data)
		out, _ := e.exec(map[string]any{"command": "cd .toolbelt && " + concealScript}, false)
		check(t, data, out)
	})
}
