package main

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// scaffold holds the files `toolbelt tool new` writes, per language. A
// ".tmpl" suffix is dropped when writing (it keeps Go files out of this
// module); {{NAME}} becomes the tool's name.
//
//go:embed scaffold
var scaffold embed.FS

type toolNewCmd struct {
	Name string `arg:"" help:"The tool's name (letters, digits, '_' and '-'); the folder is made under --dir."`
	Lang string `default:"sh" enum:"go,python,node,sh" help:"The handler's language: go, python, node or sh."`
	Dir  string `default:"tools" help:"The folder to make the tool's folder in." placeholder:"DIR"`
}

// langs says, per language, how the handler runs and how its test runs.
var langs = map[string]struct{ handler, interpreter, test string }{
	"sh":     {"handler.sh", "", "sh test.sh"},
	"python": {"handler.py", "", "python3 -m unittest test_handler.py"},
	"node":   {"handler.js", "", "node --test"},
	"go":     {"main.go", "go run", "go test ./..."},
}

func (c *toolNewCmd) Run(e *env) error {
	if err := tool.ValidateName(c.Name); err != nil {
		return err
	}
	l, ok := langs[c.Lang]
	if !ok {
		return errNoLang
	}
	folder := filepath.Join(c.Dir, c.Name)
	if _, err := os.Stat(folder); err == nil {
		return fmt.Errorf("%s already exists: choose another name or remove it", folder)
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	md := map[string]any{
		"name":        c.Name,
		"description": "Greets someone by name. Replace this with what the tool does and when a model should use it.",
		"version":     "0.1.0",
		"riskLevel":   "low",
		"readOnly":    true,
		"timeout":     30,
	}
	if c.Lang == "go" {
		md["handler"], md["interpreter"] = l.handler, l.interpreter
	}
	b, _ := json.MarshalIndent(md, "", "  ")
	files := map[string][]byte{"metadata.json": append(b, '\n')}
	files["schema.json"] = mustRead("scaffold/schema.json")
	err := fs.WalkDir(scaffold, "scaffold/"+c.Lang, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimSuffix(path.Base(p), ".tmpl")
		files[name] = []byte(strings.ReplaceAll(string(mustRead(p)), "{{NAME}}", c.Name))
		return nil
	})
	if err != nil {
		return err
	}
	for name, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "handler") && !strings.Contains(name, "test") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(folder, name), body, mode); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "Wrote the %s tool %s in %s.\n", c.Lang, c.Name, folder)
	fmt.Fprintf(e.stdout, "  check it:      toolbelt tool check %s\n", folder)
	fmt.Fprintf(e.stdout, "  try it:        toolbelt tool try %s --args '{\"name\": \"Ada\"}'\n", folder)
	fmt.Fprintf(e.stdout, "  test it:       (cd %s && %s)\n", folder, l.test)
	fmt.Fprintf(e.stdout, "  serve it:      list %s under tools.dirs in toolbelt.yaml\n", c.Dir)
	return nil
}

func mustRead(p string) []byte {
	b, err := scaffold.ReadFile(p)
	if err != nil {
		return nil
	}
	return b
}
