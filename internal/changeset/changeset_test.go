package changeset_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/changeset"
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

// TestApplySaysWhenItCannotPutBack: a write that fails, then a file that
// cannot be put back (a full disk refuses both), is reported as a change
// left half made, so that nobody is told no file changed.
func TestApplySaysWhenItCannotPutBack(t *testing.T) {
	t.Parallel()
	m := memory(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"})
	full := &fullAfter{Bridge: m, writes: 1}
	err := changeset.Apply(context.Background(), full, move)
	var step *changeset.StepError
	if !errors.As(err, &step) || step.Path != "new/dir/c.txt" || !errors.Is(step.Unrestored, errDisk) {
		t.Fatalf("error %v, want a step error for new/dir/c.txt that could not put a.txt back", err)
	}
	if got := tree(t, m)["a.txt"]; got != "A\n" {
		t.Errorf("a.txt = %q: the test's disk should have kept it changed", got)
	}
}

// fullAfter is a bridge whose disk is full after some writes.
type fullAfter struct {
	fsbridge.Bridge
	writes int
}

func (f *fullAfter) WriteFile(ctx context.Context, p string, data []byte, perm fs.FileMode) error {
	if f.writes == 0 {
		return errDisk
	}
	f.writes--
	return f.Bridge.WriteFile(ctx, p, data, perm)
}

// TestSettle: a change left whole (before or after) is left as it is; a
// change left half made is rolled back, files written back before files
// removed; a file changed since by something else is left alone; and
// settling again changes nothing more.
func TestSettle(t *testing.T) {
	t.Parallel()
	// The move, by file: the state before, after, and changed since.
	before := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"}
	after := map[string]string{"a.txt": "A\n", "new/dir/c.txt": "b\nc\n"}
	for _, c := range []struct {
		name    string
		files   map[string]string
		outcome string
		found   []string // per file of move
		want    map[string]string
	}{
		{"nothing made", before, changeset.NotMade, []string{"before", "before", "before", "before"}, before},
		{"all made", after, changeset.Kept, []string{"after", "after", "after", "after"}, after},
		{"killed after the first file", map[string]string{"a.txt": "A\n", "b.txt": "b\n", "d.txt": "d\n"}, changeset.RolledBack,
			[]string{"after", "before", "before", "before"}, before},
		{"killed before the removals", map[string]string{"a.txt": "A\n", "b.txt": "b\n", "new/dir/c.txt": "b\nc\n", "d.txt": "d\n"}, changeset.RolledBack,
			[]string{"after", "before", "after", "before"}, before},
		{"killed between the removals", map[string]string{"a.txt": "A\n", "new/dir/c.txt": "b\nc\n", "d.txt": "d\n"}, changeset.RolledBack,
			[]string{"after", "after", "after", "before"}, before},
		{"a file changed since, the rest made", map[string]string{"a.txt": "mine\n", "new/dir/c.txt": "b\nc\n"}, changeset.Kept,
			[]string{"neither", "after", "after", "after"}, map[string]string{"a.txt": "mine\n", "new/dir/c.txt": "b\nc\n"}},
		{"a file changed since, the rest half made", map[string]string{"a.txt": "mine\n", "b.txt": "b\n", "new/dir/c.txt": "b\nc\n", "d.txt": "d\n"}, changeset.RolledBack,
			[]string{"neither", "before", "after", "before"}, map[string]string{"a.txt": "mine\n", "b.txt": "b\n", "d.txt": "d\n"}},
		{"every file changed since", map[string]string{"a.txt": "x", "b.txt": "x", "new/dir/c.txt": "x", "d.txt": "x"}, changeset.LeftAlone,
			[]string{"neither", "neither", "neither", "neither"}, map[string]string{"a.txt": "x", "b.txt": "x", "new/dir/c.txt": "x", "d.txt": "x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := memory(t, c.files)
			s := settle(t, m)
			if s.Outcome != c.outcome || len(s.Files) != len(move) {
				t.Fatalf("settled %+v, want %s", s, c.outcome)
			}
			for i, f := range s.Files {
				restored := c.outcome == changeset.RolledBack && f.Found == "after"
				if f.Path != move[i].Path || f.Found != c.found[i] || f.Restored != restored {
					t.Errorf("file %d: %+v, want found %s", i, f, c.found[i])
				}
			}
			files := func() map[string]string {
				out := map[string]string{}
				for p, v := range tree(t, m) {
					if v != "/" {
						out[p] = v
					}
				}
				return out
			}
			if got := files(); !maps.Equal(got, c.want) {
				t.Errorf("files %v, want %v", got, c.want)
			}
			if again := settle(t, m); again.Outcome == changeset.RolledBack || !maps.Equal(files(), c.want) {
				t.Errorf("settling again: %+v; files %v", again, files())
			}
		})
	}
}

// settle assesses the change move in m and settles it.
func settle(t *testing.T, m fsbridge.Bridge) changeset.Settlement {
	t.Helper()
	ctx := context.Background()
	s, err := changeset.Assess(ctx, m, move)
	if err != nil {
		t.Fatal(err)
	}
	if err := changeset.Settle(ctx, m, move, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSettleCutShort: a rollback that fails midway leaves the files for a
// settle that is run again, which finishes it.
func TestSettleCutShort(t *testing.T) {
	t.Parallel()
	m := memory(t, map[string]string{"a.txt": "A\n", "new/dir/c.txt": "b\nc\n", "d.txt": "d\n"})
	ctx := context.Background()
	s, err := changeset.Assess(ctx, m, move)
	if err != nil {
		t.Fatal(err)
	}
	if err := changeset.Settle(ctx, failing{m, "b.txt"}, move, s); !errors.Is(err, errDisk) {
		t.Fatalf("Settle = %v, want the disk's error", err)
	}
	if s := settle(t, m); s.Outcome != changeset.RolledBack {
		t.Fatalf("settling again: %+v", s)
	}
	want := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"}
	for p, v := range want {
		if got := tree(t, m)[p]; got != v {
			t.Errorf("%s = %q, want %q", p, got, v)
		}
	}
	if _, ok := tree(t, m)["new/dir/c.txt"]; ok {
		t.Error("the moved file is still there")
	}
}

// TestSettleLeavesWhatChangedSince: a file written by something else
// between Assess and Settle keeps what was written; the others are put
// back.
func TestSettleLeavesWhatChangedSince(t *testing.T) {
	t.Parallel()
	m := memory(t, map[string]string{"a.txt": "A\n", "b.txt": "b\n", "new/dir/c.txt": "b\nc\n", "d.txt": "d\n"})
	ctx := context.Background()
	s, err := changeset.Assess(ctx, m, move)
	if err != nil || s.Outcome != changeset.RolledBack {
		t.Fatalf("Assess = %+v, %v", s, err)
	}
	if err := m.WriteFile(ctx, "a.txt", []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := changeset.Settle(ctx, m, move, s); err != nil {
		t.Fatal(err)
	}
	got := tree(t, m)
	if got["a.txt"] != "mine\n" || got["b.txt"] != "b\n" || got["d.txt"] != "d\n" {
		t.Errorf("files %v", got)
	}
	if _, ok := got["new/dir/c.txt"]; ok {
		t.Error("the moved file is still there")
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
