package toolbelt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

type release struct {
	Version string `json:"version"`
}

// releaseTool makes "release", which sets the version written in file
// (outside any workspace: nothing the journal's file undo would see) and
// keeps the version before as its undo data; its undo step puts it back.
func releaseTool(t *testing.T, file string) tool.Tool {
	rel := tool.Must(tool.New("release", "Release a version.", func(_ context.Context, in release, _ tool.Invocation) (tool.Result, error) {
		before, _ := os.ReadFile(file)
		if err := os.WriteFile(file, []byte(in.Version), 0o644); err != nil {
			return tool.Result{}, err
		}
		res := tool.Textf("released %s", in.Version)
		res.Undo = release{Version: string(before)}
		return res, nil
	}))
	rel.Undo = tool.UndoWith(func(_ context.Context, prev release, _ tool.Invocation) (tool.Result, error) {
		if err := os.WriteFile(file, []byte(prev.Version), 0o644); err != nil {
			return tool.Result{}, err
		}
		return tool.Textf("back to %s", prev.Version), nil
	})
	return rel
}

// reopen opens a second root on the same workspace and data directory,
// with yaml for its configuration.
func reopen(t *testing.T, yaml, ws, data string, tools ...tool.Tool) *toolbelt.Toolbelt {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: data, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	return tb
}

func undoStep(t *testing.T, tb *toolbelt.Toolbelt, callID string) (tool.ResultMessage, error) {
	t.Helper()
	r, err := tb.Runner(tool.Identity{Channel: "test", Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	return tb.UndoStep(context.Background(), r, "", callID)
}

func TestUndoStepRunsFromASecondRootThroughThePipeline(t *testing.T) {
	file := filepath.Join(t.TempDir(), "version")
	if err := os.WriteFile(file, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel := releaseTool(t, file)
	first, ws, data := open(t, nil, rel)
	if msg := call(t, first, "r1", "release", `{"version":"v2"}`); msg.IsError {
		t.Fatalf("release failed: %+v", msg.Content)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	second := reopen(t, "", ws, data, rel)
	msg, err := undoStep(t, second, "r1")
	if err != nil || msg.IsError {
		t.Fatalf("undo = %+v, %v", msg.Content, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "v1" {
		t.Fatalf("version after undo = %q, want v1", b)
	}
	if _, err := undoStep(t, second, "r1"); !errors.Is(err, undo.ErrNothingToUndo) {
		t.Fatalf("a second undo = %v, want nothing to undo", err)
	}
	if err := second.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := auditRecords(t, data)
	last := recs[len(recs)-1]
	if last.Tool != "release" || last.UndoOf != "r1" || last.IsError || last.CallID == "r1" {
		t.Fatalf("the undo's audit record = %+v, want release marked undoOf r1 with its own id", last)
	}
}

func TestUndoStepRefusedByPolicyIsKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "version")
	rel := releaseTool(t, file)
	first, ws, data := open(t, nil, rel)
	if msg := call(t, first, "r1", "release", `{"version":"v2"}`); msg.IsError {
		t.Fatalf("release failed: %+v", msg.Content)
	}
	first.Close(context.Background())

	denied := reopen(t, "tools:\n  deny: [release]\n", ws, data, rel)
	msg, err := undoStep(t, denied, "r1")
	if err != nil || !msg.IsError || !strings.Contains(msg.Content[0].Text, `"blocked"`) {
		t.Fatalf("undo under a policy denying release = %+v, %v; want it blocked", msg.Content, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "v2" {
		t.Fatalf("version after the refused undo = %q, want v2", b)
	}
	if _, ok, err := denied.Journal().In(ws).Step(context.Background(), "r1"); err != nil || !ok {
		t.Fatalf("the refused undo's step is gone (%v, %v): it must be kept to try again", ok, err)
	}
}

func TestUndoStepOfAToolWithoutOneSaysSo(t *testing.T) {
	tb, ws, _ := open(t, nil)
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := call(t, tb, "read1", "read", `{"path":"a.txt"}`); msg.IsError {
		t.Fatalf("read failed: %+v", msg.Content)
	}
	if _, err := undoStep(t, tb, "read1"); !errors.Is(err, undo.ErrNothingToUndo) {
		t.Fatalf("undo of a read = %v, want nothing to undo", err)
	}
}

// auditRecords reads the audit log of the data directory's database.
func auditRecords(t *testing.T, data string) []audit.Record {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := auditlog.New(st).List(context.Background(), auditlog.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
