package doctest

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

const doc = "# Title\n\n```console\n$ echo one\none\n\n$ printf 'a\\nb' \\\n    && false\na\nb\n[exit 1]\n```\n\n```sh\nnot tested\n```\n\n````console skip: needs a server\n$ curl http://127.0.0.1:1/\n````\n\n```console needs=bash,sh\n$ cat <<'EOF'\n> x\n> EOF\nx\n$ cd sub\n$ pwd\n…/sub\n```\n"

func TestParse(t *testing.T) {
	t.Parallel()
	blocks, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("got %d blocks, want 3", len(blocks))
	}
	b := blocks[0]
	if b.Line != 3 || len(b.Commands) != 2 || b.Skip() != "" {
		t.Fatalf("block 0: %+v", b)
	}
	if c := b.Commands[1]; c.Script != "printf 'a\\nb' \\\n    && false" || !slices.Equal(c.Want, []string{"a", "b", "[exit 1]"}) {
		t.Errorf("command with a continuation: %+v", c)
	}
	if !slices.Equal(b.Commands[0].Want, []string{"one"}) || b.Commands[0].blank != 1 {
		t.Errorf("the empty line before the next command is not output: %+v", b.Commands[0])
	}
	if got := blocks[1].Skip(); got != "needs a server" {
		t.Errorf("skip reason %q", got)
	}
	if got := blocks[2].Needs(); !slices.Equal(got, []string{"bash", "sh"}) {
		t.Errorf("needs %q", got)
	}
	if got := blocks[2].Commands[0].Script; got != "cat <<'EOF'\nx\nEOF" {
		t.Errorf("here-document %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"```console\noutput without a command\n```\n", "```console\n$ echo never closed\n"} {
		if _, err := Parse(doc); err == nil {
			t.Errorf("Parse(%q) succeeded", doc)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b"}, []string{"a", "c"}, false},
		{[]string{"a"}, []string{"a", "b"}, false},
		{[]string{"id call_…, done"}, []string{"id call_1f2e, done"}, true},
		{[]string{"id call_…, done"}, []string{"id call_1f2e, failed"}, false},
		{[]string{"first", "…", "last"}, []string{"first", "x", "y", "last"}, true},
		{[]string{"first", "…", "last"}, []string{"first", "last"}, true},
		{[]string{"first", "…", "last"}, []string{"first", "x"}, false},
		{[]string{"a.b"}, []string{"axb"}, false},
	} {
		if got := Match(c.want, c.got); got != c.ok {
			t.Errorf("Match(%q, %q) = %v", c.want, c.got, got)
		}
	}
}

// TestRun runs a document's blocks and shows that a drifted example fails
// to match while the others do, and that Rewrite puts what ran in its
// place.
func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(doc, "$ echo one\none", "$ echo one\ntwo", 1) // drift
	blocks, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Replace: []string{dir, "$WORK"}}
	outputs := make([][][]string, len(blocks))
	for bi, b := range blocks {
		if b.Skip() != "" {
			continue
		}
		results, err := s.Run(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		outputs[bi] = make([][]string, len(results))
		for ci, r := range results {
			match := Match(b.Commands[ci].Want, r.Got)
			if drifted := bi == 0 && ci == 0; match == drifted {
				t.Errorf("block %d command %d: match %v, got %q", bi, ci, match, r.Got)
			}
			if !match {
				outputs[bi][ci] = r.Got
			}
		}
	}
	if s.Dir != dir+"/sub" {
		t.Errorf("the working directory did not carry over: %s", s.Dir)
	}
	if got := Rewrite(doc, blocks, outputs); got != strings.Replace(doc, "$ echo one\ntwo", "$ echo one\none", 1) {
		t.Errorf("Rewrite:\n%s", got)
	}
}

// TestStateCarriesExports shows that a variable one block exports is set in
// the next, as in one shell, and that an unexported one is not.
func TestStateCarriesExports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocks, err := Parse("```console\n$ export GREETING=hello; LOCAL=x\n```\n\n```console\n$ echo \"$GREETING ${LOCAL:-unset}\"\nhello unset\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, State: dir + "/state.sh"}
	var got []string
	for _, b := range blocks {
		results, err := s.Run(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		got = results[len(results)-1].Got
	}
	if !Match(blocks[1].Commands[0].Want, got) {
		t.Errorf("the second block printed %q", got)
	}
}

// TestRewriteKeepsWildcards shows that rewriting a drifted output keeps the
// expected lines with "…" that still match, and takes the new lines as run.
func TestRewriteKeepsWildcards(t *testing.T) {
	t.Parallel()
	doc := "```console\n$ toolbelt call x\nid call_…\ntime …\nold line\n```\n"
	blocks, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := Rewrite(doc, blocks, [][][]string{{{"id call_42", "new line", "time 21:43"}}})
	want := "```console\n$ toolbelt call x\nid call_…\nnew line\ntime …\n```\n"
	if got != want {
		t.Errorf("Rewrite =\n%s\nwant\n%s", got, want)
	}
}
