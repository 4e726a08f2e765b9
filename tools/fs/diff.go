package fs

import (
	"strings"

	"github.com/toolbelt/toolbelt/internal/textdiff"
)

// changes returns the changed blocks of lines that the replacements
// (sorted, not overlapping, offsets into before) make: each group of
// replacements on neighbouring lines is compared line by line, so only the
// lines that differ are changes.
func changes(before string, reps []replacement) []textdiff.Change {
	li := newLineIndex(before)
	var out []textdiff.Change
	shift := 0
	for i := 0; i < len(reps); {
		// A cluster is the replacements that touch overlapping lines.
		first, last := li.lineOf(reps[i].start), lineEnd(li, reps[i])
		j := i + 1
		for j < len(reps) && li.lineOf(reps[j].start) < last {
			last = max(last, lineEnd(li, reps[j]))
			j++
		}
		from, to := li.offset(first), li.offset(last)
		var nb strings.Builder
		nb.WriteString(before[from:reps[i].start])
		for k := i; k < j; k++ {
			if k > i {
				nb.WriteString(before[reps[k-1].end:reps[k].start])
			}
			nb.WriteString(reps[k].text)
		}
		nb.WriteString(before[reps[j-1].end:to])
		old, nw := before[from:to], nb.String()
		for _, c := range textdiff.Compute(old, nw) {
			c.OldStart += first
			c.NewStart += first + shift
			out = append(out, c)
		}
		shift += len(textdiff.Lines(nw)) - len(textdiff.Lines(old))
		i = j
	}
	return out
}

// lineEnd returns the line after the last one r touches (an insertion
// touches the line it is in).
func lineEnd(li lineIndex, r replacement) int {
	end := li.lineOf(r.start) + 1
	if r.end > r.start {
		end = li.lineOf(r.end-1) + 1
	}
	return min(end, max(li.lines(), li.lineOf(r.start)))
}

// unifiedDiff formats the changes cs to the text before of the file name
// as a git-style unified diff.
func unifiedDiff(name, before string, cs []textdiff.Change) string {
	if len(cs) == 0 {
		return ""
	}
	return textdiff.Unified(textdiff.File{OldPath: name, NewPath: name, Before: before, Changes: cs})
}

// firstChanged returns the 1-based line of after where the first change is.
func firstChanged(cs []textdiff.Change) int {
	if len(cs) == 0 {
		return 0
	}
	return cs[0].NewStart + 1
}
