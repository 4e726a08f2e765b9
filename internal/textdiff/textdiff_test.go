package textdiff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// applyChanges rebuilds the new text from the old one and the changes, and
// fails when the changes are not sorted, overlap or do not match old.
func applyChanges(t testing.TB, before string, cs []Change) string {
	t.Helper()
	lines := Lines(before)
	var out []string
	at, shift := 0, 0
	for _, c := range cs {
		if c.OldStart < at || c.OldStart+len(c.Old) > len(lines) || len(c.Old)+len(c.New) == 0 {
			t.Fatalf("change %+v out of order, out of range or empty (at %d of %d)", c, at, len(lines))
		}
		if c.NewStart != c.OldStart+shift {
			t.Fatalf("change %+v: NewStart should be %d", c, c.OldStart+shift)
		}
		out = append(out, lines[at:c.OldStart]...)
		if got := strings.Join(lines[c.OldStart:c.OldStart+len(c.Old)], ""); got != strings.Join(c.Old, "") {
			t.Fatalf("change %+v: old lines are %q", c, got)
		}
		out = append(out, c.New...)
		at = c.OldStart + len(c.Old)
		shift += len(c.New) - len(c.Old)
	}
	return strings.Join(append(out, lines[at:]...), "")
}

// editDistance is the fewest lines deleted and inserted to turn a into b.
func editDistance(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return len(a) + len(b) - 2*prev[len(b)]
}

func changedLines(cs []Change) int {
	n := 0
	for _, c := range cs {
		n += len(c.Old) + len(c.New)
	}
	return n
}

func TestComputeIsMinimalAndApplies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a\n", "b\n", "c\n", "d\n", "}\n", "\n", "x"}
	text := func() string {
		var b strings.Builder
		for range rng.IntN(14) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 3000 {
		before, after := text(), text()
		cs := Compute(before, after)
		if got := applyChanges(t, before, cs); got != after {
			t.Fatalf("Compute(%q, %q) = %+v rebuilds %q", before, after, cs, got)
		}
		if got, want := changedLines(cs), editDistance(Lines(before), Lines(after)); got != want {
			t.Fatalf("Compute(%q, %q) changes %d lines, the fewest is %d", before, after, got, want)
		}
	}
}

func TestComputeBeyondTheBound(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 3 * maxEdits {
		a.WriteString("old " + strings.Repeat("x", i%7) + "\n")
		b.WriteString("new " + strings.Repeat("y", i%5) + "\n")
	}
	before := "same start\n" + a.String() + "same end\n"
	after := "same start\n" + b.String() + "same end\n"
	cs := Compute(before, after)
	if len(cs) != 1 || cs[0].OldStart != 1 || len(cs[0].Old) != 3*maxEdits || len(cs[0].New) != 3*maxEdits {
		t.Fatalf("got %d changes, want one covering the middle", len(cs))
	}
	if applyChanges(t, before, cs) != after {
		t.Fatal("the change does not rebuild the new text")
	}
}

func FuzzCompute(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("", "x\n")
	f.Add("x", "x\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		cs := Compute(before, after)
		if got := applyChanges(t, before, cs); got != after {
			t.Fatalf("rebuilt %q, want %q", got, after)
		}
	})
}

func TestUnified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file File
		want string
	}{
		{"unchanged", File{OldPath: "a.txt", NewPath: "a.txt", Before: "x\n", After: "x\n"}, ""},
		{"modified", File{OldPath: "a.txt", NewPath: "a.txt", Before: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", After: "1\n2\n3\n4\nfive\n6\n7\n8\n9\n"},
			"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"created", File{NewPath: "new.sh", After: "echo hi\n", Mode: 0o755},
			"diff --git a/new.sh b/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/new.sh\n@@ -0,0 +1 @@\n+echo hi\n"},
		{"created empty", File{NewPath: "empty", Mode: 0o644},
			"diff --git a/empty b/empty\nnew file mode 100644\n"},
		{"deleted", File{OldPath: "old.txt", Before: "a\nb", Mode: 0o644},
			"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n\\ No newline at end of file\n"},
		{"moved unchanged", File{OldPath: "a.go", NewPath: "b.go", Before: "x\n", After: "x\n"},
			"diff --git a/a.go b/b.go\nrename from a.go\nrename to b.go\n"},
		{"moved and changed", File{OldPath: "a.go", NewPath: "b.go", Before: "x\n", After: "y\n"},
			"diff --git a/a.go b/b.go\nrename from a.go\nrename to b.go\n--- a/a.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"},
		{"binary", File{OldPath: "b.bin", NewPath: "b.bin", Before: "\x00a", After: "\x00b"},
			"diff --git a/b.bin b/b.bin\nBinary files a/b.bin and b/b.bin differ\n"},
		{"quoted names", File{OldPath: "my \"file\"\t.txt", NewPath: "my \"file\"\t.txt", Before: "a\n", After: "b\n"},
			"diff --git \"a/my \\\"file\\\"\\t.txt\" \"b/my \\\"file\\\"\\t.txt\"\n--- \"a/my \\\"file\\\"\\t.txt\"\t\n+++ \"b/my \\\"file\\\"\\t.txt\"\t\n@@ -1 +1 @@\n-a\n+b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Unified(tt.file); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestGitApplies checks that git reads the diffs: applied to the old tree,
// they give the new one exactly.
func TestGitApplies(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: it checks that the diffs apply")
	}
	old := map[string]string{
		"keep.txt":       "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n",
		"gone.txt":       "bye\n",
		"move/from.go":   "package a\n\nfunc A() {}\n",
		"no newline.txt": "last",
		"ünï.txt":        "é\n",
	}
	files := []File{
		{OldPath: "keep.txt", NewPath: "keep.txt", Before: old["keep.txt"], After: "zero\none\ntwo\nthree\nFOUR\nfive\nsix\nseven\neight\nnine\nten\n"},
		{OldPath: "gone.txt", Before: old["gone.txt"], Mode: 0o644},
		{NewPath: "added/new.sh", After: "#!/bin/sh\necho hi\n", Mode: 0o755},
		{OldPath: "move/from.go", NewPath: "move/to.go", Before: old["move/from.go"], After: "package a\n\nfunc B() {}\n"},
		{OldPath: "no newline.txt", NewPath: "no newline.txt", Before: "last", After: "last\n"},
		{OldPath: "ünï.txt", NewPath: "ünï.txt", Before: "é\n", After: "è\n"},
	}
	dir := t.TempDir()
	for p, content := range old {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patch := filepath.Join(t.TempDir(), "change.diff")
	if err := os.WriteFile(patch, []byte(Unified(files...)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "--unsafe-paths", "--directory=.", patch)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\n%s", err, out, Unified(files...))
	}
	want := map[string]string{}
	for _, f := range files {
		if f.NewPath != "" {
			want[f.NewPath] = f.After
		}
	}
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("files after git apply: %v, want %v", keys(got), keys(want))
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s = %q, want %q", p, got[p], w)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "added/new.sh")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("the created script is not executable: %v %v", st, err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// BenchmarkCompute: a 10,000-line file with ten lines changed here and
// there, and two 2,000-line texts with nothing in common (past the bound).
func BenchmarkCompute(b *testing.B) {
	var before, after, other strings.Builder
	for i := range 10_000 {
		line := fmt.Sprintf("line %d: some text\n", i)
		before.WriteString(line)
		if i%1000 == 500 {
			line = fmt.Sprintf("changed %d\n", i)
		}
		after.WriteString(line)
		if i < 2000 {
			other.WriteString(fmt.Sprintf("other %d\n", i))
		}
	}
	b.Run("10k-lines-10-changes", func(b *testing.B) {
		for b.Loop() {
			if cs := Compute(before.String(), after.String()); len(cs) != 10 {
				b.Fatalf("%d changes", len(cs))
			}
		}
	})
	head := strings.Join(Lines(before.String())[:2000], "")
	b.Run("2k-lines-all-different", func(b *testing.B) {
		for b.Loop() {
			Compute(head, other.String())
		}
	})
}
