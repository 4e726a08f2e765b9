//go:build unix

package docs_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/doctest"
)

// quickStart finds the README's quick start: the set-up commands of its
// sh block, and the console block that shows what the first one prints.
func quickStart(t *testing.T) (commands []string, shown doctest.Block) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const heading = "\n## Quick start\n"
	i := strings.Index(string(raw), heading)
	if i < 0 {
		t.Fatal("README.md has no \"## Quick start\" section")
	}
	section := string(raw)[i+len(heading):]
	section, _, _ = strings.Cut(section, "\n## ")
	m := regexp.MustCompile("(?ms)^```sh\n(.*?)^```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the quick start has no sh block of set-up commands")
	}
	for _, l := range strings.Split(strings.TrimSpace(m[1]), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		commands = append(commands, strings.TrimSpace(cmd))
	}
	blocks, err := doctest.Parse(section)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if len(b.Commands) == 1 && b.Commands[0].Script == commands[0] {
			return commands, b
		}
	}
	t.Fatalf("the quick start shows no output of %q", commands[0])
	return nil, doctest.Block{}
}

// TestQuickStart follows the README's quick start literally, as a newcomer
// would in a fresh checkout: it has exactly two set-up commands, one that
// runs Toolbelt's main job with its embedded defaults and `go test ./...`
// (which is this run). The first one, run as written by a new user (a
// fresh home directory) in a copy of the repository outside that home,
// must print what the README shows, serve MCP at the address it names, and
// stop on Ctrl-C. The scratch user's toolbelt.yaml only moves the default
// address to a free port, which the comparison names 7420 again.
func TestQuickStart(t *testing.T) {
	commands, shown := quickStart(t)
	if len(commands) != 2 || commands[0] != "go run ./cmd/toolbelt serve" || commands[1] != "go test ./..." {
		t.Fatalf("the quick start's set-up commands are %q, want exactly [go run ./cmd/toolbelt serve, go test ./...]", commands)
	}
	u := newScratch(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	config := filepath.Join(u.home, ".config", "toolbelt")
	if err := os.MkdirAll(config, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "toolbelt.yaml"), []byte("mcp:\n  addr: "+addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", commands[0])
	cmd.Dir = u.checkout
	cmd.Env = u.env(t, os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	var got []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		l := strings.TrimRight(lines.Text(), " ")
		l = strings.ReplaceAll(l, addr, "127.0.0.1:7420")
		l = strings.ReplaceAll(l, u.home, "~")
		got = append(got, l)
		if l == "Ctrl-C stops the server." {
			break
		}
	}
	if !doctest.Match(shown.Commands[0].Want, got) {
		t.Fatalf("README.md:%d: %s\nthe README shows:\n%s\nit prints:\n%s\nstderr:\n%s", shown.Line, commands[0],
			indent(shown.Commands[0].Want), indent(got), stderr.String())
	}
	// It serves MCP where it says.
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET /: %s", res.Status)
	}
	// Ctrl-C stops it.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	if err := cmd.Wait(); err != nil && ctx.Err() != nil {
		t.Fatalf("Ctrl-C did not stop the server: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(u.home, ".local", "share", "toolbelt", "toolbelt.db")); err != nil {
		t.Errorf("the state is not where the README says: %v", err)
	}
}
