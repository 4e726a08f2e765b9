package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is what a golden file holds: the compiled schema and the report.
type golden struct {
	Schema    any      `json:"schema"`
	Changes   []string `json:"changes"`
	NotStrict []string `json:"notStrict,omitempty"`
}

// TestGolden compiles real MCP tool schemas (copied from the corpus into
// testdata) for every dialect and compares the result with testdata/golden.
// Run with -update to rewrite the files after a deliberate change, and
// review the diff.
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in testdata: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Decode(src)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, d := range testDialects() {
			t.Run(name+"/"+d.Name(), func(t *testing.T) {
				t.Parallel()
				checkCompiled(t, d, doc)
				out, rep := d.Compile(doc)
				g := golden{Schema: out, Changes: []string{}}
				for _, c := range rep.Changes {
					g.Changes = append(g.Changes, c.String())
				}
				for _, c := range rep.NotStrict {
					g.NotStrict = append(g.NotStrict, c.String())
				}
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(g); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", "golden", name+"."+strings.ReplaceAll(d.Name(), ":", "_")+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
				}
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("%s differs from the compiled schema (run with -update and review the diff):\n%s", path, b.String())
				}
			})
		}
	}
}
