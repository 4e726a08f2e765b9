package memory

import (
	"path"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// Chunking bounds, in lines: a chunk ends at a heading, or at a blank line
// once it has softLines, and at hardLines in any case.
const (
	softLines = 12
	hardLines = 40
)

// Chunks cuts a Markdown memory file into the pieces the index keeps: one
// per section (a heading starts a new piece), long sections cut at blank
// lines. Each piece's title is the file's name and the heading it is under.
func Chunks(p, text string) []tool.MemoryChunk {
	name := strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(strings.TrimSuffix(path.Base(p), ".md"))
	lines := splitLines(text)
	var out []tool.MemoryChunk
	heading := ""
	start := 0 // index of the current piece's first line
	flush := func(end int) {
		body := strings.Join(lines[start:end], "\n")
		if strings.TrimSpace(body) != "" {
			out = append(out, tool.MemoryChunk{StartLine: start + 1, EndLine: end, Title: strings.TrimSpace(name + " " + heading), Text: body})
		}
		start = end
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "#"):
			if i > start {
				flush(i)
			}
			heading = strings.TrimSpace(strings.TrimLeft(t, "#"))
		case t == "" && i-start >= softLines, i-start >= hardLines:
			flush(i)
		}
	}
	if start < len(lines) {
		flush(len(lines))
	}
	return out
}
