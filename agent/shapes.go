package agent

import (
	"encoding/json"
	"strings"
)

// Shape is another agent's argument shape for one of Toolbelt's tools:
// models trained on that agent send it. Apply rewrites arguments in that
// shape into the tool's own, and reports false for arguments not in it.
type Shape struct {
	// Names are the tool names the shape comes with (case does not
	// matter); the call goes to Tool.
	Names []string
	Tool  string
	// Name says whose shape it is, for the result's details.
	Name  string
	Apply func(args map[string]any) (map[string]any, bool)
}

// Shapes are the argument shapes the loop accepts besides the tools' own.
// Simple renames (file_path → path) are the pipeline's parameter aliases;
// these change the structure.
var Shapes = []Shape{
	{Names: []string{"edit", "Edit"}, Tool: "edit", Name: "Claude Code edit (file_path, old_string, new_string, replace_all)", Apply: singleEdit("old_string", "new_string", "replace_all")},
	{Names: []string{"edit", "str_replace", "str_replace_editor", "str_replace_based_edit_tool"}, Tool: "edit", Name: "str_replace edit (path, old_str, new_str)", Apply: singleEdit("old_str", "new_str", "")},
	{Names: []string{"edit"}, Tool: "edit", Name: "single edit (path, oldText, newText)", Apply: singleEdit("oldText", "newText", "replaceAll")},
	{Names: []string{"edit", "MultiEdit", "multi_edit"}, Tool: "edit", Name: "Claude Code MultiEdit (file_path, edits of old_string, new_string, replace_all)", Apply: multiEdit},
}

// pathOf returns the file path of edit-like arguments.
func pathOf(args map[string]any) (any, bool) {
	for _, k := range []string{"path", "file_path", "filePath"} {
		if p, ok := args[k]; ok {
			return p, true
		}
	}
	return nil, false
}

// singleEdit rewrites {path|file_path, OLD, NEW, ALL?} into {path, edits: [{oldText, newText, replaceAll?}]}.
func singleEdit(old, new, all string) func(map[string]any) (map[string]any, bool) {
	return func(args map[string]any) (map[string]any, bool) {
		p, ok := pathOf(args)
		o, hasOld := args[old]
		n, hasNew := args[new]
		if !ok || !hasOld || !hasNew || args["edits"] != nil {
			return nil, false
		}
		e := map[string]any{"oldText": o, "newText": n}
		if all != "" {
			if v, ok := args[all]; ok {
				e["replaceAll"] = v
			}
		}
		return map[string]any{"path": p, "edits": []any{e}}, true
	}
}

// multiEdit rewrites {file_path, edits: [{old_string, new_string, replace_all?}]}.
func multiEdit(args map[string]any) (map[string]any, bool) {
	p, ok := pathOf(args)
	list, isList := args["edits"].([]any)
	if !ok || !isList || len(list) == 0 {
		return nil, false
	}
	out := make([]any, len(list))
	changed := false
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		if _, own := m["oldText"]; own {
			out[i] = m
			continue
		}
		o, hasOld := m["old_string"]
		n, hasNew := m["new_string"]
		if !hasOld || !hasNew {
			return nil, false
		}
		e := map[string]any{"oldText": o, "newText": n}
		if v, ok := m["replace_all"]; ok {
			e["replaceAll"] = v
		}
		out[i] = e
		changed = true
	}
	if _, own := args["path"]; own && !changed {
		return nil, false
	}
	return map[string]any{"path": p, "edits": out}, true
}

// reshape returns the call's name and arguments in the tool's own shape,
// and the shape's name, when they came in another agent's shape.
func reshape(name string, args json.RawMessage) (string, json.RawMessage, string) {
	var obj map[string]any
	decoded := false
	for _, s := range Shapes {
		if !matchName(s.Names, name) {
			continue
		}
		if !decoded {
			decoded = true
			if json.Unmarshal(args, &obj) != nil || obj == nil {
				return name, args, ""
			}
		}
		if out, ok := s.Apply(obj); ok {
			b, err := json.Marshal(out)
			if err != nil {
				return name, args, ""
			}
			return s.Tool, b, s.Name
		}
	}
	return name, args, ""
}

func matchName(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
