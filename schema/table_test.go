package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dialectTable renders the dialect table of the README from the dialects
// themselves: which keywords each keeps, rewrites or moves into
// descriptions.
func dialectTable() string {
	ds := Dialects()
	var b strings.Builder
	b.WriteString("| keyword |")
	for _, d := range ds {
		b.WriteString(" " + d.Name() + " |")
	}
	b.WriteString("\n|---|")
	for range ds {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	row := func(label string, cell func(d Dialect) string) {
		b.WriteString("| " + label + " |")
		for _, d := range ds {
			b.WriteString(" " + cell(d) + " |")
		}
		b.WriteByte('\n')
	}
	kept, described := "kept", "→ description"
	keywords := func(kws ...string) func(Dialect) string {
		return func(d Dialect) string {
			var in, out []string
			for _, k := range kws {
				if d.Accepts(k) {
					in = append(in, k)
				} else {
					out = append(out, k)
				}
			}
			switch {
			case len(out) == 0:
				return kept
			case len(in) == 0:
				return described
			}
			return strings.Join(in, ", ") + " kept; " + strings.Join(out, ", ") + " " + described
		}
	}
	row("`$ref` `$defs` `definitions`", func(d Dialect) string {
		switch {
		case !d.refs():
			return "inlined; cycles cut with a typed placeholder"
		case !d.Accepts("definitions"):
			return "kept (`definitions` → `$defs`)"
		}
		return kept
	})
	row("`allOf`", func(d Dialect) string {
		if d.Accepts("allOf") {
			return kept
		}
		return "merged"
	})
	row("`anyOf`", func(d Dialect) string {
		switch {
		case !d.unions():
			return "merged into one schema; the valid forms → description"
		case d.simplify:
			return "kept; nullable and literal unions simplified"
		}
		return kept
	})
	row("`oneOf`", func(d Dialect) string {
		switch {
		case d.Accepts("oneOf"):
			return "as anyOf"
		case d.unions():
			return "→ anyOf (exactly-one checked locally)"
		}
		return "merged, like anyOf"
	})
	row("null: `[\"T\",\"null\"]`, anyOf with null, `nullable`", func(d Dialect) string {
		switch {
		case !d.simplify:
			return kept
		case d.typeArrays:
			return "`[\"T\",\"null\"]`"
		case d.nullableKeyword():
			return "`T` + `nullable: true`"
		}
		return "`anyOf: [T, {\"type\":\"null\"}]`"
	})
	row("`const`", func(d Dialect) string {
		if d.Accepts("const") {
			return kept
		}
		return "→ one-value enum"
	})
	row("`enum`", func(d Dialect) string {
		if d.stringEnums {
			return "strings only, `type: string`; other values " + described
		}
		return kept
	})
	row("`format`", func(d Dialect) string {
		switch {
		case !d.Accepts("format"):
			return described
		case d.formats == nil:
			return kept
		}
		var list []string
		for _, t := range sortedKeys(d.formats) {
			list = append(list, t+": "+strings.Join(d.formats[t].sorted(), ", "))
		}
		return "only " + strings.Join(list, "; ") + "; others " + described
	})
	row("`pattern`", keywords("pattern"))
	row("`minLength` `maxLength`", keywords("minLength", "maxLength"))
	row("`minimum` `maximum`", keywords("minimum", "maximum"))
	row("`exclusiveMinimum` `exclusiveMaximum` `multipleOf`", keywords("exclusiveMinimum", "exclusiveMaximum", "multipleOf"))
	row("`minItems` `maxItems`", keywords("minItems", "maxItems"))
	row("`uniqueItems` `contains` `minContains` `maxContains`", keywords("uniqueItems", "contains", "minContains", "maxContains"))
	row("`prefixItems` (tuples)", func(d Dialect) string {
		switch {
		case d.accept == nil:
			return kept
		case d.Accepts("prefixItems"):
			return "kept (draft-07 `items: [...]` → `prefixItems`)"
		}
		return "items = any of the positions; positions " + described
	})
	row("`items`", func(d Dialect) string {
		if d.items {
			return "added (any value) where an array has none"
		}
		return kept
	})
	row("`additionalProperties`", func(d Dialect) string {
		switch {
		case d.strict:
			return "`false` on every object; a map cannot be strict"
		case d.Accepts("additionalProperties"):
			return kept
		}
		return described + " (`false`: removed, still enforced)"
	})
	row("`patternProperties` `propertyNames`", keywords("patternProperties", "propertyNames"))
	row("`minProperties` `maxProperties`", keywords("minProperties", "maxProperties"))
	row("`required`", func(d Dialect) string {
		switch {
		case d.strict:
			return "every property; optional ones made nullable"
		case d.declaredRequired:
			return "declared properties only; others " + described
		}
		return kept
	})
	row("`not` `if`/`then`/`else` `dependentRequired` `dependentSchemas`", keywords("not", "if", "then", "else", "dependentRequired", "dependentSchemas"))
	row("`default` `examples`", keywords("default", "examples"))
	row("`title`", func(d Dialect) string {
		if d.Accepts("title") {
			return kept
		}
		return "→ description when there is none, else removed"
	})
	row("`$schema` `$id` `$comment`, unknown keywords", func(d Dialect) string {
		if d.accept == nil {
			return kept
		}
		if d.Accepts("$id") {
			return "`$id` kept; others removed"
		}
		return "removed"
	})
	row("untyped schema", func(d Dialect) string {
		switch {
		case d.typed:
			return "type inferred from its keywords; any value → `string`"
		case d.strict:
			return "type inferred from its keywords; any value cannot be strict"
		}
		return kept
	})
	return b.String()
}

// TestDialectTableInDocs keeps the dialect table of docs/schemas.md in step with
// the dialects: run with -update to rewrite it.
func TestDialectTableInDocs(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "docs", "schemas.md")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- dialect table -->\n", "<!-- end dialect table -->"
	i, j := strings.Index(string(text), start), strings.Index(string(text), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, start, end)
	}
	table := dialectTable()
	if *update {
		out := string(text[:i+len(start)]) + table + string(text[j:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(text[i+len(start) : j]); got != table {
		t.Errorf("the dialect table in %s is out of date; run go test ./schema -run TestDialectTableInDocs -update\n%s", path, table)
	}
}
