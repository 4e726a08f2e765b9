// Command gen writes docs/config.md, the reference of every toolbelt.yaml
// key, from the code: the configuration's Go types, their yaml (or json)
// tags, their `default` tags and their doc comments. Run it from the
// repository's root after changing the configuration:
//
//	go run ./config/gen
//
// The tools' own settings, which live under tools: (tools.exec for the shell
// tools), come from the settings types listed in [settings]. A test fails
// when docs/config.md differs from what gen writes.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// settings are the tools' settings types: the key under tools:, the
// package directory and the type.
var settings = []struct{ key, dir, typ, what string }{
	{"exec", "tools/shell", "Config", "the shell tools (exec, process)"},
	{"memory", "tools/memory", "Config", "the memory tools (memory_search, memory_get)"},
	{"browser", "tools/browser", "Config", "the browser tool"},
	{"image", "tools/image", "Config", "the image tool"},
	{"tts", "tools/tts", "Config", "the tts tool"},
	{"apply_patch", "tools/fs", "PatchConfig", "the apply_patch tool"},
}

func main() {
	root := flag.String("root", ".", "the repository's root")
	out := flag.String("o", "docs/config.md", "the file to write, relative to the root; - for stdout")
	flag.Parse()
	b, err := Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *out == "-" {
		_, _ = os.Stdout.Write(b)
		return
	}
	if err := os.WriteFile(filepath.Join(*root, *out), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// pkg is the struct types of one package, by name.
type pkg map[string]*ast.StructType

// docs are the doc comments of the types, by name.
type docs map[string]string

func load(dir string) (pkg, docs, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	types, typeDocs := pkg{}, docs{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if st, ok := ts.Type.(*ast.StructType); ok {
					types[ts.Name.Name] = st
				}
				doc := ts.Doc
				if doc == nil {
					doc = g.Doc
				}
				typeDocs[ts.Name.Name] = text(doc)
			}
		}
	}
	return types, typeDocs, nil
}

// text is a doc comment as one paragraph, up to an indented example.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var parts []string
	for _, line := range strings.Split(g.Text(), "\n") {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ") {
			break // an example block
		}
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}

// row is one key of the reference.
type row struct {
	key, typ, def, doc string
}

// walker flattens struct types into rows.
type walker struct {
	types  pkg
	tagKey string // "yaml" or "json"
	rows   []row
}

func (w *walker) fields(st *ast.StructType, prefix string) {
	for _, f := range st.Fields.List {
		tag := reflect.StructTag("")
		if f.Tag != nil {
			if s, err := strconv.Unquote(f.Tag.Value); err == nil {
				tag = reflect.StructTag(s)
			}
		}
		if len(f.Names) == 0 { // embedded: its fields are this struct's
			if id, ok := f.Type.(*ast.Ident); ok && w.types[id.Name] != nil {
				w.fields(w.types[id.Name], prefix)
			}
			continue
		}
		name, _, _ := strings.Cut(tag.Get(w.tagKey), ",")
		if name == "" || name == "-" || !f.Names[0].IsExported() {
			continue
		}
		key := prefix + name
		doc := meaning(f.Names[0].Name, text(f.Doc))
		ft := f.Type
		if star, ok := ft.(*ast.StarExpr); ok { // an optional section reads like the section
			if id, ok := star.X.(*ast.Ident); ok && w.types[id.Name] != nil {
				ft = id
			}
		}
		switch t := ft.(type) {
		case *ast.Ident:
			if t.Name == "Rules" {
				w.rows = append(w.rows, row{key, "policy rules", "", strings.TrimSpace(doc + " See [Policy rules](#policy-rules).")})
				continue
			}
			if st := w.types[t.Name]; st != nil {
				w.rows = append(w.rows, row{key, "mapping", "", doc})
				w.fields(st, key+".")
				continue
			}
		case *ast.ArrayType:
			if id, ok := t.Elt.(*ast.Ident); ok && id.Name != "AskRule" {
				if st := w.types[id.Name]; st != nil {
					w.rows = append(w.rows, row{key, "list of mappings", "", doc})
					w.fields(st, key+"[].")
					continue
				}
			}
		case *ast.MapType:
			if id, ok := t.Value.(*ast.Ident); ok {
				if id.Name == "Rules" {
					w.rows = append(w.rows, row{key + ".<name>", "policy rules", "", strings.TrimSpace(doc + " See [Policy rules](#policy-rules).")})
					continue
				}
				if st := w.types[id.Name]; st != nil {
					w.rows = append(w.rows, row{key, "mapping", "", doc})
					w.fields(st, key+".<"+placeholder(name)+">.")
					continue
				}
			}
		}
		w.rows = append(w.rows, row{key, typeName(f.Type), tag.Get("default"), doc})
	}
}

// meaning turns a field's doc comment into the meaning of its key: without
// the Go name it starts with ("Timeout is a call's time limit" becomes "A
// call's time limit"), and with [links] as plain words.
func meaning(goName, doc string) string {
	doc = strings.NewReplacer("[", "", "]", "").Replace(doc)
	for _, lead := range []string{goName + " is ", goName + " are ", goName + ": ", goName + ", when not empty, ", goName + " "} {
		if rest, ok := strings.CutPrefix(doc, lead); ok && rest != "" {
			if lead == goName+", when not empty, " {
				rest = "when not empty, " + rest
			}
			return strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	return doc
}

// placeholder names the free key of a map: agents.<id>, mcpServers.<name>.
func placeholder(key string) string {
	switch key {
	case "agents":
		return "agent"
	case "channels":
		return "channel"
	}
	return "name"
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "Duration":
			return "duration"
		case "Names":
			return "tool references"
		case "int", "int64":
			return "integer"
		case "float64":
			return "number"
		case "bool":
			return "boolean"
		case "string":
			return "string"
		}
		return t.Name
	case *ast.StarExpr: // optional, so that unset can mean the default
		return typeName(t.X)
	case *ast.ArrayType:
		if id, ok := t.Elt.(*ast.Ident); ok && id.Name == "AskRule" {
			return "list of ask rules"
		}
		return "list of " + plural(typeName(t.Elt))
	case *ast.MapType:
		return "mapping of " + plural(typeName(t.Value))
	}
	return fmt.Sprint(e)
}

func plural(s string) string {
	if strings.HasSuffix(s, "s") {
		return s
	}
	return s + "s"
}

// Generate returns docs/config.md for the repository at root.
func Generate(root string) ([]byte, error) {
	types, typeDocs, err := load(filepath.Join(root, "config"))
	if err != nil {
		return nil, err
	}
	cfg := types["Config"]
	if cfg == nil {
		return nil, fmt.Errorf("config.Config not found")
	}
	var b bytes.Buffer
	b.WriteString(`# Configuration reference

<!-- Generated by "go run ./config/gen" from the code in config/ and the
tools' settings types; do not edit. A test fails when this file is out of date. -->

Toolbelt reads one YAML file, ` + "`toolbelt.yaml`" + `: the one given with ` + "`--config`" + ` or
` + "`TOOLBELT_CONFIG`" + `, else ` + "`./toolbelt.yaml`" + `, else ` + "`toolbelt/toolbelt.yaml`" + ` in the user's configuration
directory. Every key is optional: each default works on a laptop. Unknown keys
and wrong types are errors that name the line. ` + "`toolbelt init`" + ` writes an annotated
file, ` + "`toolbelt config check`" + ` checks one, ` + "`toolbelt config show`" + ` prints what is in effect.

Durations are written as Go durations: ` + "`30s`, `5m`, `1h`" + `. Tool references are a
tool name, an alias, a ` + "`*`" + ` glob or a ` + "`group:`" + ` reference (` + "`group:web`" + `), one or a list.

`)
	var top []row // the scalar keys at the top
	for _, f := range cfg.Fields.List {
		if id, ok := f.Type.(*ast.Ident); ok && types[id.Name] == nil && len(f.Names) > 0 && f.Tag != nil {
			w := &walker{types: types, tagKey: "yaml"}
			w.fields(&ast.StructType{Fields: &ast.FieldList{List: []*ast.Field{f}}}, "")
			top = append(top, w.rows...)
		}
	}
	b.WriteString("## Top-level keys\n\n")
	table(&b, top)
	for _, f := range cfg.Fields.List {
		if len(f.Names) == 0 || f.Tag == nil {
			continue
		}
		if id, ok := f.Type.(*ast.Ident); ok && types[id.Name] == nil {
			continue // in the top-level table
		}
		tag, _ := strconv.Unquote(f.Tag.Value)
		name, _, _ := strings.Cut(reflect.StructTag(tag).Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		w := &walker{types: types, tagKey: "yaml"}
		w.fields(&ast.StructType{Fields: &ast.FieldList{List: []*ast.Field{f}}}, "")
		fmt.Fprintf(&b, "## `%s`\n\n%s\n\n", name, meaning(f.Names[0].Name, text(f.Doc)))
		if name == "tools" {
			b.WriteString("Under `tools:` live both the global [policy rules](#policy-rules) and the tools' own\n" +
				"settings: any other key is the settings of the tool (or section) it names.\n\n")
			w.rows = w.rows[:0]
			w.fields(types["Rules"], "tools.")
			for i := range w.rows {
				w.rows[i].doc = "See [Policy rules](#policy-rules)."
			}
			for _, tf := range types["Tools"].Fields.List {
				if len(tf.Names) > 0 { // the keys of tools: besides the policy rules
					w.fields(&ast.StructType{Fields: &ast.FieldList{List: []*ast.Field{tf}}}, "tools.")
				}
			}
			w.rows = append(w.rows, row{"tools.<tool>", "mapping", "", "The settings of the tool or section named, such as `tools.exec` below; a directory tool's are what its metadata.json declares (see docs/directory-tools.md#settings). Imported MCP tools take none."})
			table(&b, w.rows)
			for _, s := range settings {
				if err := settingsSection(&b, root, s.key, s.dir, s.typ, s.what); err != nil {
					return nil, err
				}
			}
			continue
		}
		if len(w.rows) > 0 && w.rows[0].typ == "mapping" {
			w.rows = w.rows[1:] // the section says what the mapping is
		}
		table(&b, w.rows)
	}
	fmt.Fprintf(&b, "## Policy rules\n\n%s The same keys make up `tools:`, `agents.<agent>.tools`,\n`channels.<channel>.tools`, `sandbox.tools`, `subagents.tools` and `byProvider.<name>`.\n\n", meaning("Rules", typeDocs["Rules"]))
	w := &walker{types: types, tagKey: "yaml"}
	w.fields(types["Rules"], "")
	table(&b, w.rows)
	fmt.Fprintf(&b, "### Ask rules\n\nAn ask rule (an element of `ask`) %s\n\n", strings.TrimPrefix(typeDocs["AskRule"], "AskRule "))
	w = &walker{types: types, tagKey: "yaml"}
	w.fields(types["AskRule"], "")
	table(&b, w.rows)
	return b.Bytes(), nil
}

// settingsSection documents the settings type typ of the package in dir,
// kept under tools.<key>.
func settingsSection(b *bytes.Buffer, root, key, dir, typ, what string) error {
	types, _, err := load(filepath.Join(root, dir))
	if err != nil {
		return err
	}
	st := types[typ]
	if st == nil {
		return fmt.Errorf("%s: type %s not found", dir, typ)
	}
	fmt.Fprintf(b, "### `tools.%s`: settings of %s\n\n", key, what)
	w := &walker{types: types, tagKey: "json"}
	w.fields(st, "tools."+key+".")
	fmt.Fprintf(b, "These keys go under `tools:` (Go type %s.%s), as in\n\n```yaml\n%s```\n\n", filepath.Base(dir), typ, example("tools."+key, w.rows))
	table(b, w.rows)
	return nil
}

// example returns a toolbelt.yaml that sets the first key right below
// prefix with a default that is one word (its default value), nested as
// the key says, so the reference shows where the keys go with an example
// that loads (a key further down may need others beside it); without such
// a key, prefix set to an empty mapping.
func example(prefix string, rows []row) string {
	for _, r := range rows {
		below := strings.TrimPrefix(r.key, prefix+".")
		if r.def != "" && !strings.ContainsAny(r.def, " `\"'") && r.typ != "mapping" && !strings.ContainsAny(r.key, "<[") && !strings.Contains(below, ".") {
			return nest(r.key, r.def+"   # the default")
		}
	}
	return nest(prefix, "{}")
}

// nest writes key (dotted) = value as nested YAML mappings.
func nest(key, value string) string {
	var b strings.Builder
	parts := strings.Split(key, ".")
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			b.WriteString(" " + value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func table(b *bytes.Buffer, rows []row) {
	b.WriteString("| key | type | default | meaning |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		def := r.def
		if def != "" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", r.key, r.typ, def, strings.ReplaceAll(r.doc, "|", `\|`))
	}
	b.WriteString("\n")
}
