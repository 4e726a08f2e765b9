package changeset_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolbelt/toolbelt/changeset"
	"github.com/toolbelt/toolbelt/fsbridge"
)

// failing is a bridge whose writes to one path fail.
type failing struct {
	fsbridge.Bridge
	path string
}

var errDisk = errors.New("disk full")

func (f failing) WriteFile(ctx context.Context, p string, data []byte, perm fs.FileMode) error {
	if p == f.path {
		return errDisk
	}
	return f.Bridge.WriteFile(ctx, p, data, perm)
}

func memory(t *testing.T, files map[string]string) *fsbridge.Memory {
	t.Helper()
	m, err := fsbridge.NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c), Mode: 0o644}
	}
	if err := m.Load(fsys); err != nil {
		t.Fatal(err)
	}
	return m
}

// tree returns every path with the content of its files ("/" for directories).
func tree(t *testing.T, b fsbridge.Bridge) map[string]string {
	t.Helper()
	out := map[string]string{}
	ctx := context.Background()
	err := b.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if d.IsDir() {
			out[p] = "/"
			return nil
		}
		data, err := b.ReadFile(ctx, p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func state(s string) changeset.State {
	return changeset.State{Exists: true, Data: []byte(s), Mode: 0o644}
}

// move is a change set that updates a.txt, moves b.txt to new/dir/c.txt
// and deletes d.txt.
var move = []changeset.Change{
	{Path: "a.txt", Before: state("a\n"), After: state("A\n")},
	{Path: "b.txt", Before: state("b\n")},
	{Path: "new/dir/c.txt", From: "b.txt", After: state("b\nc\n")},
	{Path: "d.txt", Before: state("d\n")},
}

func TestApply(t *testing.T) {
	t.Parallel()
	m := memory(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"})
	if err := changeset.Apply(context.Background(), m, move); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "A\n", "new": "/", "new/dir": "/", "new/dir/c.txt": "b\nc\n"}
	if got := tree(t, m); !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestApplyAllOrNothing: when a write fails, the files already written are
// put back and the directories made are removed.
func TestApplyAllOrNothing(t *testing.T) {
	t.Parallel()
	seed := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"}
	m := memory(t, seed)
	err := changeset.Apply(context.Background(), failing{m, "new/dir/c.txt"}, move)
	var step *changeset.StepError
	if !errors.As(err, &step) || step.Path != "new/dir/c.txt" || !errors.Is(err, errDisk) {
		t.Fatalf("error %v, want a step error for new/dir/c.txt", err)
	}
	if got := tree(t, m); !maps.Equal(got, seed) {
		t.Errorf("after the failure: %v, want %v", got, seed)
	}
}

func TestDiffShowsAMoveAsARename(t *testing.T) {
	t.Parallel()
	d := changeset.Diff(move)
	for _, want := range []string{
		"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n",
		"diff --git a/b.txt b/new/dir/c.txt\nrename from b.txt\nrename to new/dir/c.txt\n--- a/b.txt\n+++ b/new/dir/c.txt\n@@ -1 +1,2 @@\n b\n+c\n",
		"diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("diff\n%s\ndoes not contain\n%s", d, want)
		}
	}
	if strings.Count(d, "diff --git") != 3 {
		t.Errorf("want three files in\n%s", d)
	}
}
