package fs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

type edit = map[string]any

func editArgs(path string, edits ...edit) map[string]any {
	return map[string]any{"path": path, "edits": edits}
}

func TestEditExact(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n\nfunc other() {}\n"})
		msg := e.call(t, "edit", editArgs("main.go",
			edit{"oldText": "println(\"hi\")", "newText": "println(\"hello\")\n\tprintln(\"world\")"},
			edit{"oldText": "func other() {}", "newText": "func other() { main() }"},
		))
		if msg.IsError {
			t.Fatal(text(msg))
		}
		contains(t, text(msg), "Edited main.go: 2 replacements; the first change is at line 4.")
		if got := e.get(t, "main.go"); got != "package main\n\nfunc main() {\n\tprintln(\"hello\")\n\tprintln(\"world\")\n}\n\nfunc other() { main() }\n" {
			t.Fatalf("file:\n%s", got)
		}
		d := details(t, msg)
		wantDiff := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,7 +1,8 @@\n package main\n \n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n+\tprintln(\"world\")\n }\n \n-func other() {}\n+func other() { main() }\n"
		if d["diff"] != wantDiff {
			t.Errorf("diff:\n%s\nwant:\n%s", d["diff"], wantDiff)
		}
		if d["firstChangedLine"] != 4.0 || d["replacements"] != 2.0 {
			t.Errorf("details: %v", d)
		}
		// replaceAll changes every occurrence.
		e.put(t, map[string]string{"list.txt": "a\nb\na\nc\na\n"})
		contains(t, e.ok(t, "edit", editArgs("list.txt", edit{"oldText": "a\n", "newText": "A\n", "replaceAll": true})), "3 replacements")
		if got := e.get(t, "list.txt"); got != "A\nb\nA\nc\nA\n" {
			t.Fatalf("replaceAll: %q", got)
		}
	})
}

func details(t *testing.T, msg tool.ResultMessage) map[string]any {
	t.Helper()
	b, err := json.Marshal(msg.Details)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEditTolerant: when oldText is not in the file exactly, a match that
// ignores Unicode form, typographic characters, special spaces and trailing
// whitespace is used, and only the matched text is replaced.
func TestEditTolerant(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, old, new, want string
	}{
		{"typographic quotes in the file", "say(“hello”) // it’s\n", `say("hello") // it's`, `say("bye")`, "say(\"bye\")\n"},
		{"typographic quotes in oldText", "x = 'a' + \"b\"\n", "x = ‘a’ + “b”", "x = 1", "x = 1\n"},
		{"dashes", "range 1–10 — inclusive\n", "range 1-10 - inclusive", "range 1..10", "range 1..10\n"},
		{"non-breaking space", "total:\u00a0100\u202fkg\n", "total: 100 kg", "total: 0", "total: 0\n"},
		{"NFKC ligature and width", "the ﬁle ＡＢＣ\n", "the file ABC", "done", "done\n"},
		{"NFKC composed and decomposed", "caf\u00e9 = 1\n", "cafe\u0301 = 1", "tea = 1", "tea = 1\n"},
		{"trailing whitespace", "if x {   \n\treturn\t\n}\nrest\n", "if x {\n\treturn\n}", "if y {\n}", "if y {\n}\nrest\n"},
		{"only the match changes", "keep “this”\nfix “that”\nkeep “other”\n", `fix "that"`, "fixed", "keep “this”\nfixed\nkeep “other”\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bothEnvs(t, func(t *testing.T, e *env) {
				e.put(t, map[string]string{"f.txt": c.file})
				msg := e.call(t, "edit", editArgs("f.txt", edit{"oldText": c.old, "newText": c.new}))
				if msg.IsError {
					t.Fatal(text(msg))
				}
				contains(t, text(msg), "Edit 1 matched only after ignoring differences")
				if got := e.get(t, "f.txt"); got != c.want {
					t.Fatalf("file %q, want %q", got, c.want)
				}
				if d := details(t, msg); fmt.Sprint(d["tolerant"]) != "[1]" {
					t.Errorf("details: %v", d)
				}
			})
		})
	}
	// Exact matches win: no tolerant note.
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{"f.txt": "a “b”\na \"b\"\n"})
		got := e.ok(t, "edit", editArgs("f.txt", edit{"oldText": `a "b"`, "newText": "c"}))
		if strings.Contains(got, "ignoring") {
			t.Fatalf("tolerant note on an exact match: %s", got)
		}
		if got := e.get(t, "f.txt"); got != "a “b”\nc\n" {
			t.Fatalf("file %q", got)
		}
	})
}

func TestEditKeepsBOMAndLineEndings(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{
			"bom-crlf.txt": "\uFEFFfirst\r\nsecond\r\nthird\r\n",
			"crlf.txt":     "a\r\nb\r\nc",
			"lf.txt":       "a\nb\n",
			"mixed.txt":    "a\r\nb\nc\r\n",
		})
		e.ok(t, "edit", editArgs("bom-crlf.txt", edit{"oldText": "second\nthird", "newText": "2nd\nand 3rd\nand more"}))
		if got := e.get(t, "bom-crlf.txt"); got != "\uFEFFfirst\r\n2nd\r\nand 3rd\r\nand more\r\n" {
			t.Fatalf("BOM and CRLF: %q", got)
		}
		// oldText given with CRLF matches too, and the BOM in oldText is ignored.
		e.ok(t, "edit", editArgs("crlf.txt", edit{"oldText": "\uFEFFa\r\nb", "newText": "x\ny"}))
		if got := e.get(t, "crlf.txt"); got != "x\r\ny\r\nc" {
			t.Fatalf("CRLF: %q", got)
		}
		e.ok(t, "edit", editArgs("lf.txt", edit{"oldText": "b", "newText": "b\nc"}))
		if got := e.get(t, "lf.txt"); got != "a\nb\nc\n" {
			t.Fatalf("LF: %q", got)
		}
		// Mixed endings are left as they are outside the edit.
		e.ok(t, "edit", editArgs("mixed.txt", edit{"oldText": "b", "newText": "B"}))
		if got := e.get(t, "mixed.txt"); got != "a\r\nB\nc\r\n" {
			t.Fatalf("mixed: %q", got)
		}
	})
}

// TestEditRefusals: every refusal names the edit, says what to do, and
// leaves the file as it was.
func TestEditRefusals(t *testing.T) {
	t.Parallel()
	const file = "one\ntwo\nthree\ntwo\n"
	cases := []struct {
		name  string
		edits []edit
		want  []string
	}{
		{"identical text", []edit{{"oldText": "one", "newText": "one"}},
			[]string{"Edit 1: oldText and newText are identical, so this edit would change nothing."}},
		{"empty oldText", []edit{{"oldText": "", "newText": "x"}}, []string{"Edit 1: oldText is empty", "use write"}},
		{"not found", []edit{{"oldText": "one", "newText": "1"}, {"oldText": "four", "newText": "4"}},
			[]string{"Edit 2: oldText was not found in f.txt.", "read the file again"}},
		{"not found, first line found", []edit{{"oldText": "three\nfour", "newText": "x"}},
			[]string{"Edit 1: oldText was not found", "Its first line appears at line 3"}},
		{"ambiguous", []edit{{"oldText": "two", "newText": "2"}},
			[]string{"Edit 1: oldText occurs 2 times in f.txt (at lines 2, 4).", "set replaceAll to true"}},
		{"overlapping", []edit{{"oldText": "one\ntwo", "newText": "x"}, {"oldText": "two\nthree", "newText": "y"}},
			[]string{"Edits 1 and 2 overlap (line 2)", "Merge them into one edit"}},
		{"duplicate", []edit{{"oldText": "three", "newText": "3"}, {"oldText": "three", "newText": "III"}},
			[]string{"Edits 1 and 2 match the same text (line 3)"}},
		{"unchanged after tolerant match", []edit{{"oldText": "one  ", "newText": "one"}},
			[]string{"leave f.txt unchanged"}},
		{"missing file", nil, []string{"nope.txt does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bothEnvs(t, func(t *testing.T, e *env) {
				e.put(t, map[string]string{"f.txt": file})
				args := editArgs("f.txt", c.edits...)
				if c.edits == nil {
					args = editArgs("nope.txt", edit{"oldText": "a", "newText": "b"})
				}
				contains(t, e.fails(t, "edit", args), c.want...)
				if got := e.get(t, "f.txt"); got != file {
					t.Fatalf("the file changed: %q", got)
				}
			})
		})
	}
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{"bin": "a\x00b"})
		contains(t, e.fails(t, "edit", editArgs("bin", edit{"oldText": "a", "newText": "c"})), "binary file")
	})
}

// TestEditSerialized: many edits of one file at once, each changing a
// different line, all land: edits to one file wait for each other.
func TestEditSerialized(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		const n = 40
		e.put(t, map[string]string{"counter.txt": numbered(n, "line %d old")})
		calls := make([]tool.Call, n)
		for i := range calls {
			raw, _ := json.Marshal(editArgs("counter.txt", edit{"oldText": fmt.Sprintf("line %d old\n", i+1), "newText": fmt.Sprintf("line %d new\n", i+1)}))
			calls[i] = tool.Call{ID: fmt.Sprint(i), Name: "edit", Arguments: raw}
		}
		for _, msg := range e.r.RunBatch(context.Background(), calls) {
			if msg.IsError {
				t.Fatalf("call %s: %s", msg.ToolCallID, text(msg))
			}
		}
		if got := e.get(t, "counter.txt"); got != numbered(n, "line %d new") {
			t.Fatalf("lost updates:\n%s", got)
		}
	})
}

func TestWrite(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		msg := e.call(t, "write", map[string]any{"path": "a/b/c.txt", "content": "héllo"})
		if msg.IsError {
			t.Fatal(text(msg))
		}
		contains(t, text(msg), "Wrote 6 bytes to a/b/c.txt (created it).")
		if d := details(t, msg); d["created"] != true || d["bytes"] != 6.0 {
			t.Errorf("details %v", d)
		}
		contains(t, e.ok(t, "write", map[string]any{"path": "a/b/c.txt", "content": ""}), "Wrote 0 bytes to a/b/c.txt (replaced its content).")
		if got := e.get(t, "a/b/c.txt"); got != "" {
			t.Fatalf("content %q", got)
		}
		contains(t, e.fails(t, "write", map[string]any{"path": "a/b", "content": "x"}), "a/b is a directory")
		contains(t, e.fails(t, "write", map[string]any{"path": "a/b/c.txt/d", "content": "x"}), "is a file")
		contains(t, e.fails(t, "write", map[string]any{"path": "x"}), "content")
	})
}
