package shell

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a registry with the shell tools, a workspace and a runner.
type env struct {
	t      testing.TB
	root   string // the workspace, a real path
	runner *invoke.Runner
	m      *Manager
}

// newEnv returns a fresh workspace and a runner for the shell tools,
// configured with cfg (the "exec" settings), with opts after the runner's
// own (invoke.WithConfirmer replaces the person who approves everything).
// The manager is closed when the test ends.
func newEnv(t testing.TB, cfg map[string]any, opts ...invoke.Option) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newEnvAt(t, root, cfg, nil, opts...)
}

// newEnvAt is newEnv with a given workspace, and edit applied to the tool
// context.
func newEnvAt(t testing.TB, root string, cfg map[string]any, edit func(*tool.Context), opts ...invoke.Option) *env {
	t.Helper()
	reg := registry.New()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	tc := &tool.Context{Identity: tool.Identity{Workspace: root}, FSRoot: root, Config: tool.Config{}}
	if cfg != nil {
		tc.Config[ConfigKey] = cfg
	}
	if edit != nil {
		edit(tc)
	}
	// The tests are the person who approves high-risk calls.
	opts = append([]invoke.Option{invoke.WithConfirmer(invoke.AutoApprove)}, opts...)
	return &env{t: t, root: root, runner: invoke.New(reg, tc, opts...), m: m}
}

// call runs a tool through the pipeline with args (marshalled to JSON).
func (e *env) call(name string, args any) tool.ResultMessage {
	e.t.Helper()
	return e.callCtx(context.Background(), name, args)
}

func (e *env) callCtx(ctx context.Context, name string, args any) tool.ResultMessage {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.runner.Run(ctx, tool.Call{ID: "call_1", Name: name, Arguments: raw})
}

// exec runs exec and fails the test unless the result's error flag is
// wantErr.
func (e *env) exec(args map[string]any, wantErr bool) (string, sessionInfo) {
	e.t.Helper()
	msg := e.call("exec", args)
	if msg.IsError != wantErr {
		e.t.Fatalf("exec %v: isError = %v, want %v; text:\n%s", args, msg.IsError, wantErr, text(msg))
	}
	if wantErr {
		env, ok := tool.ParseEnvelope(msg.Content[0].Text)
		if !ok || env.Tool != "exec" {
			e.t.Fatalf("exec %v: the error is not in the envelope: %s", args, text(msg))
		}
		return env.Error, details(msg)
	}
	return text(msg), details(msg)
}

// process runs the process tool and fails the test on an error result.
func (e *env) process(args map[string]any) (string, sessionInfo) {
	e.t.Helper()
	msg := e.call("process", args)
	if msg.IsError {
		e.t.Fatalf("process %v failed:\n%s", args, text(msg))
	}
	return text(msg), details(msg)
}

// text joins a result's text blocks.
func text(msg tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range msg.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// details returns a result's details as a sessionInfo, also when the
// pipeline has wrapped them with its notes (zero when they are something
// else).
func details(msg tool.ResultMessage) sessionInfo {
	switch d := msg.Details.(type) {
	case sessionInfo:
		return d
	case map[string]any:
		in, _ := d["details"].(sessionInfo)
		return in
	}
	return sessionInfo{}
}

// groupGone reports whether process group pgid has no live process left
// now, and none at all once init has reaped the orphans (which some systems
// do lazily): kill(-pgid, 0) fails with ESRCH.
func groupGone(pgid int) bool {
	if groupAlive(pgid) {
		return false
	}
	deadline := time.Now().Add(30 * time.Second)
	for !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// mustNotExist fails the test when path exists.
func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists (err %v): the refused command ran", path, err)
	}
}

// writeFile writes a file, failing the test on error.
func writeFile(t testing.TB, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// readFile reads a file, failing the test on error.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
