package schema

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusFingerprints compiles every tool of the corpus for every
// dialect and compares a SHA-256 of the compiled schema and the report
// (every change, in order) with testdata/corpus.sha256: an optimisation of
// the compiler must leave every output byte for byte as it was. After a
// deliberate change of the output, rewrite the file with -update (and
// review the golden files' diff, which shows what changed).
func TestCorpusFingerprints(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, tl := range loadCorpus(t) {
		for _, d := range testDialects() {
			out, rep := d.Compile(tl.Doc)
			h := sha256.New()
			fmt.Fprintln(h, encode(t, out))
			for _, c := range rep.Changes {
				fmt.Fprintln(h, c.String())
			}
			fmt.Fprintln(h, "notStrict")
			for _, c := range rep.NotStrict {
				fmt.Fprintln(h, c.String())
			}
			fmt.Fprintf(&b, "%x %s/%s %s\n", h.Sum(nil)[:12], tl.Server, tl.Name, d.Name())
		}
	}
	path := filepath.Join("testdata", "corpus.sha256")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCorpusFingerprints -update to create it)", err)
	}
	got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
	if len(got) != len(wantLines) {
		t.Fatalf("%d compilations, %s has %d", len(got)-1, path, len(wantLines)-1)
	}
	for i := range got {
		if got[i] != wantLines[i] {
			t.Errorf("compiled output changed: got %q, want %q", got[i], wantLines[i])
		}
	}
}

// TestKeywordClassFollowsTheLists: keywordClass, which children and shapes
// use instead of searching the lists, gives each keyword of the lists its
// class and its position as the bit, and nothing to any other key.
func TestKeywordClassFollowsTheLists(t *testing.T) {
	bit := 0
	for _, l := range []struct {
		class int
		list  []string
	}{{classSub, subschemaKeywords}, {classMap, schemaMapKeywords}, {classList, schemaListKeywords}} {
		for _, k := range l.list {
			if c, b := keywordClass(k); c != l.class || b != bit {
				t.Errorf("keywordClass(%q) = %d, %d; want %d, %d", k, c, b, l.class, bit)
			}
			bit++
		}
	}
	for _, k := range []string{"type", "description", "enum", "$ref", "required", "default", hintKey, ""} {
		if c, b := keywordClass(k); c != 0 || b != -1 {
			t.Errorf("keywordClass(%q) = %d, %d; want 0, -1", k, c, b)
		}
	}
}
