package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpusTool is one tool of an MCP server's tools/list in the corpus.
type corpusTool struct {
	Server, Name string
	// Doc is its input schema, decoded.
	Doc any
}

// corpusDir holds real MCP servers' tools/list answers, kept in the
// repository's testdata so that a fresh clone runs the corpus tests.
var corpusDir = filepath.Join("..", "testdata", "mcp-tools")

// loadCorpus returns every tool of the corpus; a missing corpus fails the test.
func loadCorpus(tb testing.TB) []corpusTool {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus files in %s: the repository's testdata is incomplete", corpusDir)
	}
	var out []corpusTool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var server struct {
			Server string `json:"server"`
			Tools  []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &server); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, t := range server.Tools {
			doc, err := Decode(t.InputSchema)
			if err != nil {
				tb.Fatalf("%s/%s: %v", server.Server, t.Name, err)
			}
			out = append(out, corpusTool{Server: server.Server, Name: t.Name, Doc: doc})
		}
	}
	return out
}

// encode encodes a value or fails the test.
func encode(tb testing.TB, v any) string {
	tb.Helper()
	b, err := Encode(v)
	if err != nil {
		tb.Fatalf("encoding: %v", err)
	}
	return string(b)
}

// propertyPath is a property reachable from a schema's root: its path
// through the arguments ("comments[].line") and where it is declared in the
// schema, as a report path ("properties.comments.items.anyOf[1].properties.line").
type propertyPath struct {
	args, schema string
}

// propertyPaths walks a schema the way arguments are shaped — through
// properties, items, unions, allOf and local references (each reference
// once per branch) — and returns every property it declares. It is written
// independently of the compiler. complete is false when the schema was too
// large to walk in full (references can make it exponential).
func propertyPaths(doc any) (paths []propertyPath, complete bool) {
	var out []propertyPath
	seen := map[string]bool{}
	budget := 20000
	var walk func(v any, args, loc string, refs []string, depth int)
	walk = func(v any, args, loc string, refs []string, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > 40 || budget <= 0 {
			return
		}
		budget--
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") && !slices.Contains(refs, ref) {
			ck := providerCheck{root: doc}
			walk(ck.pointerTarget(ref), args, loc, append(slices.Clone(refs), ref), depth+1)
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for _, k := range sortedKeys(props) {
				a := k
				if args != "" {
					a = args + "." + k
				}
				l := child(child(loc, "properties"), k)
				if !seen[a] {
					seen[a] = true
					out = append(out, propertyPath{args: a, schema: l})
				}
				walk(props[k], a, l, refs, depth+1)
			}
		}
		switch items := m["items"].(type) {
		case map[string]any:
			walk(items, args+"[]", child(loc, "items"), refs, depth+1)
		case []any:
			for i, s := range items {
				walk(s, args+"[]", index(child(loc, "items"), i), refs, depth+1)
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
			list, _ := m[k].([]any)
			for i, s := range list {
				a := args
				if k == "prefixItems" {
					a += "[]"
				}
				walk(s, a, index(child(loc, k), i), refs, depth+1)
			}
		}
		if ap, ok := m["additionalProperties"].(map[string]any); ok {
			walk(ap, args+".*", child(loc, "additionalProperties"), refs, depth+1)
		}
	}
	walk(doc, "", "", nil, 0)
	return out, budget > 0
}

// lostProperties returns the properties of orig that compiled lacks and
// that no change of the report explains: a change at or above where the
// property was declared that says it was removed, described or cut.
func lostProperties(orig, compiled any, rep Report) []string {
	have := map[string]bool{}
	after, complete := propertyPaths(compiled)
	before, complete2 := propertyPaths(orig)
	if !complete || !complete2 {
		return nil
	}
	for _, p := range after {
		have[p.args] = true
	}
	var lost []string
	for _, p := range before {
		if have[p.args] || explained(p.schema, rep) {
			continue
		}
		lost = append(lost, p.args+" (declared at "+p.schema+")")
	}
	return lost
}

func explained(loc string, rep Report) bool {
	for _, c := range rep.Changes {
		above := c.Path == "" || loc == c.Path || strings.HasPrefix(loc, c.Path+".") || strings.HasPrefix(loc, c.Path+"[")
		says := strings.Contains(c.Action, "moved to description") || strings.Contains(c.Action, "removed") || strings.Contains(c.Action, "cut")
		if above && says {
			return true
		}
	}
	return false
}
