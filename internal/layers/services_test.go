package layers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// pipeline are the packages that run calls (invoke) and reverse them
// (undo): a service tool.Context carries in a field is one of theirs.
var pipeline = []string{"invoke", "undo"}

// TestContextCarriesOnlyPipelineServices: every field of tool.Context whose
// type is an interface of package tool is named by the pipeline, which
// uses it (the journal, the outputs, the job queue). A service only some
// tools use is declared in their package and carried under its key
// (tool.Service), so the vocabulary does not grow with every feature.
func TestContextCarriesOnlyPipelineServices(t *testing.T) {
	t.Parallel()
	g := load(t)
	toolFiles := parsed(t, g[module+"/tool"])
	interfaces := map[string]bool{}
	var context *ast.StructType
	for _, f := range toolFiles {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			switch typ := ts.Type.(type) {
			case *ast.InterfaceType:
				interfaces[ts.Name.Name] = true
			case *ast.StructType:
				if ts.Name.Name == "Context" {
					context = typ
				}
			}
			return false
		})
	}
	if context == nil {
		t.Fatal("package tool declares no Context struct")
	}
	used := map[string]bool{}
	for _, rel := range pipeline {
		for _, f := range parsed(t, g[module+"/"+rel]) {
			for name := range toolNames(f) {
				used[name] = true
			}
		}
	}
	for _, field := range context.Fields.List {
		id, ok := field.Type.(*ast.Ident)
		if !ok || !interfaces[id.Name] || used[id.Name] {
			continue
		}
		t.Errorf("tool.Context carries a tool.%s, which no pipeline package (%v) uses: declare the interface in the tools package that uses it and carry it under that package's key (tool.NewService), as tools/memory does (docs/tools.md)", id.Name, pipeline)
	}
}

// parsed returns the non-test files of package p.
func parsed(t *testing.T, p *pkg) []*ast.File {
	t.Helper()
	if p == nil {
		t.Fatal("go list did not describe a package this test reads")
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// toolNames returns the names of package tool that file f refers to
// (tool.X), by the name it imports the package under.
func toolNames(f *ast.File) map[string]bool {
	local := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == module+"/tool" {
			local = "tool"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	names := map[string]bool{}
	if local == "" {
		return names
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				names[sel.Sel.Name] = true
			}
		}
		return true
	})
	return names
}
