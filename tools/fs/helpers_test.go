package fs_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// canaryText is the content of the file outside the workspace; its marker
// must never appear in a result unless the call itself carried it.
const (
	canaryText   = "CANARY " + canaryMarker
	canaryMarker = "secret-7f3a9c"
)

// leaked reports whether a result shows the canary's content that the call
// did not send itself.
func leaked(got string, args any) bool {
	raw, _ := json.Marshal(args)
	return strings.Contains(got, canaryMarker) && !strings.Contains(string(raw), canaryMarker)
}

// env is a workspace with the file tools, run through the pipeline.
type env struct {
	kind string
	b    fsbridge.Bridge
	r    *invoke.Runner
	// For local workspaces: the root, a directory beside it (outside) and
	// the canary file in it.
	root, outside, canary string
}

// newRunner returns a pipeline runner over the file tools for tc.
func newRunner(t testing.TB, tc *tool.Context) *invoke.Runner {
	t.Helper()
	reg := registry.New()
	if err := tbfs.Register(reg); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, tc)
}

func localEnv(t testing.TB, opts ...fsbridge.Option) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{kind: "local", root: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{e.root, e.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.canary = filepath.Join(e.outside, "canary.txt")
	if err := os.WriteFile(e.canary, []byte(canaryText), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := fsbridge.OpenLocal(e.root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e.b = l
	e.r = newRunner(t, &tool.Context{Identity: tool.Identity{Workspace: e.root}, FSRoot: e.root, FS: l})
	return e
}

func memoryEnv(t testing.TB) *env {
	t.Helper()
	m, err := fsbridge.NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	return &env{kind: "memory", b: m, r: newRunner(t, &tool.Context{FS: m})}
}

// bothEnvs runs f on a local and an in-memory workspace.
func bothEnvs(t *testing.T, f func(t *testing.T, e *env)) {
	for _, mk := range []func(testing.TB, ...fsbridge.Option) *env{
		localEnv,
		func(t testing.TB, _ ...fsbridge.Option) *env { return memoryEnv(t) },
	} {
		e := mk(t)
		t.Run(e.kind, func(t *testing.T) {
			t.Parallel()
			f(t, e)
		})
	}
}

// call runs one call of the tool name with args (marshalled to JSON).
func (e *env) call(t testing.TB, name string, args any) tool.ResultMessage {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return e.r.Run(context.Background(), tool.Call{ID: "call_1", Name: name, Arguments: raw})
}

// ok runs a call that must succeed and returns its text.
func (e *env) ok(t testing.TB, name string, args any) string {
	t.Helper()
	msg := e.call(t, name, args)
	if msg.IsError {
		t.Fatalf("%s %v failed: %s", name, args, clip(text(msg)))
	}
	return text(msg)
}

// fails runs a call that must fail and returns its text.
func (e *env) fails(t testing.TB, name string, args any) string {
	t.Helper()
	msg := e.call(t, name, args)
	if !msg.IsError {
		t.Fatalf("%s %v succeeded: %s", name, args, clip(text(msg)))
	}
	return text(msg)
}

// put creates files directly, not through the tools (protected paths too),
// making their directories.
func (e *env) put(t testing.TB, files map[string]string) {
	t.Helper()
	if m, ok := e.b.(*fsbridge.Memory); ok {
		fsys := fstest.MapFS{}
		for p, content := range files {
			fsys[p] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
		}
		if err := m.Load(fsys); err != nil {
			t.Fatal(err)
		}
		return
	}
	for p, content := range files {
		full := filepath.Join(e.root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// get returns a file's content through the bridge.
func (e *env) get(t testing.TB, p string) string {
	t.Helper()
	b, err := e.b.ReadFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tree returns every path in the workspace with the content of its files.
func (e *env) tree(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	ctx := context.Background()
	err := e.b.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[p] = "/"
		case d.Type().IsRegular():
			b, err := e.b.ReadFile(ctx, p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		default:
			out[p] = "@"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// text joins the text blocks of a result message; of an error envelope, it
// returns the error.
func text(msg tool.ResultMessage) string {
	var parts []string
	for _, c := range msg.Content {
		if c.Type == tool.TextContent {
			parts = append(parts, c.Text)
		}
	}
	all := strings.Join(parts, "\n")
	var env tool.Envelope
	if msg.IsError && json.Unmarshal([]byte(all), &env) == nil && env.Status != "" {
		return env.Error + env.Reason + env.Message
	}
	return all
}

// outsideIntact fails the test when the canary changed or anything appeared
// beside it.
func (e *env) outsideIntact(t testing.TB) {
	t.Helper()
	if e.kind != "local" {
		return
	}
	b, err := os.ReadFile(e.canary)
	if err != nil || string(b) != canaryText {
		t.Fatalf("the canary outside the workspace changed: %q, %v", b, err)
	}
	entries, err := os.ReadDir(e.outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if !slices.Equal(names, []string{"canary.txt"}) {
		t.Fatalf("files appeared outside the workspace: %v", names)
	}
}

func contains(t testing.TB, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%q\ndoes not contain %q", clip(got), w)
		}
	}
}

// clip shortens long text in failure messages to its start and end.
func clip(s string) string {
	if len(s) <= 600 {
		return s
	}
	return s[:300] + " … " + s[len(s)-300:]
}
