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
	p, err := b.Wrap(Spec{Root: root, Workdir: root, ProcessLimit: 7}, []string{"/bin/sh", "-c", "echo hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	args := strings.Join(p.Args, " ")
	for _, want := range []string{
		"--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-pid", "--disable-userns",
		"--uid 65534 --gid 65534", "--ro-bind-try /usr /usr", "--tmpfs /tmp",
		"--bind " + root + " " + root, "--chdir " + root,
		"-- /usr/bin/prlimit --nproc=7:7 -- /bin/sh -c echo hi",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("arguments lack %q:\n%s", want, args)
		}
	}
	// The view is built from nothing: the host's root is not mounted.
	if strings.Contains(args, "--ro-bind / /") || strings.Contains(args, "--bind / /") {
		t.Errorf("the sandbox mounts the host's whole file system:\n%s", args)
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
