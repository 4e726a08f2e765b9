// Package textdiff finds the lines that differ between two texts and formats
// them as a git-style unified diff, the form people and `git apply` read:
//
//	d := textdiff.Unified(textdiff.File{OldPath: "main.go", NewPath: "main.go", Before: old, After: new})
//
// A created file is shown against /dev/null with a "new file mode" line, a
// deleted one with "deleted file mode", a moved one with "rename from" and
// "rename to"; a file holding a NUL byte is shown as binary.
package textdiff

import (
	"fmt"
	"io/fs"
	"strings"
)

// Context is the number of unchanged lines shown around each change.
const Context = 3

// Change is one changed block of lines: Old, the lines starting at 0-based
// line OldStart of the old text, became New, starting at line NewStart of
// the new text. Lines keep their "\n"; the last line of a text may lack it.
type Change struct {
	OldStart, NewStart int
	Old, New           []string
}

// Lines splits s into lines that keep their "\n"; the last may lack it.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// File is one file of a diff.
type File struct {
	// OldPath and NewPath are the file's slash-separated paths before and
	// after. OldPath is "" for a created file and NewPath "" for a deleted
	// one; they differ for a moved file.
	OldPath, NewPath string
	// Before and After are the file's content before and after.
	Before, After string
	// Mode is the permission bits of a created or deleted file, shown as
	// git's 100644 or 100755.
	Mode fs.FileMode
	// Changes, when not nil, are the changes to show (found some other way
	// than by comparing Before with After, which is what happens when nil).
	Changes []Change
}

// Unified returns the git-style unified diff of the files, with [Context]
// lines of context; files that did not change are left out.
func Unified(files ...File) string {
	var b strings.Builder
	for _, f := range files {
		writeFile(&b, f)
	}
	return b.String()
}

func writeFile(b *strings.Builder, f File) {
	created, deleted := f.OldPath == "", f.NewPath == ""
	moved := !created && !deleted && f.OldPath != f.NewPath
	cs := f.Changes
	if cs == nil {
		cs = Compute(f.Before, f.After)
	}
	binary := strings.IndexByte(f.Before, 0) >= 0 || strings.IndexByte(f.After, 0) >= 0
	changed := len(cs) > 0 || binary && f.Before != f.After
	if !changed && !created && !deleted && !moved {
		return
	}
	oldName, newName := f.OldPath, f.NewPath
	if created {
		oldName = newName
	}
	if deleted {
		newName = oldName
	}
	fmt.Fprintf(b, "diff --git %s %s\n", quote("a/"+oldName), quote("b/"+newName))
	switch {
	case created:
		fmt.Fprintf(b, "new file mode %s\n", gitMode(f.Mode))
	case deleted:
		fmt.Fprintf(b, "deleted file mode %s\n", gitMode(f.Mode))
	case moved:
		fmt.Fprintf(b, "rename from %s\nrename to %s\n", quote(oldName), quote(newName))
	}
	if !changed {
		return
	}
	from, to := header("a/", f.OldPath), header("b/", f.NewPath)
	if binary {
		fmt.Fprintf(b, "Binary files %s and %s differ\n", from, to)
		return
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", from, to)
	writeHunks(b, Lines(f.Before), cs)
}

// header is a path as the ---/+++ lines show it: /dev/null for no file, and
// a tab after a name with a space in it, as git writes.
func header(prefix, p string) string {
	if p == "" {
		return "/dev/null"
	}
	q := quote(prefix + p)
	if strings.Contains(q, " ") {
		q += "\t"
	}
	return q
}

// gitMode is the mode git shows for a regular file with permissions perm.
func gitMode(perm fs.FileMode) string {
	if perm&0o111 != 0 {
		return "100755"
	}
	return "100644"
}

// quote writes a path as git does: in double quotes with C escapes when it
// holds a quote, a backslash, a control character or a non-ASCII byte.
func quote(p string) string {
	needs := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			needs = true
			break
		}
	}
	if !needs {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeHunks writes the changes to the text of lines as hunks, merging
// changes closer than twice the context.
func writeHunks(b *strings.Builder, lines []string, cs []Change) {
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].OldStart-(cs[j-1].OldStart+len(cs[j-1].Old)) <= 2*Context {
			j++
		}
		hunk := cs[i:j]
		start := max(0, hunk[0].OldStart-Context)
		lastEnd := hunk[len(hunk)-1].OldStart + len(hunk[len(hunk)-1].Old)
		end := min(len(lines), lastEnd+Context)
		oldCount, newCount := end-start, end-start
		for _, c := range hunk {
			newCount += len(c.New) - len(c.Old)
		}
		newStart := start + hunk[0].NewStart - hunk[0].OldStart
		fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(start, oldCount), hunkRange(newStart, newCount))
		at := start
		for _, c := range hunk {
			for ; at < c.OldStart; at++ {
				line(b, ' ', lines[at])
			}
			for _, l := range c.Old {
				line(b, '-', l)
			}
			for _, l := range c.New {
				line(b, '+', l)
			}
			at = c.OldStart + len(c.Old)
		}
		for ; at < end; at++ {
			line(b, ' ', lines[at])
		}
		i = j
	}
}

// hunkRange formats a hunk header range: a 1-based start and a count; an
// empty range names the line before it.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func line(b *strings.Builder, mark byte, l string) {
	b.WriteByte(mark)
	b.WriteString(l)
	if !strings.HasSuffix(l, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}
