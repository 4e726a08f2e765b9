package fs

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// change is one changed block of lines: before's lines [oldStart,
// oldStart+len(old)) became new, starting at line newStart of after (both
// 0-based).
type change struct {
	oldStart, newStart int
	old, new           []string
}

// changes returns the changed blocks that the replacements (sorted, not
// overlapping, offsets into before) make: whole lines, with the lines that
// stay the same trimmed off.
func changes(before string, reps []replacement) []change {
	li := newLineIndex(before)
	var out []change
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
		old, nw := splitLines(before[from:to]), splitLines(nb.String())
		p := 0
		for p < len(old) && p < len(nw) && old[p] == nw[p] {
			p++
		}
		q := 0
		for q < len(old)-p && q < len(nw)-p && old[len(old)-1-q] == nw[len(nw)-1-q] {
			q++
		}
		if c := (change{oldStart: first + p, newStart: first + shift + p, old: old[p : len(old)-q], new: nw[p : len(nw)-q]}); len(c.old)+len(c.new) > 0 {
			out = append(out, c)
		}
		shift += len(nw) - len(old)
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

// unifiedDiff formats the changes that turn before into after as a unified
// diff of the file name, with diffContext lines of context.
func unifiedDiff(name, before string, cs []change) string {
	if len(cs) == 0 {
		return ""
	}
	lines := splitLines(before)
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].oldStart-(cs[j-1].oldStart+len(cs[j-1].old)) <= 2*diffContext {
			j++
		}
		hunk := cs[i:j]
		start := max(0, hunk[0].oldStart-diffContext)
		lastEnd := hunk[len(hunk)-1].oldStart + len(hunk[len(hunk)-1].old)
		end := min(len(lines), lastEnd+diffContext)
		oldCount, newCount := end-start, end-start
		for _, c := range hunk {
			newCount += len(c.new) - len(c.old)
		}
		newStart := start + hunk[0].newStart - hunk[0].oldStart
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(start, oldCount), hunkRange(newStart, newCount))
		at := start
		for _, c := range hunk {
			for ; at < c.oldStart; at++ {
				diffLine(&b, ' ', lines[at])
			}
			for _, l := range c.old {
				diffLine(&b, '-', l)
			}
			for _, l := range c.new {
				diffLine(&b, '+', l)
			}
			at = c.oldStart + len(c.old)
		}
		for ; at < end; at++ {
			diffLine(&b, ' ', lines[at])
		}
		i = j
	}
	return b.String()
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

func diffLine(b *strings.Builder, mark byte, line string) {
	b.WriteByte(mark)
	b.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}

// firstChanged returns the 1-based line of after where the first change is.
func firstChanged(cs []change) int {
	if len(cs) == 0 {
		return 0
	}
	return cs[0].newStart + 1
}
