package fs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
)

func patch(body string) map[string]any {
	return map[string]any{"patch": "*** Begin Patch\n" + body + "\n*** End Patch"}
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{
			"src/app.py":  "import os\n\ndef greet():\n    print(\"Hi\")\n\ndef main():\n    greet()\n",
			"old.txt":     "obsolete\n",
			"src/util.py": "def f():\n    pass\n",
			"notes.md":    "# Notes\n\nend",
		})
		msg := e.call(t, "apply_patch", patch(`*** Add File: docs/hello.txt
+Hello
+world
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hello, world!")
@@
 def main():
-    greet()
+    greet()
+    greet()
*** Delete File: old.txt
*** Update File: src/util.py
*** Move to: src/helpers.py
@@
 def f():
-    pass
+    return 123
*** Update File: notes.md
@@
 end
+more
*** End of File`))
		if msg.IsError {
			t.Fatal(text(msg))
		}
		contains(t, text(msg), "Success. Updated the following files:\nA docs/hello.txt\nM src/app.py\nD old.txt\nM src/util.py (moved to src/helpers.py)\nM notes.md")
		want := map[string]string{
			"docs":           "/",
			"docs/hello.txt": "Hello\nworld\n",
			"src":            "/",
			"src/app.py":     "import os\n\ndef greet():\n    print(\"Hello, world!\")\n\ndef main():\n    greet()\n    greet()\n",
			"src/helpers.py": "def f():\n    return 123\n",
			"notes.md":       "# Notes\n\nend\nmore\n",
			".":              "/",
		}
		if got := e.tree(t); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("tree:\n%v\nwant\n%v", got, want)
		}
		d := details(t, msg)
		files := d["files"].([]any)
		app := files[1].(map[string]any)
		if app["firstChangedLine"] != 4.0 || !strings.Contains(app["diff"].(string), "-    print(\"Hi\")\n+    print(\"Hello, world!\")\n") {
			t.Errorf("details of src/app.py: %v", app)
		}
	})
}

// TestApplyPatchAllOrNothing: when one hunk of one file fails, no file of
// the patch changes.
func TestApplyPatchAllOrNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       []string
	}{
		{"one failing hunk", `*** Add File: new.txt
+new
*** Update File: a.txt
@@
-alpha
+ALPHA
*** Delete File: b.txt
*** Update File: c.txt
@@
 gamma
-no such line
+x`, []string{"Update File c.txt, section 1 (patch line 10): these lines were not found in the file:", "    no such line", "No file was changed."}},
		{"missing context line", `*** Update File: a.txt
@@ def nowhere():
-alpha
+x`, []string{"the context line \"def nowhere():\" was not found", "No file was changed."}},
		{"add over an existing file", `*** Update File: a.txt
@@
-alpha
+x
*** Add File: b.txt
+b`, []string{"Add File b.txt (patch line 6): the file already exists", "No file was changed."}},
		{"delete a missing file", `*** Update File: a.txt
@@
-alpha
+x
*** Delete File: nope.txt`, []string{"Delete File nope.txt", "there is no such file"}},
		{"update a missing file", `*** Update File: nope.txt
@@
-a
+b`, []string{"Update File nope.txt", "use \"*** Add File:\""}},
		{"move onto a file", `*** Update File: a.txt
*** Move to: b.txt
@@
-alpha
+x`, []string{"Move to b.txt", "a file already exists there"}},
		{"protected path", `*** Update File: a.txt
@@
-alpha
+x
*** Add File: .mcp.json
+{}`, []string{"protected path", "No file was changed."}},
		{"path outside", `*** Update File: a.txt
@@
-alpha
+x
*** Add File: ../escape.txt
+x`, []string{"climbs above the workspace", "No file was changed."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bothEnvs(t, func(t *testing.T, e *env) {
				e.put(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\ndelta\n"})
				before := e.tree(t)
				contains(t, e.fails(t, "apply_patch", patch(c.body)), c.want...)
				if after := e.tree(t); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Fatalf("files changed:\n%v\nwant\n%v", after, before)
				}
				e.outsideIntact(t)
			})
		})
	}
}

// TestApplyPatchRollsBack: when a write fails after others succeeded, the
// files already written are restored and those created are removed.
func TestApplyPatchRollsBack(t *testing.T) {
	t.Parallel()
	mem, err := fsbridge.NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{kind: "memory", b: mem}
	e.put(t, map[string]string{"a.txt": "alpha\n", "z.txt": "zeta\n", "gone.txt": "bye\n"})
	before := e.tree(t)
	failing := &failingBridge{Bridge: mem, failOn: "z.txt"}
	e.r = newRunner(t, &tool.Context{FS: failing})
	got := e.fails(t, "apply_patch", patch(`*** Update File: a.txt
@@
-alpha
+ALPHA
*** Add File: new/dir/file.txt
+new
*** Delete File: gone.txt
*** Update File: z.txt
@@
-zeta
+ZETA`))
	contains(t, got, "writing z.txt", "put back")
	if after := e.tree(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("not rolled back:\n%v\nwant\n%v", after, before)
	}
	if failing.writes < 3 {
		t.Fatalf("only %d writes were attempted: the failure came before anything was written", failing.writes)
	}
}

// failingBridge fails writes to one path, as a full disk would.
type failingBridge struct {
	fsbridge.Bridge
	failOn string
	writes int
}

func (f *failingBridge) WriteFile(ctx context.Context, p string, data []byte, perm fs.FileMode) error {
	f.writes++
	if p == f.failOn {
		return errors.New("no space left on device")
	}
	return f.Bridge.WriteFile(ctx, p, data, perm)
}

// TestApplyPatchMatching: lines are found exactly, then without trailing
// whitespace, then without surrounding whitespace, then with plain
// punctuation; CRLF files and BOMs are kept.
func TestApplyPatchMatching(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, body, want string
	}{
		{"trailing whitespace", "a  \nb\t\nc\n", "@@\n a\n-b\n+B\n c", "a  \nB\nc\n"},
		{"surrounding whitespace", "\tif x:\n\t\treturn\n", "@@\n if x:\n-    return\n+    return 1", "\tif x:\n    return 1\n"},
		{"punctuation", "msg = “it’s — fine”\n", "@@\n-msg = \"it's - fine\"\n+msg = 'ok'", "msg = 'ok'\n"},
		{"CRLF and BOM", "\uFEFFone\r\ntwo\r\n", "@@\n one\n-two\n+2\n+3", "\uFEFFone\r\n2\r\n3\r\n"},
		{"end of file", "x\ny\nx\n", "@@\n-x\n+X\n*** End of File", "x\ny\nX\n"},
		{"insert after context", "def a():\n    pass\ndef b():\n    pass\n", "@@ def a():\n+    # a\n", "def a():\n    # a\n    pass\ndef b():\n    pass\n"},
		{"append without a final newline", "last", "@@\n+more", "last\nmore\n"},
		{"unified header as context", "1\n2\n3\n", "@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3", "1\ntwo\n3\n"},
		{"heredoc and blank lines", "a\nb\n", "\n@@\n-a\n+A\n\n", "A\nb\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bothEnvs(t, func(t *testing.T, e *env) {
				e.put(t, map[string]string{"f": c.file})
				args := patch("*** Update File: f\n" + c.body)
				if strings.HasPrefix(c.name, "heredoc") {
					args = map[string]any{"patch": "<<'EOF'\n" + args["patch"].(string) + "\nEOF\n"}
				}
				e.ok(t, "apply_patch", args)
				if got := e.get(t, "f"); got != c.want {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			})
		})
	}
}

func TestApplyPatchParseErrors(t *testing.T) {
	t.Parallel()
	e := memoryEnv(t)
	for _, c := range []struct{ patch, want string }{
		{"*** Update File: a\n@@\n-x\n+y\n*** End Patch", "the first line of the patch must be \"*** Begin Patch\""},
		{"*** Begin Patch\n*** Update File: a\n@@\n-x", "the last line of the patch must be \"*** End Patch\""},
		{"*** Begin Patch\n*** End Patch", "the patch changes no file"},
		{"*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", "line 2 of the patch: \"*** Frobnicate File: a\" is not a section header"},
		{"*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch", "line 4 of the patch: \"x\" does not start with ' '"},
		{"*** Begin Patch\n*** Update File: a\n*** End Patch", "line 2 of the patch: the update of a has no changes"},
		{"*** Begin Patch\n*** Add File: \n*** End Patch", "line 2 of the patch: \"*** Add File:\" names no file"},
	} {
		contains(t, e.fails(t, "apply_patch", map[string]any{"patch": c.patch}), "The patch cannot be read: "+c.want, "No file was changed.")
	}
}
