package fs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// dryRun runs a call as a dry run through the pipeline and returns its
// message and the effects it reports.
func (e *env) dryRun(t testing.TB, name string, args any) (tool.ResultMessage, tool.Effects) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	msg := e.r.Run(context.Background(), tool.Call{ID: "dry_1", Name: name, Arguments: raw}, invoke.DryRun())
	var d struct {
		DryRun  bool         `json:"dryRun"`
		Effects tool.Effects `json:"effects"`
	}
	if !msg.IsError {
		b, _ := json.Marshal(msg.Details)
		if err := json.Unmarshal(b, &d); err != nil || !d.DryRun {
			t.Fatalf("dry run details %s: %v", b, err)
		}
	}
	return msg, d.Effects
}

// files keeps the regular files of a tree (directories are "/").
func files(tree map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range tree {
		if c != "/" {
			out[p] = c
		}
	}
	return out
}

// gitApply applies diff with git to a directory holding the files, and
// returns the files then.
func gitApply(t *testing.T, before map[string]string, diff string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range before {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff != "" {
		cmd := exec.Command("git", "apply", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply: %v\n%s\ndiff:\n%s", err, out, diff)
		}
	}
	after := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		after[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return after
}

// TestPreviewIsTheChange: a dry run writes nothing, and its diff, applied
// by git to the files as they were, gives exactly the files the real call
// leaves.
func TestPreviewIsTheChange(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: it applies the previews' diffs")
	}
	seed := map[string]string{
		"a.txt":         "one\ntwo\nthree\n",
		"crlf.txt":      "\ufeffalpha\r\nbeta\r\ngamma\r\n",
		"src/main.go":   "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"src/old.go":    "package main\n\nfunc old() {}\n",
		"gone.txt":      "bye\n",
		"no-newline.md": "# Title",
	}
	tests := []struct {
		name, tool string
		args       any
		summary    string
	}{
		{"write creates", "write", map[string]any{"path": "new/dir/file.txt", "content": "hello\n"}, "create new/dir/file.txt with 6 bytes"},
		{"write replaces", "write", map[string]any{"path": "a.txt", "content": "one\n2\nthree"}, "replace the content of a.txt with 11 bytes"},
		{"write same content", "write", map[string]any{"path": "a.txt", "content": "one\ntwo\nthree\n"}, "leave a.txt as it is: it already has this content"},
		{"edit", "edit", map[string]any{"path": "src/main.go", "edits": []any{map[string]any{"oldText": "println(\"hi\")", "newText": "println(\"hello\")\n\tprintln(\"world\")"}}}, "edit src/main.go: 1 replacement, the first at line 4"},
		{"edit CRLF and BOM", "edit", map[string]any{"path": "crlf.txt", "edits": []any{map[string]any{"oldText": "beta\n", "newText": "BETA\nbeta2\n"}}}, "edit crlf.txt: 1 replacement, the first at line 2"},
		{"edit no final newline", "edit", map[string]any{"path": "no-newline.md", "edits": []any{map[string]any{"oldText": "Title", "newText": "Title\n\nText"}}}, "edit no-newline.md: 1 replacement, the first at line 1"},
		{"apply_patch", "apply_patch", map[string]any{"patch": "*** Begin Patch\n" +
			"*** Add File: docs/readme.md\n+# Docs\n+\n+Read me.\n" +
			"*** Delete File: gone.txt\n" +
			"*** Update File: src/old.go\n*** Move to: src/renamed.go\n@@\n package main\n \n-func old() {}\n+func renamed() {}\n" +
			"*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n" +
			"*** End Patch"}, "change 4 files: A docs/readme.md, D gone.txt, M src/old.go (moved to src/renamed.go), M a.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bothEnvs(t, func(t *testing.T, e *env) {
				e.put(t, seed)
				before := e.tree(t)
				msg, eff := e.dryRun(t, tt.tool, tt.args)
				if msg.IsError {
					t.Fatalf("dry run failed: %s", text(msg))
				}
				if got := e.tree(t); !maps.Equal(got, before) {
					t.Fatalf("the dry run changed the workspace:\n%v\nwant\n%v", got, before)
				}
				if eff.Summary != tt.summary {
					t.Errorf("summary %q, want %q", eff.Summary, tt.summary)
				}
				if !strings.Contains(text(msg), "nothing was changed") {
					t.Errorf("dry run text %q", text(msg))
				}
				e.ok(t, tt.tool, tt.args)
				after := files(e.tree(t))
				if got := gitApply(t, files(before), eff.Diff); !maps.Equal(got, after) {
					t.Errorf("the preview's diff gives\n%q\nthe call made\n%q\ndiff:\n%s", got, after, eff.Diff)
				}
				var changed []string
				for p := range mergeKeys(files(before), after) {
					if before[p] != after[p] {
						changed = append(changed, p)
					}
				}
				slices.Sort(changed)
				if got := slices.Sorted(slices.Values(eff.Files)); !slices.Equal(got, changed) {
					t.Errorf("files %v, want %v", got, changed)
				}
			})
		})
	}
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestPreviewFailsAsTheCall: a preview of a call that would fail fails
// with the same message, and writes nothing.
func TestPreviewFailsAsTheCall(t *testing.T) {
	t.Parallel()
	seed := map[string]string{"a.txt": "one\ntwo\n", "dir/x.txt": "x\n", ".git/config": "[core]\n"}
	tests := []struct {
		name, tool string
		args       any
		want       string
	}{
		{"edit matches nothing", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "three", "newText": "3"}}}, "oldText was not found"},
		{"edit a missing file", "edit", map[string]any{"path": "b.txt", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}, "does not exist"},
		{"edit changes nothing", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "one", "replaceAll": true}}}, "identical"},
		{"write a directory", "write", map[string]any{"path": "dir", "content": "x"}, "is a directory"},
		{"write a protected path", "write", map[string]any{"path": ".git/config", "content": "x"}, "Refused"},
		{"write outside", "write", map[string]any{"path": "../x.txt", "content": "x"}, "Refused"},
		{"patch hunk not found", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+yes\n*** Add File: new.txt\n+n\n*** End Patch"}, "No file was changed"},
		{"patch unreadable", "apply_patch", map[string]any{"patch": "not a patch"}, "The patch cannot be read"},
		{"patch deletes a missing file", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch"}, "there is no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bothEnvs(t, func(t *testing.T, e *env) {
				e.put(t, seed)
				before := e.tree(t)
				msg, _ := e.dryRun(t, tt.tool, tt.args)
				if !msg.IsError {
					t.Fatalf("the dry run succeeded: %s", text(msg))
				}
				real := e.fails(t, tt.tool, tt.args)
				if text(msg) != real || !strings.Contains(real, tt.want) {
					t.Errorf("dry run says %q\nthe call says %q\nwant both to say %q", text(msg), real, tt.want)
				}
				if got := e.tree(t); !maps.Equal(got, before) {
					t.Errorf("the workspace changed: %v", got)
				}
			})
		})
	}
}

// BenchmarkEdit1MB: one edit in the middle of a 1 MB file through the
// pipeline, which previews every call that changes files (for the risk and
// for a person's confirmation): the preview alone (a dry run), and the edit
// (preview, then the call).
func BenchmarkEdit1MB(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "line %06d: the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	r := benchRunner(b, dir)
	edit := func(from, to string) map[string]any {
		return map[string]any{"path": "big.txt", "edits": []any{map[string]any{"oldText": from, "newText": to}}}
	}
	b.Run("dry-run", func(b *testing.B) {
		raw, _ := json.Marshal(edit("line 009000:", "LINE 009000:"))
		for b.Loop() {
			if msg := r.Run(context.Background(), tool.Call{ID: "1", Name: "edit", Arguments: raw}, invoke.DryRun()); msg.IsError {
				b.Fatal(text(msg))
			}
		}
	})
	b.Run("edit", func(b *testing.B) {
		i := 0
		for b.Loop() {
			from, to := "line 009000:", "LINE 009000:"
			if i%2 == 1 {
				from, to = to, from
			}
			runTool(b, r, "edit", edit(from, to))
			i++
		}
	})
}
