package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFindMissing(t *testing.T) {
	t.Parallel()
	_, err := Find(context.Background(), filepath.Join(t.TempDir(), "bwrap"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "not run") {
		t.Fatalf("Find of a missing bwrap: %v, want an error saying how to install it", err)
	}
}

func TestHideable(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "home", "me", "ws")
	for _, d := range []string{root, filepath.Join(base, "other"), filepath.Join(root, "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "other"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, want string
	}{
		{filepath.Join(base, "other"), filepath.Join(base, "other")},
		{filepath.Join(base, "link"), filepath.Join(base, "other")}, // covered at its real path
		{filepath.Join(base, "home", "me"), ""},                     // contains the workspace
		{root, ""},                                                  // is the workspace
		{filepath.Join(root, "inner"), ""},                          // inside the workspace
		{filepath.Join(base, "missing"), ""},
		{filepath.Join(base, "file"), ""},
		{"/", ""},
		{"relative", ""},
	}
	for _, tt := range tests {
		got, ok := hideable(tt.dir, root)
		if got != tt.want && ok || ok != (tt.want != "") {
			t.Errorf("hideable(%q) = %q, %v; want %q", tt.dir, got, ok, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(root, SandboxUID, SandboxUID); err != nil {
			t.Fatal(err)
		}
	}
	b := &Bwrap{path: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit", disableUserns: true}
	home := t.TempDir()
	p, err := b.Wrap(Spec{Root: root, Workdir: root, ProcessLimit: 7, Hide: []string{home}}, []string{"/bin/sh", "-c", "echo hi"})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(p.Args, " ")
	for _, want := range []string{
		"--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-pid", "--disable-userns",
		"--uid 65534 --gid 65534", "--ro-bind / /", "--tmpfs /tmp", "--tmpfs " + home,
		"--bind " + root + " " + root, "--chdir " + root,
		"-- /usr/bin/prlimit --nproc=7:7 -- /bin/sh -c echo hi",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("arguments lack %q:\n%s", want, args)
		}
	}
	// The writable workspace is mounted after everything it might sit under.
	if i, j := slices.Index(p.Args, "--bind"), slices.Index(p.Args, "/tmp"); i < j {
		t.Errorf("the workspace is bound before /tmp is replaced:\n%s", args)
	}
	if os.Geteuid() == 0 && (p.Credential == nil || p.Credential.Uid != SandboxUID) {
		t.Errorf("as root the sandbox runs as %+v, want the workspace's owner", p.Credential)
	}
	if os.Geteuid() != 0 && p.Credential != nil {
		t.Errorf("as a user the sandbox changes credentials to %+v", p.Credential)
	}
	if p.Env["HOME"] != "/tmp" {
		t.Errorf("HOME = %q, want the private /tmp", p.Env["HOME"])
	}
	if _, err := b.Wrap(Spec{Root: root, Workdir: root}, []string{"true"}); err == nil {
		t.Error("Wrap accepted a process limit of 0")
	}
}
