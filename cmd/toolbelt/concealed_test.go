package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/testlocale"
)

// TestShellCannotReadConcealedData: with a workspace that holds the data
// directory (as the home directory holds the default one), the file tools
// conceal it, and so must the shell. Unasked commands that would read it
// — by absolute or relative path, from inside it, or recursively from the
// workspace root — need approval, contained or allowlisted (where every
// command does: see TestShellDataInWorkspaceNeedsContainment), and nothing
// of the audit log reaches their output. (That bubblewrap covers the
// directory is tested in tools/shell: TestBubblewrapConceals.)
func TestShellCannotReadConcealedData(t *testing.T) {
	t.Parallel()
	const marker = "CONCEALED-MARKER-7f3a"
	for _, mode := range []string{"contained", "allowlisted"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ws := attackWorkspace(t, nil)
			data := filepath.Join(ws, ".local", "share", "toolbelt")
			env := append(cliEnvironment(t), "TOOLBELT_DATA="+data)
			var global []string
			if mode == "allowlisted" {
				global = []string{"--config", writeConfig(t, "tools:\n  exec:\n    sandbox:\n      bwrap: /nonexistent/bwrap\n")}
			}
			call := func(args map[string]any) cliResult {
				t.Helper()
				raw, err := json.Marshal(args)
				if err != nil {
					t.Fatal(err)
				}
				argv := append(append([]string{}, global...), "call", "exec", "--workspace", ws, "--args", string(raw))
				return runCLIWith(t, env, "", "", argv...)
			}
			// The audit log now holds the marker, in the data directory.
			runCLIWith(t, env, "", "", append(global, "call", "read", "--workspace", ws, "--args", `{"path":"`+marker+`.txt"}`)...).expect(t, 1)
			if !treeContains(t, data, marker) {
				t.Fatalf("the audit log in %s does not hold %q: the test proves nothing", data, marker)
			}
			// A control: contained, the shell does run unasked in this
			// workspace.
			if r := call(map[string]any{"command": "cat a.txt"}); mode == "contained" && (r.code != 0 || r.stdout != "alpha\n") {
				t.Fatalf("cat a.txt: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			pattern := strings.TrimSuffix(marker, "a") + "[a]" // does not match itself
			for _, c := range []map[string]any{
				{"command": "cat " + filepath.Join(data, "toolbelt.db")},
				{"command": "cat .local/share/toolbelt/toolbelt.db"},
				{"command": "grep -r '" + pattern + "' ."},
				{"command": "grep -r '" + pattern + "' .local"},
				{"command": "ls -la .local/share/toolbelt"},
				{"command": "find . -name toolbelt.db"},
				{"command": "ls", "workdir": ".local/share/toolbelt"},
				{"command": "cat toolbelt.db", "workdir": ".local/share/toolbelt"},
			} {
				r := call(c)
				out := r.stdout + r.stderr
				if r.code == 0 || !strings.Contains(out, "approv") {
					t.Errorf("%v ran without approval (exit %d):\n%s", c, r.code, out)
				}
				if strings.Contains(out, marker) || strings.Contains(out, "toolbelt.db\n") {
					t.Errorf("%v showed the data directory:\n%s", c, out)
				}
			}
		})
	}
}

// TestShellDataInWorkspaceNeedsContainment: with the data directory inside
// the workspace only bubblewrap hides it from a command, so without it
// (allowlisted, on the host) every command needs approval — no wrong
// check can then reach the data — while contained ones run. The attack of
// issue 25: with the workspace at the home directory and a collating
// locale, `grep -rv .[l~]*` was checked with .local as grep's pattern and
// .~a as its file, and run by bash with .~a as the pattern and .local as a
// tree to read.
func TestShellDataInWorkspaceNeedsContainment(t *testing.T) {
	t.Parallel()
	loc := testlocale.Collating(t)
	for _, mode := range []string{"contained", "allowlisted"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ws := attackWorkspace(t, nil)
			data := filepath.Join(ws, ".local", "share", "toolbelt")
			if err := os.MkdirAll(data, 0o755); err != nil {
				t.Fatal(err)
			}
			for p, content := range map[string]string{filepath.Join(data, "planted.txt"): "TOPSECRET\n", filepath.Join(ws, ".~a"): "x\n"} {
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			a := cliAttacker{ws: ws, env: []string{"TOOLBELT_DATA=" + data, "LANG=" + loc, "LC_ALL=" + loc}}
			if mode == "allowlisted" {
				a.config = writeConfig(t, "tools:\n  exec:\n    sandbox:\n      bwrap: /nonexistent/bwrap\n")
			}
			for c, want := range map[string]string{"cat a.txt": "alpha", "grep -rv .[l~]*": "x", "grep -rlv .[l~]*": ".~a"} {
				out, isErr := a.call(t, "exec", map[string]any{"command": c})
				harmless(t, c, out)
				switch {
				case mode == "allowlisted":
					blocked(t, c, out, isErr)
				case isErr || !strings.Contains(out, want):
					t.Errorf("%s did not run contained:\n%s", c, out)
				}
			}
		})
	}
}

// treeContains says whether a file below dir holds s.
func treeContains(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return err
		}
		b, err := os.ReadFile(p)
		found = err == nil && strings.Contains(string(b), s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
