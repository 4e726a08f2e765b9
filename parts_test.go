package toolbelt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestToolsOnlyWritesNothing: a root opened to list tools describes them
// as a pipeline would — memory's tools available, their store unopened —
// but writes no state and runs nothing.
func TestToolsOnlyWritesNothing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Workspace: t.TempDir(), DataDir: data, ToolsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tb.Context(tool.Identity{Owner: true, Channel: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	var unavailable []string
	tb.Registry().ResolveAll(tc, func(id string, err error) { unavailable = append(unavailable, id+": "+err.Error()) })
	for _, u := range unavailable {
		if strings.HasPrefix(u, "memory_") || strings.HasPrefix(u, "cron:") {
			t.Errorf("unavailable in a tools-only context: %s", u)
		}
	}
	if _, err := tb.Runner(tool.Identity{}); !errors.Is(err, toolbelt.ErrToolsOnly) {
		t.Errorf("Runner = %v, want ErrToolsOnly", err)
	}
	if err := tb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("listing tools made the data directory: %v", err)
	}
}

// TestOneStoreServesSeveralWorkspaces: a caller in another workspace works
// there, through that workspace's bridge, and what a person allowed always
// in one workspace is not allowed in the other.
func TestOneStoreServesSeveralWorkspaces(t *testing.T) {
	cfg, err := config.Parse("toolbelt.yaml", []byte(policyYAML))
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]int{}
	always := invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
		asked[c.Tool]++
		return invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: "test"}, nil
	})
	ping := tool.Must(tool.New("ping", "Answer pong, once a person allowed it.", func(context.Context, waitArgs, tool.Invocation) (tool.Result, error) {
		return tool.Text("pong"), nil
	}))
	ping.Meta = tool.Meta{ReadOnly: true, RequiresConfirmation: true}
	home, other := t.TempDir(), t.TempDir()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: home, DataDir: t.TempDir(), Confirm: always, Tools: []tool.Tool{ping}})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close(context.Background())
	run := func(ws, id, name, args string) {
		t.Helper()
		r, err := tb.Runner(tool.Identity{Owner: true, Channel: "test", Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		if msg := r.Run(context.Background(), tool.Call{ID: id, Name: name, Arguments: []byte(args)}); msg.IsError {
			t.Fatalf("%s in %s: %+v", name, ws, msg.Content)
		}
	}
	run(other, "o1", "write", `{"path":"a.txt","content":"x"}`)
	if _, err := os.Stat(filepath.Join(other, "a.txt")); err != nil {
		t.Fatalf("the write in the other workspace did not land there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write in the other workspace landed in the root's: %v", err)
	}
	run(other, "p1", "ping", `{"label":"a"}`)
	run(other, "p2", "ping", `{"label":"a"}`)
	run(home, "p3", "ping", `{"label":"a"}`)
	if asked["ping"] != 2 {
		t.Fatalf("asked %d times about ping, want once per workspace (allowed always in the first, asked again in the second)", asked["ping"])
	}
	if _, err := tb.Undo(context.Background(), other, "o1"); err != nil {
		t.Fatalf("undo in the other workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("undo left the file the call made: %v", err)
	}
}

// TestStateOnlyNeedsNoWorkspace: a root opened to read state or undo runs
// from anywhere, and records in the audit log.
func TestStateOnlyNeedsNoWorkspace(t *testing.T) {
	data := t.TempDir()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{DataDir: data, StateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Record(context.Background(), auditRecord("r1")); err != nil {
		t.Fatal(err)
	}
	if tb.Registry() != nil {
		t.Error("a state-only root loaded tools")
	}
	if err := tb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := records(t, data); len(got) != 1 || got[0] != "r1" {
		t.Fatalf("audit log = %v, want the record", got)
	}
}

// auditRecord is the record of a call done outside the pipeline.
func auditRecord(id string) audit.Record {
	return audit.Record{Time: time.Now(), CallID: id, Tool: "undo", Channel: "test", Arguments: []byte(`{}`)}
}

// TestNoWorkspaceOpensOnceClosing: once Close has begun, a caller in a
// workspace not yet opened is refused instead of getting a bridge nothing
// would close.
func TestNoWorkspaceOpensOnceClosing(t *testing.T) {
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Context(tool.Identity{Workspace: t.TempDir()}); !errors.Is(err, toolbelt.ErrClosed) {
		t.Fatalf("Context after Close = %v, want ErrClosed", err)
	}
}
