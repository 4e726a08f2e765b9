package shell

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// sandboxWorkspace returns a workspace a sandboxed command can use, or
// skips the test when bubblewrap is missing or cannot work here. When the
// tests run as root the workspace is given to "nobody": sandboxed commands
// run as the workspace's owner and never as root.
func sandboxWorkspace(t testing.TB) (root, base string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed, so the sandbox cannot be tested: apt-get install bubblewrap")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(root, sandbox.SandboxUID, sandbox.SandboxUID); err != nil {
			t.Fatal(err)
		}
		// The workspace's owner must be able to reach it.
		for _, dir := range []string{base, filepath.Dir(base)} {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := sandbox.Find(context.Background(), "")
	if err == nil {
		err = b.Check(context.Background(), sandbox.Spec{Root: root, Workdir: root, ProcessLimit: 64})
	}
	if err != nil {
		t.Skipf("bubblewrap cannot create its sandbox here: %v", err)
	}
	return root, base
}

// sandboxed returns a runner whose commands must all run in the sandbox.
func sandboxed(t testing.TB, root string, extra map[string]any) *env {
	cfg := map[string]any{"sandbox": map[string]any{"required": true}, "killGraceMs": 300}
	for k, v := range extra {
		cfg[k] = v
	}
	return newEnvAt(t, root, cfg, nil)
}

// canary is a world-writable file outside the workspace.
type canary struct{ dir, path string }

func newCanary(t *testing.T, dir string) canary {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	c := canary{dir: dir, path: filepath.Join(dir, "canary")}
	writeFile(t, c.path, "original", 0o666)
	if err := os.Chmod(c.path, 0o666); err != nil {
		t.Fatal(err)
	}
	return c
}

// intact fails the test if the canary changed or a file appeared beside it.
func (c canary) intact(t *testing.T) {
	t.Helper()
	if got := readFile(t, c.path); got != "original" {
		t.Errorf("canary %s changed to %q", c.path, got)
	}
	mustNotExist(t, filepath.Join(c.dir, "new"))
}

func TestSandboxConfinesWrites(t *testing.T) {
	t.Parallel()
	root, base := sandboxWorkspace(t)
	// One canary beside the workspace (under /tmp, which the sandbox
	// replaces), one in the source tree (read-only in the sandbox).
	tmpCanary := newCanary(t, filepath.Join(base, "outside"))
	repoDir, err := os.MkdirTemp(".", ".sandbox-canary-")
	if err != nil {
		t.Fatal(err)
	}
	repoDir, _ = filepath.Abs(repoDir)
	t.Cleanup(func() { _ = os.RemoveAll(repoDir) })
	repoCanary := newCanary(t, repoDir)

	e := sandboxed(t, root, nil)
	script := func(c canary) string {
		return fmt.Sprintf("echo pwned > %[1]s/canary; echo pwned > %[1]s/new; rm -f %[1]s/canary; echo done", c.dir)
	}
	for _, c := range []canary{tmpCanary, repoCanary} {
		got, info := e.exec(map[string]any{"command": script(c)}, false)
		if !info.Sandboxed || !strings.HasSuffix(got, "done") {
			t.Fatalf("sandboxed run: %q %+v", got, info)
		}
		c.intact(t)
	}
	// Where the source tree is visible (not under /tmp or the home
	// directory, which the sandbox hides), it is read-only.
	got, _ := e.exec(map[string]any{"command": "test -d " + repoCanary.dir + " && { " + script(repoCanary) + "; }"}, false)
	if got != "(Command exited with code 1)" && !strings.Contains(got, "Read-only file system") {
		t.Errorf("writing to the source tree: %q, want a read-only file system", got)
	}
	got, _ = e.exec(map[string]any{"command": "touch /etc/toolbelt-canary /usr/toolbelt-canary; echo ok > inside.txt; id -u"}, false)
	mustNotExist(t, "/etc/toolbelt-canary")
	mustNotExist(t, "/usr/toolbelt-canary")
	if content := readFile(t, filepath.Join(root, "inside.txt")); content != "ok\n" {
		t.Errorf("the workspace is not writable in the sandbox: %q (output %q)", content, got)
	}
	if !strings.HasSuffix(got, fmt.Sprint(sandbox.SandboxUID)) {
		t.Errorf("the sandboxed command does not run as an unprivileged user: %q", got)
	}

	// Without the sandbox the same command does reach the canary, so the
	// checks above can fail.
	plain := newEnvAt(t, root, nil, nil)
	plain.exec(map[string]any{"command": script(repoCanary)}, false)
	if _, err := os.Stat(repoCanary.path); err == nil {
		t.Error("the unsandboxed control run did not remove the canary")
	}
}

func TestSandboxHidesRunAndHome(t *testing.T) {
	t.Parallel()
	root, _ := sandboxWorkspace(t)
	home, err := os.UserHomeDir()
	if err != nil || home == "/" {
		t.Skip("the server user has no home directory to hide")
	}
	for _, dir := range []string{"/run", home} {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			continue // nothing to show hidden
		}
		e := sandboxed(t, root, nil)
		got, _ := e.exec(map[string]any{"command": "ls -A " + dir + " 2>/dev/null | wc -l"}, false)
		if got != "0" {
			t.Errorf("%s shows %s entries in the sandbox, want none (it has %d)", dir, got, len(entries))
		}
	}
}

func TestSandboxNoNetwork(t *testing.T) {
	t.Parallel()
	root, _ := sandboxWorkspace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 10)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			_ = c.Close()
		}
	})
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", ln.Addr().(*net.TCPAddr).Port)

	e := sandboxed(t, root, nil)
	got, info := e.exec(map[string]any{"command": connect}, false)
	if strings.Contains(got, "connected") || info.ExitCode == nil || *info.ExitCode == 0 {
		t.Errorf("sandboxed connection: %q %+v, want a failure", got, info)
	}
	select {
	case <-accepted:
		t.Fatal("the listener accepted a connection from the sandbox")
	default:
	}

	plain := newEnvAt(t, root, nil, nil)
	if got, _ := plain.exec(map[string]any{"command": connect}, false); got != "connected" {
		t.Fatalf("unsandboxed control: %q", got)
	}
	<-accepted
}

func TestSandboxProcessLimit(t *testing.T) {
	t.Parallel()
	root, _ := sandboxWorkspace(t)
	e := sandboxed(t, root, map[string]any{"sandbox": map[string]any{"required": true, "processLimit": 32}})

	// First a harmless check that the limit holds, before the fork bomb.
	got, _ := e.exec(map[string]any{"command": "sh -c 'for i in $(seq 1 64); do sleep 30 & done; echo end'"}, false)
	if !strings.Contains(got, "Cannot fork") {
		t.Fatalf("64 processes started under a limit of 32: %q", got)
	}

	_, bomb := e.exec(map[string]any{
		"command":    "bomb() { bomb | bomb & }; bomb; sleep 3600",
		"background": true, "timeout": 5,
	}, false)
	// The server keeps answering while the bomb runs.
	alive, _ := e.exec(map[string]any{"command": "echo alive"}, false)
	if alive != "alive" {
		t.Errorf("a call during the fork bomb: %q", alive)
	}
	poll, fin := e.process(map[string]any{"action": "poll", "sessionId": bomb.SessionID, "timeout": 120_000})
	if fin.Status != "timeout" || !strings.Contains(poll, "Resource temporarily unavailable") {
		t.Errorf("fork bomb: status %q, output %q", fin.Status, textclip.Clip(poll, 300))
	}
	if !groupGone(bomb.PID) {
		t.Errorf("the fork bomb's process group %d survived", bomb.PID)
	}
}

func TestSandboxRequestOnlyTightens(t *testing.T) {
	t.Parallel()
	root, _ := sandboxWorkspace(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	required := sandboxed(t, root, nil)
	optional := newEnvAt(t, root, nil, nil)
	fromContext := newEnvAt(t, root, nil, func(tc *tool.Context) { tc.Sandboxed = true })
	tests := []struct {
		name string
		e    *env
		args map[string]any
		want string
	}{
		{"required, call says false", required, map[string]any{"command": "hostname", "sandbox": false}, "sandbox"},
		{"optional, call asks", optional, map[string]any{"command": "hostname", "sandbox": true}, "sandbox"},
		{"optional, call does not ask", optional, map[string]any{"command": "hostname"}, host},
		{"context sandboxed", fromContext, map[string]any{"command": "hostname", "sandbox": false}, "sandbox"},
		{"pty in the sandbox", required, map[string]any{"command": "test -t 1 && hostname", "pty": true}, "sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, info := tt.e.exec(tt.args, false)
			if got != tt.want || info.Sandboxed != (tt.want == "sandbox") {
				t.Errorf("hostname %q sandboxed %v, want %q", got, info.Sandboxed, tt.want)
			}
		})
	}
}

func TestSandboxFailsClosed(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string]any{"bwrap": "/nonexistent/bwrap"}
	tests := []struct {
		name string
		cfg  map[string]any
		edit func(*tool.Context)
		args map[string]any
	}{
		{"required by configuration", map[string]any{"sandbox": map[string]any{"required": true, "bwrap": "/nonexistent/bwrap"}}, nil, nil},
		{"asked by the call", map[string]any{"sandbox": missing}, nil, map[string]any{"sandbox": true}},
		{"required by the context", map[string]any{"sandbox": missing}, func(tc *tool.Context) { tc.Sandboxed = true }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvAt(t, root, tt.cfg, tt.edit)
			args := map[string]any{"command": "touch ran", "background": true}
			for k, v := range tt.args {
				args[k] = v
			}
			msg := e.call("exec", args)
			got := text(msg)
			if !msg.IsError || !strings.Contains(got, "bubblewrap") || !strings.Contains(got, "apt-get install bubblewrap") || !strings.Contains(got, "not run") {
				t.Errorf("isError=%v text %q, want a refusal saying how to install bubblewrap", msg.IsError, got)
			}
			mustNotExist(t, filepath.Join(root, "ran"))
			list, _ := e.process(map[string]any{"action": "list"})
			if !strings.HasPrefix(list, "No sessions.") {
				t.Errorf("a session was started: %q", list)
			}
		})
	}
}

func TestSandboxRefusesRootOwnedWorkspace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only a server running as root can meet a root-owned workspace it must not run as")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := sandboxed(t, root, nil)
	msg := e.call("exec", map[string]any{"command": "touch ran"})
	if !msg.IsError || !strings.Contains(text(msg), "belongs to root") || !strings.Contains(text(msg), "chown") {
		t.Errorf("isError=%v text %q, want a refusal", msg.IsError, text(msg))
	}
	mustNotExist(t, filepath.Join(root, "ran"))
}
