package invoke

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
)

// Shape is another agent's argument shape for one of Toolbelt's core
// tools: models trained on that agent send it, under that agent's tool
// name. Run rewrites a call in such a shape into the tool's own before the
// pipeline sees it, and the result's details name the shape
// ("argumentsShape"). Arguments a shape does not know stay as they are, for
// validation to report.
type Shape struct {
	// Names are the tool names the shape comes with; the call goes to Tool.
	Names []string
	// Exact: the names match only in this case (Claude Code's Bash takes
	// milliseconds, exec and bash take seconds).
	Exact bool
	Tool  string
	// Name says whose shape it is, for the result's details.
	Name string
	// Hints, when set, are texts one of which the arguments' JSON holds
	// when they may be in the shape (a key's name, as it also appears in
	// arguments sent as a JSON string): calls in the tool's own shape are
	// not decoded to find out.
	Hints []string
	// Apply rewrites arguments in the shape into the tool's, and reports
	// false for arguments not in it. It may change args.
	Apply func(args map[string]any) (map[string]any, bool)
}

// Shapes are the argument shapes the pipeline accepts besides the tools'
// own, tried in order. Simple renames of one parameter (file_path → path)
// are the tools' parameter aliases; these change names of tools, units or
// structure.
var Shapes = []Shape{
	// Edits.
	{Names: []string{"edit"}, Tool: "edit", Hints: []string{"old_string"}, Name: "Claude Code Edit (file_path, old_string, new_string, replace_all)", Apply: singleEdit("old_string", "new_string", "replace_all")},
	{Names: []string{"edit", "str_replace", "str_replace_editor", "str_replace_based_edit_tool"}, Tool: "edit", Hints: []string{"old_str"}, Name: "str_replace edit (path, old_str, new_str)", Apply: singleEdit("old_str", "new_str", "")},
	{Names: []string{"edit"}, Tool: "edit", Hints: []string{"oldText"}, Name: "single edit (path, oldText, newText)", Apply: singleEdit("oldText", "newText", "replaceAll")},
	{Names: []string{"edit", "MultiEdit", "multi_edit"}, Tool: "edit", Hints: []string{"old_string"}, Name: "Claude Code MultiEdit (file_path, edits of old_string, new_string, replace_all)", Apply: multiEdit},
	{Names: []string{"replace"}, Tool: "edit", Name: "Gemini CLI replace (file_path, old_string, new_string, expected_replacements)", Apply: geminiReplace},
	// Reads and writes.
	{Names: []string{"read"}, Tool: "read", Hints: []string{"file_path"}, Name: "Claude Code Read (file_path, offset, limit)", Apply: renamed("file_path", "path")},
	{Names: []string{"read_file"}, Tool: "read", Name: "Gemini CLI read_file (absolute_path, offset from 0, limit)", Apply: geminiRead},
	{Names: []string{"write"}, Tool: "write", Hints: []string{"file_path"}, Name: "Claude Code Write (file_path, content)", Apply: renamed("file_path", "path")},
	{Names: []string{"write_file"}, Tool: "write", Name: "Gemini CLI write_file (file_path, content)", Apply: renamed("file_path", "path")},
	// Shell.
	{Names: []string{"Bash"}, Exact: true, Tool: "exec", Name: "Claude Code Bash (command, timeout in ms, description, run_in_background)", Apply: claudeBash},
	{Names: []string{"shell", "exec", "bash", "container.exec", "local_shell"}, Tool: "exec", Hints: []string{"["}, Name: "Codex shell (command as argv, workdir, timeout_ms)", Apply: codexShell},
	{Names: []string{"run_shell_command"}, Tool: "exec", Name: "Gemini CLI run_shell_command (command, directory, description)", Apply: geminiShell},
	// Search.
	{Names: []string{"grep"}, Tool: "grep", Hints: []string{"-i", "-n", "-A", "-B", "-C", "head_limit", "output_mode"}, Name: "Claude Code Grep (pattern, path, glob, -i, -A/-B/-C, head_limit, output_mode)", Apply: claudeGrep},
	{Names: []string{"search_file_content"}, Tool: "grep", Name: "Gemini CLI search_file_content (pattern, path, include)", Apply: geminiGrep},
	{Names: []string{"glob"}, Tool: "find", Name: "Claude Code / Gemini CLI Glob (pattern, path)", Apply: globShape},
	{Names: []string{"LS", "list_directory"}, Exact: true, Tool: "ls", Name: "Claude Code LS / Gemini CLI list_directory (path, ignore)", Apply: lsShape},
}

// move renames key from to to in m, unless to is already there; it reports
// whether from was there.
func move(m map[string]any, from, to string) bool {
	v, ok := m[from]
	if !ok {
		return false
	}
	if _, taken := m[to]; !taken {
		delete(m, from)
		m[to] = v
	}
	return true
}

// renamed is a shape told apart by one key, which becomes the tool's.
func renamed(from, to string) func(map[string]any) (map[string]any, bool) {
	return func(args map[string]any) (map[string]any, bool) {
		if _, own := args[to]; own || !move(args, from, to) {
			return nil, false
		}
		return args, true
	}
}

// pathOf returns the file path of edit-like arguments.
func pathOf(args map[string]any) (any, bool) {
	for _, k := range []string{"path", "file_path", "filePath", "absolute_path"} {
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

// geminiReplace: expected_replacements above 1 replaces every occurrence
// (edit cannot check the count; one means exactly one, as edit requires).
func geminiReplace(args map[string]any) (map[string]any, bool) {
	out, ok := singleEdit("old_string", "new_string", "")(args)
	if !ok {
		return nil, false
	}
	if n, ok := number(args["expected_replacements"]); ok && n > 1 {
		out["edits"].([]any)[0].(map[string]any)["replaceAll"] = true
	}
	return out, true
}

// geminiRead: offset counts lines from 0, read's from 1.
func geminiRead(args map[string]any) (map[string]any, bool) {
	if _, own := args["path"]; own {
		return nil, false
	}
	if !move(args, "absolute_path", "path") && !move(args, "file_path", "path") {
		return nil, false
	}
	if n, ok := number(args["offset"]); ok && n >= 0 {
		args["offset"] = n + 1
	}
	return args, true
}

// seconds turns milliseconds into whole seconds, rounded up, at least 1.
func seconds(ms any) (any, bool) {
	n, ok := number(ms)
	if !ok || n <= 0 {
		return ms, false
	}
	return max(1, int64(math.Ceil(n/1000))), true
}

func claudeBash(args map[string]any) (map[string]any, bool) {
	if _, ok := args["command"].(string); !ok {
		return nil, false
	}
	delete(args, "description") // a note for the user; exec's call shows the command
	if v, ok := args["timeout"]; ok {
		args["timeout"], _ = seconds(v)
	}
	move(args, "run_in_background", "background")
	return args, true
}

// shells are the shells whose "-c SCRIPT" / "-lc SCRIPT" argv is the script.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "/bin/bash": true, "/bin/sh": true, "/usr/bin/bash": true, "/bin/zsh": true, "/usr/bin/zsh": true}

func codexShell(args map[string]any) (map[string]any, bool) {
	argv, ok := args["command"].([]any)
	if !ok || len(argv) == 0 {
		return nil, false
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		s, ok := a.(string)
		if !ok {
			return nil, false
		}
		words[i] = s
	}
	if len(words) == 3 && shells[words[0]] && (words[1] == "-c" || words[1] == "-lc") {
		args["command"] = words[2]
	} else {
		for i, w := range words {
			words[i] = shellQuote(w)
		}
		args["command"] = strings.Join(words, " ")
	}
	if v, ok := args["timeout_ms"]; ok {
		if _, set := args["timeout"]; !set {
			delete(args, "timeout_ms")
			args["timeout"], _ = seconds(v)
		}
	}
	return args, true
}

// shellQuote quotes a word for bash when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func geminiShell(args map[string]any) (map[string]any, bool) {
	if _, ok := args["command"].(string); !ok {
		return nil, false
	}
	delete(args, "description")
	move(args, "directory", "workdir")
	return args, true
}

func claudeGrep(args map[string]any) (map[string]any, bool) {
	known := false
	for _, k := range []string{"-i", "-n", "-A", "-B", "-C", "head_limit", "output_mode"} {
		if _, ok := args[k]; ok {
			known = true
		}
	}
	if !known {
		return nil, false
	}
	move(args, "-i", "ignoreCase")
	delete(args, "-n") // grep always numbers the lines
	ctx := int64(-1)
	for _, k := range []string{"-C", "-A", "-B"} {
		if n, ok := number(args[k]); ok {
			ctx = max(ctx, int64(n))
			delete(args, k)
		}
	}
	if ctx >= 0 {
		args["context"] = ctx
	}
	move(args, "head_limit", "limit")
	if args["output_mode"] == "content" {
		delete(args, "output_mode") // grep shows the matching lines
	}
	return args, true
}

func geminiGrep(args map[string]any) (map[string]any, bool) {
	move(args, "include", "glob")
	return args, true
}

// globShape: find takes the pattern and the directory as they are; Gemini's
// case_sensitive and respect_git_ignore say what find does anyway when
// false and true.
func globShape(args map[string]any) (map[string]any, bool) {
	if _, ok := args["pattern"].(string); !ok {
		return nil, false
	}
	if args["case_sensitive"] == false {
		delete(args, "case_sensitive")
	}
	if args["respect_git_ignore"] == true {
		delete(args, "respect_git_ignore")
	}
	return args, true
}

func lsShape(args map[string]any) (map[string]any, bool) {
	move(args, "dir_path", "path")
	return args, true
}

// number reads a JSON number (float64 or json.Number).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// reshape returns the call's name and arguments in the tool's own shape and
// the shape's name, when they came in another agent's shape and the runner
// offers the shape's tool under a name that is not another tool's. Paths
// the shape carries that are absolute and inside the workspace become
// relative to it.
func (r *Runner) reshape(name string, raw json.RawMessage) (string, json.RawMessage, string) {
	var args map[string]any
	decoded := false
	for _, s := range Shapes {
		if !s.matches(name) || !s.hinted(raw) {
			continue
		}
		if id, ok := r.reg.Lookup(name); ok && id != s.Tool {
			continue // the name is another tool's
		}
		if tool, ok := r.Canonical(s.Tool); !ok || tool != s.Tool {
			continue
		}
		if !decoded {
			decoded = true
			if a, err := objectArgs(raw); err == nil {
				args = a
			}
		}
		if args == nil {
			return name, raw, ""
		}
		out, ok := s.Apply(cloneArgs(args))
		if !ok {
			continue
		}
		for _, k := range []string{"path", "workdir"} {
			if p, ok := out[k].(string); ok {
				out[k] = r.relative(p)
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return name, raw, ""
		}
		return s.Tool, b, s.Name
	}
	return name, raw, ""
}

func (s Shape) hinted(raw []byte) bool {
	if len(s.Hints) == 0 {
		return true
	}
	for _, h := range s.Hints {
		if bytes.Contains(raw, []byte(h)) {
			return true
		}
	}
	return false
}

func (s Shape) matches(name string) bool {
	for _, n := range s.Names {
		if n == name || !s.Exact && strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// objectArgs decodes arguments that hold an object (also as a JSON string).
func objectArgs(raw json.RawMessage) (map[string]any, error) {
	text, err := objectText(raw)
	if err != nil {
		return nil, err
	}
	return decodeObject(text)
}

// cloneArgs copies the top level of args (Apply changes it).
func cloneArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	return out
}

// relative returns an absolute path inside the workspace relative to it;
// any other path as it is (the tools refuse what lies outside).
func (r *Runner) relative(p string) string {
	ws := r.tc.Workspace
	if ws == "" || !filepath.IsAbs(p) {
		return p
	}
	for _, root := range []string{ws, resolvedDir(ws)} {
		rel, err := filepath.Rel(root, filepath.Clean(p))
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// resolvedDir is dir with its symbolic links resolved, or dir.
func resolvedDir(dir string) string {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return d
	}
	return dir
}
