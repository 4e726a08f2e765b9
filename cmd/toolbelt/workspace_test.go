package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceIsChosen: started in /, in the home folder or above it,
// without a workspace chosen, a command that works in a workspace is
// refused with how to choose one; chosen (flag, TOOLBELT_WORKSPACE, the
// config's workspace:) the same folder is taken. serve and mcp say on stderr
// which workspace they serve.
func TestWorkspaceIsChosen(t *testing.T) {
	t.Parallel()
	above := t.TempDir()
	home := filepath.Join(above, "me")
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "HOME="+home, "TOOLBELT_WORKSPACE=")
	const how = "Choose one: cd into a project folder, or pass --workspace DIR, or set TOOLBELT_WORKSPACE, or workspace: in toolbelt.yaml"
	for _, tc := range []struct{ dir, why string }{
		{"/", "is the root of the file system"},
		{home, "is your home folder"},
		{above, "is above your home folder"},
	} {
		for _, args := range [][]string{
			{"call", "ls", "--args", `{"path":"."}`},
			{"list"},
			{"mcp"},
			{"serve", "--addr", "127.0.0.1:0"},
		} {
			r := runCLIWith(t, env, tc.dir, "", args...).expect(t, 2)
			if want := "toolbelt: the current directory " + tc.dir + " " + tc.why + ": "; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, how) {
				t.Errorf("%s in %s: stderr %q lacks %q and how to choose", args[0], tc.dir, r.stderr, want)
			}
		}
	}
	// Chosen, the home folder is the workspace; below it, the current
	// directory is.
	config := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(config, []byte("workspace: "+home+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		dir  string
		args []string
		ws   string
	}{
		{nil, home, []string{"mcp", "--workspace", home}, home},
		{[]string{"TOOLBELT_WORKSPACE=" + home}, home, []string{"mcp"}, home},
		{nil, "/", []string{"--config", config, "mcp"}, home},
		{nil, project, []string{"mcp"}, project},
	} {
		r := runCLIWith(t, append(env, tc.env...), tc.dir, "", tc.args...).expect(t, 0)
		if want := "toolbelt: workspace " + tc.ws + "\n"; !strings.Contains(r.stderr, want) {
			t.Errorf("%v %v in %s: stderr %q lacks %q", tc.env, tc.args, tc.dir, r.stderr, want)
		}
	}
	out, _ := serveBannerIn(t, project, os.Args[0], env, "--addr", "127.0.0.1:0")
	if want := "  workspace  " + project + "\n"; !strings.Contains(out, want) {
		t.Errorf("serve's banner lacks %q:\n%s", want, out)
	}
}

// TestUnchosen: which current directories are not taken for a workspace.
func TestUnchosen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dir, home, want string }{
		{"/", "/home/me", "the root of the file system"},
		{"/", "", "the root of the file system"},
		{"/home/me", "/home/me", "your home folder"},
		{"/home", "/home/me", "above your home folder"},
		{"/home/me/src", "/home/me", ""},
		{"/home/other", "/home/me", ""},
		{"/home/me", "", ""},
	} {
		if got := unchosen(tc.dir, tc.home); got != tc.want {
			t.Errorf("unchosen(%q, %q) = %q, want %q", tc.dir, tc.home, got, tc.want)
		}
	}
}
