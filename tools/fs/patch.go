package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
)

type patchArgs struct {
	Patch string `json:"patch" jsonschema:"The patch text, from '*** Begin Patch' to '*** End Patch'." minLength:"1"`
}

const patchDescription = `Change several files at once with a patch. Format:
*** Begin Patch
*** Add File: path/new.txt
+each line of the new file, prefixed with +
*** Delete File: path/old.txt
*** Update File: path/file.go
*** Move to: path/renamed.go   (optional)
@@ func example()   (optional: a line just before the change, to locate it)
 a line kept (prefix: space)
-a line removed
+a line added
*** End of File   (optional: the section ends at the end of the file)
*** End Patch
Give about 3 unchanged lines before and after each change so it is found unambiguously. Lines are matched exactly first, then ignoring trailing whitespace, then all surrounding whitespace, then typographic punctuation. The whole patch is applied or none of it: if any part fails, no file changes. Paths are relative to the workspace root.`

// patchFile is what a patch did to one file, in the details.
type patchFile struct {
	Op     string `json:"op"` // "add", "delete", "update"
	Path   string `json:"path"`
	MoveTo string `json:"moveTo,omitempty"`
	Diff   string `json:"diff,omitempty"`
	// FirstChangedLine is the 1-based line of the new file where the first change is.
	FirstChangedLine int `json:"firstChangedLine,omitempty"`
}

// patchDetails are the details of an apply_patch result.
type patchDetails struct {
	Files []patchFile `json:"files"`
}

func (s *set) patchTool() (tool.Tool, error) {
	return tool.New("apply_patch", patchDescription, func(ctx context.Context, in patchArgs, inv tool.Invocation) (tool.Result, error) {
		ops, err := parsePatch(in.Patch)
		if err != nil {
			return tool.Result{}, tool.InputErrorf("The patch cannot be read: %v. No file was changed.", err)
		}
		var paths []string
		for _, op := range ops {
			paths = append(paths, op.path)
			if op.moveTo != "" {
				paths = append(paths, op.moveTo)
			}
		}
		b, unlock, err := s.lockedBridge(ctx, inv, paths...)
		if err != nil {
			return tool.Result{}, nothingChanged(err)
		}
		defer unlock()
		pl := &plan{b: b, files: map[string]*planned{}}
		var details patchDetails
		for _, op := range ops {
			f, err := pl.add(ctx, op)
			if err != nil {
				return tool.Result{}, nothingChanged(err)
			}
			details.Files = append(details.Files, f)
		}
		if err := pl.apply(ctx); err != nil {
			return tool.Result{}, err
		}
		var text strings.Builder
		text.WriteString("Success. Updated the following files:")
		for _, f := range details.Files {
			switch f.Op {
			case "add":
				fmt.Fprintf(&text, "\nA %s", f.Path)
			case "delete":
				fmt.Fprintf(&text, "\nD %s", f.Path)
			default:
				if f.MoveTo != "" {
					fmt.Fprintf(&text, "\nM %s (moved to %s)", f.Path, f.MoveTo)
				} else {
					fmt.Fprintf(&text, "\nM %s", f.Path)
				}
			}
		}
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text.String()}}, Details: details}, nil
	})
}

// nothingChanged adds to a model-facing error that no file changed.
func nothingChanged(err error) error {
	var ie *tool.InputError
	if errors.As(err, &ie) {
		return &tool.InputError{Message: strings.TrimSuffix(ie.Message, ".") + ". No file was changed."}
	}
	return err
}

// plan is a patch worked out in memory: every file's final state, keyed by
// canonical path, before anything is written.
type plan struct {
	b     fsbridge.Bridge
	files map[string]*planned
	order []string // canonical paths in the order they were first touched
}

// planned is one file's state before and after the patch.
type planned struct {
	name     string // the path as the patch gave it
	existed  bool
	original []byte
	mode     iofs.FileMode
	exists   bool // after the patch
	content  []byte
	changed  bool
}

// file returns the planned state of the file at p, reading it on first use.
func (pl *plan) file(ctx context.Context, p string) (*planned, error) {
	canon, err := pl.b.Resolve(ctx, p)
	if err != nil {
		return nil, problem(p, err)
	}
	if f, ok := pl.files[canon]; ok {
		return f, nil
	}
	f := &planned{name: p, mode: 0o644}
	st, err := pl.b.Stat(ctx, p)
	switch {
	case err == nil && st.IsDir():
		return nil, tool.InputErrorf("%s is a directory, not a file", p)
	case err == nil:
		data, err := pl.b.ReadFile(ctx, p)
		if err != nil {
			return nil, problem(p, err)
		}
		f.existed, f.exists, f.original, f.content, f.mode = true, true, data, data, st.Mode().Perm()
	case !errors.Is(err, iofs.ErrNotExist):
		return nil, problem(p, err)
	}
	pl.files[canon] = f
	pl.order = append(pl.order, canon)
	return f, nil
}

// writable checks that the patch may write p: protected paths and paths
// that leave the workspace are refused before anything is written.
func (pl *plan) writable(ctx context.Context, p string) error {
	err := pl.b.CheckWrite(ctx, p)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil // the parent directory is made when the file is written
	}
	return problem(p, err)
}

// add works out one file operation.
func (pl *plan) add(ctx context.Context, op fileOp) (patchFile, error) {
	f, err := pl.file(ctx, op.path)
	if err != nil {
		return patchFile{}, err
	}
	switch op.kind {
	case opAdd:
		if f.exists {
			return patchFile{}, tool.InputErrorf("Add File %s (patch line %d): the file already exists. Use \"*** Update File:\" to change it, or delete it first", op.path, op.at)
		}
		if err := pl.writable(ctx, op.path); err != nil {
			return patchFile{}, err
		}
		body := strings.Join(op.lines, "\n")
		if len(op.lines) > 0 {
			body += "\n"
		}
		f.exists, f.content, f.changed = true, []byte(body), true
		cs := changes("", []replacement{{0, 0, body}})
		return patchFile{Op: "add", Path: op.path, Diff: unifiedDiff(op.path, "", cs), FirstChangedLine: firstChanged(cs)}, nil
	case opDelete:
		if !f.exists {
			return patchFile{}, tool.InputErrorf("Delete File %s (patch line %d): there is no such file. Check the path with ls or find", op.path, op.at)
		}
		if err := pl.writable(ctx, op.path); err != nil {
			return patchFile{}, err
		}
		f.exists, f.content, f.changed = false, nil, true
		return patchFile{Op: "delete", Path: op.path}, nil
	}
	if !f.exists {
		return patchFile{}, tool.InputErrorf("Update File %s (patch line %d): there is no such file. Check the path with ls or find, or use \"*** Add File:\" to create it", op.path, op.at)
	}
	if looksBinary(f.content[:min(len(f.content), sniffLen)]) {
		return patchFile{}, tool.InputErrorf("Update File %s (patch line %d): it is a binary file; patches change text files only", op.path, op.at)
	}
	if err := pl.writable(ctx, op.path); err != nil {
		return patchFile{}, err
	}
	text := decodeText(f.content)
	reps, err := placeChunks(op, text)
	if err != nil {
		return patchFile{}, err
	}
	body := apply(text.body, reps)
	cs := changes(text.body, reps)
	out := patchFile{Op: "update", Path: op.path, MoveTo: op.moveTo, Diff: unifiedDiff(op.path, text.body, cs), FirstChangedLine: firstChanged(cs)}
	if op.moveTo == "" {
		f.content, f.changed = text.encode(body), true
		return out, nil
	}
	dest, err := pl.file(ctx, op.moveTo)
	if err != nil {
		return patchFile{}, err
	}
	if dest == f {
		f.content, f.changed = text.encode(body), true
		return out, nil
	}
	if dest.exists {
		return patchFile{}, tool.InputErrorf("Update File %s: Move to %s (patch line %d): a file already exists there. Delete it first in the patch, or move to another path", op.path, op.moveTo, op.at)
	}
	if err := pl.writable(ctx, op.moveTo); err != nil {
		return patchFile{}, err
	}
	dest.exists, dest.content, dest.mode, dest.changed = true, text.encode(body), f.mode, true
	f.exists, f.content, f.changed = false, nil, true
	return out, nil
}

// apply writes the plan. When a step fails, every file already changed is
// put back as it was, and the error says what failed.
func (pl *plan) apply(ctx context.Context) error {
	var done []func(context.Context) error // undo steps, in the order done
	undo := func() {
		uctx := context.WithoutCancel(ctx)
		for i := len(done) - 1; i >= 0; i-- {
			_ = done[i](uctx)
		}
	}
	// Writes first, then deletions, so a move never loses its file.
	for _, deleting := range []bool{false, true} {
		for _, canon := range pl.order {
			f := pl.files[canon]
			if !f.changed || f.exists == deleting {
				continue
			}
			steps, err := pl.put(ctx, f)
			done = append(done, steps...)
			if err != nil {
				undo()
				var ie *tool.InputError
				if perr := problem(f.name, err); errors.As(perr, &ie) {
					return tool.InputErrorf("%s The files already changed were put back: no file was changed.", ie.Message)
				}
				return fmt.Errorf("writing %s: %w (the files already changed were put back)", f.name, err)
			}
		}
	}
	return nil
}

// put brings one file to its planned state and returns how to undo it.
func (pl *plan) put(ctx context.Context, f *planned) ([]func(context.Context) error, error) {
	restore := func(ctx context.Context) error {
		if f.existed {
			return pl.b.WriteFile(ctx, f.name, f.original, f.mode)
		}
		if err := pl.b.Remove(ctx, f.name); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		return nil
	}
	if !f.exists {
		if err := pl.b.Remove(ctx, f.name); err != nil {
			return nil, err
		}
		return []func(context.Context) error{restore}, nil
	}
	var undo []func(context.Context) error
	made, err := pl.mkdirs(ctx, path.Dir(f.name))
	for _, dir := range made { // undone last to first: innermost first
		undo = append(undo, func(ctx context.Context) error { return pl.b.Remove(ctx, dir) })
	}
	if err != nil {
		return undo, err
	}
	if err := pl.b.WriteFile(ctx, f.name, f.content, f.mode); err != nil {
		return undo, err
	}
	return append(undo, restore), nil
}

// mkdirs makes the directory dir and its missing parents, and returns the
// ones it made, outermost first.
func (pl *plan) mkdirs(ctx context.Context, dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := pl.b.Stat(ctx, d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	slices.Reverse(missing)
	if err := pl.b.MkdirAll(ctx, dir); err != nil {
		return nil, err
	}
	return missing, nil
}

// placeChunks finds where each chunk of an update goes in the file and
// returns the replacements it makes, sorted.
func placeChunks(op fileOp, text textFile) ([]replacement, error) {
	li := newLineIndex(text.body)
	lines := strings.Split(strings.TrimSuffix(text.body, "\n"), "\n")
	if text.body == "" {
		lines = nil
	}
	type lineRep struct {
		start, n int
		new      []string
	}
	var reps []lineRep
	at := 0
	for k, c := range op.chunks {
		where := func() string {
			return fmt.Sprintf("Update File %s, section %d (patch line %d)", op.path, k+1, c.at)
		}
		if c.context != "" {
			i, ok := seekLines(lines, []string{c.context}, at, false)
			if !ok {
				return nil, tool.InputErrorf("%s: the context line %q was not found after line %d. Read the file and make the patch again from its current content", where(), c.context, at)
			}
			at = i + 1
		}
		old, nw, kept := c.old, c.new, c.kept
		i, ok := seekLines(lines, old, at, c.eof)
		// Blank lines at the end of a section often stand for the file's
		// last line break, or just separate sections: retry without them.
		for !ok && len(old) > 0 && old[len(old)-1] == "" {
			old = old[:len(old)-1]
			if len(nw) > 0 && nw[len(nw)-1] == "" {
				nw, kept = nw[:len(nw)-1], kept[:len(kept)-1]
			}
			if len(old) > 0 {
				i, ok = seekLines(lines, old, at, c.eof)
			}
		}
		if len(old) == 0 {
			// Only additions: after the context line, or at the end.
			ins := len(lines)
			if c.context != "" && !c.eof {
				ins = at
			}
			reps = append(reps, lineRep{ins, 0, nw})
			continue
		}
		if !ok {
			return nil, tool.InputErrorf("%s: these lines were not found in the file%s:\n%s\nThe lines starting with ' ' or '-' must match the file's current content. Read the file and make the patch again", where(), afterLine(at), indent(c.old))
		}
		// Kept lines stay as the file has them, whatever spacing or
		// punctuation the patch used to find them.
		nw = slices.Clone(nw)
		for j, k := range kept {
			if k >= 0 && k < len(old) {
				nw[j] = lines[i+k]
			}
		}
		reps = append(reps, lineRep{i, len(old), nw})
		at = i + len(old)
	}
	slices.SortStableFunc(reps, func(a, b lineRep) int { return a.start - b.start })
	out := make([]replacement, 0, len(reps))
	for k, r := range reps {
		if k > 0 && r.start < reps[k-1].start+reps[k-1].n {
			return nil, tool.InputErrorf("Update File %s: two sections change the same lines (line %d). Merge them into one section", op.path, r.start+1)
		}
		start, end := li.offset(r.start), li.offset(r.start+r.n)
		text := ""
		if len(r.new) > 0 {
			text = strings.Join(r.new, "\n") + "\n"
		}
		if start == li.size && li.size > 0 && !li.endsNL && text != "" {
			text = "\n" + text // the last line had no line break
		}
		out = append(out, replacement{start, end, text})
	}
	return out, nil
}

func afterLine(at int) string {
	if at == 0 {
		return ""
	}
	return fmt.Sprintf(" after line %d", at)
}

func indent(lines []string) string {
	const most = 20
	var b strings.Builder
	for i, l := range lines {
		if i == most {
			fmt.Fprintf(&b, "    … (%d more lines)\n", len(lines)-most)
			break
		}
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// seekLines finds pattern in lines at or after start, trying ever looser
// comparisons: exact, ignoring trailing whitespace, ignoring surrounding
// whitespace, and with typographic punctuation made plain. With eof, a match
// at the very end of the file is tried first.
func seekLines(lines, pattern []string, start int, eof bool) (int, bool) {
	if len(pattern) > len(lines) {
		return 0, false
	}
	from := start
	if eof {
		from = max(start, len(lines)-len(pattern))
	}
	for _, same := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t\r") == strings.TrimRight(b, " \t\r") },
		func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
		func(a, b string) bool { return plainPunct(a) == plainPunct(b) },
	} {
		for _, first := range []int{from, start} {
			for i := first; i <= len(lines)-len(pattern); i++ {
				if matchAt(lines[i:], pattern, same) {
					return i, true
				}
			}
			if first == start {
				break
			}
		}
	}
	return 0, false
}

func matchAt(lines, pattern []string, same func(a, b string) bool) bool {
	for j, p := range pattern {
		if !same(lines[j], p) {
			return false
		}
	}
	return true
}

// plainPunct trims s and maps typographic quotes, dashes and spaces to
// ASCII.
func plainPunct(s string) string {
	return strings.Map(func(r rune) rune {
		if out, ok := foldRune(r); ok {
			if out == "" {
				return -1
			}
			return rune(out[0])
		}
		return r
	}, strings.TrimSpace(s))
}
