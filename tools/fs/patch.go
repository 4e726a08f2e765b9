package fs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/internal/changeset"
	"github.com/toolbelt/toolbelt/internal/textdiff"
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
	return changeTool("apply_patch", patchDescription, s.planPatch,
		func(_ patchArgs, d patchDetails, commit func() (string, error)) (tool.Result, error) {
			note, err := commit()
			if err != nil {
				return tool.Result{}, err
			}
			text := "Success. Updated the following files:\n" + strings.Join(listing(d), "\n") + note
			return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text}}, Details: d}, nil
		},
		func(_ patchArgs, d patchDetails) string {
			return fmt.Sprintf("change %s: %s", plural(len(d.Files), "file"), strings.Join(listing(d), ", "))
		})
}

// listing names what the patch does to each file: "A path", "D path",
// "M path" or "M path (moved to other)".
func listing(d patchDetails) []string {
	out := make([]string, 0, len(d.Files))
	for _, f := range d.Files {
		switch {
		case f.Op == "add":
			out = append(out, "A "+f.Path)
		case f.Op == "delete":
			out = append(out, "D "+f.Path)
		case f.MoveTo != "":
			out = append(out, fmt.Sprintf("M %s (moved to %s)", f.Path, f.MoveTo))
		default:
			out = append(out, "M "+f.Path)
		}
	}
	return out
}

// planPatch works out a patch: every file's state after it, with the files
// locked, and what it does to each. Nothing is written.
func (s *set) planPatch(ctx context.Context, inv tool.Invocation, in patchArgs) (*plan, patchDetails, error) {
	ops, err := parsePatch(in.Patch)
	if err != nil {
		return nil, patchDetails{}, tool.InputErrorf("The patch cannot be read: %v. No file was changed.", err)
	}
	var paths []string
	for _, op := range ops {
		paths = append(paths, op.path)
		if op.moveTo != "" {
			paths = append(paths, op.moveTo)
		}
	}
	pl, err := s.lockedPlan(ctx, inv, paths...)
	if err != nil {
		return nil, patchDetails{}, nothingChanged(err)
	}
	var details patchDetails
	for _, op := range ops {
		f, err := pl.add(ctx, op)
		if err != nil {
			pl.release()
			return nil, patchDetails{}, nothingChanged(err)
		}
		details.Files = append(details.Files, f)
	}
	return pl, details, nil
}

// nothingChanged adds to a model-facing error that no file changed.
func nothingChanged(err error) error {
	var ie *tool.InputError
	if errors.As(err, &ie) {
		return &tool.InputError{Message: strings.TrimSuffix(ie.Message, ".") + ". No file was changed."}
	}
	return err
}

// add works out one file operation of a patch.
func (pl *plan) add(ctx context.Context, op fileOp) (patchFile, error) {
	f, err := pl.file(ctx, op.path)
	if err != nil {
		return patchFile{}, err
	}
	switch op.kind {
	case opAdd:
		if f.after.Exists {
			return patchFile{}, tool.InputErrorf("Add File %s (patch line %d): the file already exists. Use \"*** Update File:\" to change it, or delete it first", op.path, op.at)
		}
		if err := pl.writable(ctx, op.path); err != nil {
			return patchFile{}, err
		}
		body := strings.Join(op.lines, "\n")
		if len(op.lines) > 0 {
			body += "\n"
		}
		f.put([]byte(body))
		cs := changes("", []replacement{{0, 0, body}})
		d := textdiff.Unified(textdiff.File{NewPath: op.path, After: body, Mode: f.after.Mode, Changes: cs})
		return patchFile{Op: "add", Path: op.path, Diff: d, FirstChangedLine: firstChanged(cs)}, nil
	case opDelete:
		if !f.after.Exists {
			return patchFile{}, tool.InputErrorf("Delete File %s (patch line %d): there is no such file. Check the path with ls or find", op.path, op.at)
		}
		if err := pl.writable(ctx, op.path); err != nil {
			return patchFile{}, err
		}
		f.remove()
		return patchFile{Op: "delete", Path: op.path}, nil
	}
	if !f.after.Exists {
		return patchFile{}, tool.InputErrorf("Update File %s (patch line %d): there is no such file. Check the path with ls or find, or use \"*** Add File:\" to create it", op.path, op.at)
	}
	if looksBinary(f.after.Data[:min(len(f.after.Data), sniffLen)]) {
		return patchFile{}, tool.InputErrorf("Update File %s (patch line %d): it is a binary file; patches change text files only", op.path, op.at)
	}
	if err := pl.writable(ctx, op.path); err != nil {
		return patchFile{}, err
	}
	if err := pl.seen(f, op.path); err != nil {
		return patchFile{}, err
	}
	text := decodeText(f.after.Data)
	reps, err := placeChunks(op, text)
	if err != nil {
		return patchFile{}, err
	}
	body := apply(text.body, reps)
	cs := changes(text.body, reps)
	out := patchFile{Op: "update", Path: op.path, MoveTo: op.moveTo, Diff: unifiedDiff(op.path, text.body, cs), FirstChangedLine: firstChanged(cs)}
	if op.moveTo == "" {
		f.put(text.encode(body))
		return out, nil
	}
	dest, err := pl.file(ctx, op.moveTo)
	if err != nil {
		return patchFile{}, err
	}
	if dest == f {
		f.put(text.encode(body))
		return out, nil
	}
	if dest.after.Exists {
		return patchFile{}, tool.InputErrorf("Update File %s: Move to %s (patch line %d): a file already exists there. Delete it first in the patch, or move to another path", op.path, op.moveTo, op.at)
	}
	if err := pl.writable(ctx, op.moveTo); err != nil {
		return patchFile{}, err
	}
	dest.after = changeset.State{Exists: true, Data: text.encode(body), Mode: f.after.Mode}
	dest.from = f.canon
	f.remove()
	return out, nil
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
