package fs

import (
	"context"
	"fmt"
	iofs "io/fs"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

type editArgs struct {
	Path  string     `json:"path" jsonschema:"The file to change, relative to the workspace root." minLength:"1"`
	Edits []editSpec `json:"edits" jsonschema:"The replacements to make. All are matched against the file as it is now (not after the earlier edits), must not overlap, and are made together or not at all." minItems:"1" maxItems:"100"`
}

type editSpec struct {
	OldText    string `json:"oldText" jsonschema:"The exact text to replace, copied from the file with its indentation and line breaks. It must occur exactly once unless replaceAll is set; include neighbouring lines to make it unique."`
	NewText    string `json:"newText" jsonschema:"The text to put in its place (empty to delete it)."`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"Replace every occurrence of oldText instead of requiring exactly one."`
}

const editDescription = `Change a text file by replacing exact text. Give the file's path and a list of edits, each {oldText, newText}; oldText must be copied exactly from the file (read it first) and must occur once, unless replaceAll is true. All edits are matched against the current file, so they must not overlap; they are applied together, or none is. When oldText is not found exactly, a tolerant match that ignores Unicode variants, typographic quotes and dashes, special spaces and trailing whitespace is tried. The file's line endings (LF or CRLF) and byte-order mark are kept. To create a file or replace all of it, use write instead.`

// editDetails are the details of an edit result.
type editDetails struct {
	Path string `json:"path"`
	// Diff is a unified diff of the change.
	Diff string `json:"diff"`
	// FirstChangedLine is the 1-based line of the new file where the first change is.
	FirstChangedLine int `json:"firstChangedLine"`
	// Replacements counts the places replaced.
	Replacements int `json:"replacements"`
	// Tolerant lists the edits (1-based) that matched only tolerantly.
	Tolerant []int `json:"tolerant,omitempty"`
}

func (s *set) editTool() (tool.Tool, error) {
	return changeTool("edit", editDescription, s.planEdit,
		func(in editArgs, d editDetails, commit func() (string, error)) (tool.Result, error) {
			note, err := commit()
			if err != nil {
				return tool.Result{}, err
			}
			text := fmt.Sprintf("Edited %s: %s; the first change is at line %d.", in.Path, plural(d.Replacements, "replacement"), d.FirstChangedLine)
			if len(d.Tolerant) > 0 {
				text += fmt.Sprintf(" Edit %s matched only after ignoring differences in Unicode form, quotes, dashes, spaces or trailing whitespace; check the result.", joinInts(d.Tolerant))
			}
			return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text + note}}, Details: d}, nil
		},
		func(in editArgs, d editDetails) string {
			return fmt.Sprintf("edit %s: %s, the first at line %d", in.Path, plural(d.Replacements, "replacement"), d.FirstChangedLine)
		})
}

// planEdit works out an edit, with the file locked: the file's content
// after it, and the details of the result. Nothing is written.
func (s *set) planEdit(ctx context.Context, inv tool.Invocation, in editArgs) (*plan, editDetails, error) {
	pl, err := s.lockedPlan(ctx, inv, in.Path)
	if err != nil {
		return nil, editDetails{}, err
	}
	d, err := pl.edit(ctx, in)
	if err != nil {
		pl.release()
		return nil, editDetails{}, err
	}
	return pl, d, nil
}

// edit plans the edits of one call.
func (pl *plan) edit(ctx context.Context, in editArgs) (editDetails, error) {
	f, err := pl.file(ctx, in.Path)
	switch {
	case err != nil:
		return editDetails{}, err
	case !f.before.Exists:
		return editDetails{}, problem(in.Path, iofs.ErrNotExist)
	case looksBinary(f.before.Data[:min(len(f.before.Data), sniffLen)]):
		return editDetails{}, tool.InputErrorf("%s is a binary file; edit changes text files only.", in.Path)
	}
	if err := pl.seen(f, in.Path); err != nil {
		return editDetails{}, err
	}
	if err := pl.b.CheckWrite(ctx, in.Path); err != nil {
		return editDetails{}, problem(in.Path, err)
	}
	file := decodeText(f.before.Data)
	reps, tolerant, err := planEdits(in.Path, file, in.Edits)
	if err != nil {
		return editDetails{}, err
	}
	after := apply(file.body, reps)
	if after == file.body {
		return editDetails{}, tool.InputErrorf("The edits leave %s unchanged: its text already reads as newText. Read the file to check its current content.", in.Path)
	}
	f.put(file.encode(after))
	cs := changes(file.body, reps)
	return editDetails{
		Path: in.Path, Diff: unifiedDiff(in.Path, file.body, cs),
		FirstChangedLine: firstChanged(cs), Replacements: len(reps), Tolerant: tolerant,
	}, nil
}

// planEdits matches every edit against the original body and returns the
// replacements, sorted, and which edits matched tolerantly.
func planEdits(name string, file textFile, edits []editSpec) ([]replacement, []int, error) {
	type placed struct {
		replacement
		edit int
	}
	var all []placed
	var tolerant []int
	var folds *folded
	li := newLineIndex(file.body)
	for i, e := range edits {
		n := i + 1
		old, nw := file.input(e.OldText), file.input(e.NewText)
		switch {
		case old == "":
			return nil, nil, tool.InputErrorf("Edit %d: oldText is empty. Copy the text to replace from the file (read it first); to create a file or replace all of it, use write.", n)
		case old == nw:
			return nil, nil, tool.InputErrorf("Edit %d: oldText and newText are identical, so this edit would change nothing. Put the replacement in newText, or leave this edit out.", n)
		}
		spans := findExact(file.body, old)
		if len(spans) == 0 {
			if folds == nil {
				f := foldText(file.body)
				folds = &f
			}
			spans = folds.find(foldText(old).text)
			if len(spans) > 0 {
				tolerant = append(tolerant, n)
			}
		}
		switch {
		case len(spans) == 0:
			return nil, nil, tool.InputErrorf("Edit %d: oldText was not found in %s.%s It must match the file's current text exactly, indentation and line breaks included: read the file again and copy the text from it.", n, name, nearMiss(file.body, old))
		case len(spans) > 1 && !e.ReplaceAll:
			lines := make([]int, 0, len(spans))
			for _, sp := range spans {
				lines = append(lines, li.lineOf(sp.start)+1)
			}
			return nil, nil, tool.InputErrorf("Edit %d: oldText occurs %d times in %s (at lines %s). Include more of the surrounding lines to make it unique, or set replaceAll to true to replace every occurrence.", n, len(spans), name, joinInts(lines))
		}
		for _, sp := range spans {
			all = append(all, placed{replacement{sp.start, sp.end, nw}, n})
		}
	}
	slices.SortStableFunc(all, func(a, b placed) int { return a.start - b.start })
	reps := make([]replacement, len(all))
	for i, p := range all {
		if i > 0 && p.start < all[i-1].end {
			a, b := all[i-1], p
			if a.edit == b.edit {
				return nil, nil, tool.InputErrorf("Edit %d: its occurrences overlap each other (at line %d); replaceAll needs separate occurrences. Give a longer oldText.", a.edit, li.lineOf(b.start)+1)
			}
			lo, hi := min(a.edit, b.edit), max(a.edit, b.edit)
			how, fix := "overlap", "Merge them into one edit."
			if a.start == b.start && a.end == b.end {
				how, fix = "match the same text", "Drop one of them, or merge them into one edit."
			}
			return nil, nil, tool.InputErrorf("Edits %d and %d %s (line %d): every edit must change a different part of the file, because all are matched against the original. %s", lo, hi, how, li.lineOf(b.start)+1, fix)
		}
		reps[i] = p.replacement
	}
	return reps, tolerant, nil
}

// nearMiss points at where the first line of old appears, when it does, to
// tell the model where its text starts to differ.
func nearMiss(body, old string) string {
	first := ""
	for _, l := range strings.Split(old, "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first == "" {
		return ""
	}
	for i, l := range strings.Split(body, "\n") {
		if strings.Contains(l, first) {
			return fmt.Sprintf(" Its first line appears at line %d, so the text differs after it.", i+1)
		}
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func joinInts(ns []int) string {
	const most = 10
	parts := make([]string, 0, min(len(ns), most)+1)
	for i, n := range ns {
		if i == most {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}
