package fs

import (
	"fmt"
	"regexp"
	"strings"
)

// The markers of the patch format.
const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File: "
	deleteFile = "*** Delete File: "
	updateFile = "*** Update File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)

type opKind int

const (
	opAdd opKind = iota
	opDelete
	opUpdate
)

// fileOp is one file's part of a patch.
type fileOp struct {
	kind   opKind
	path   string
	moveTo string   // for opUpdate: the new path, or ""
	lines  []string // for opAdd: the new file's lines
	chunks []chunk  // for opUpdate
	at     int      // the patch line of its header, 1-based
}

// chunk is one "@@" section of an update: old lines to find (after the
// context line, when there is one) and the lines that replace them.
type chunk struct {
	context  string
	old, new []string
	// kept[i] is the index in old of new[i] when that line is kept
	// unchanged (a ' ' line), or -1.
	kept []int
	eof  bool // old must be at the end of the file
	at   int
}

// unifiedHeader matches "@@ -1,3 +1,4 @@", which models sometimes write
// where the format wants a context line.
var unifiedHeader = regexp.MustCompile(`^-\d+(,\d+)? \+\d+(,\d+)? @@`)

// parsePatch parses the text of a patch. It is lenient where models slip:
// space around markers, CRLF line breaks, a heredoc wrapper, blank lines
// between sections, a unified-diff hunk header.
func parsePatch(text string) ([]fileOp, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	if n := len(lines); n >= 4 && strings.TrimSpace(lines[n-1]) == "EOF" {
		switch strings.TrimSpace(lines[0]) {
		case "<<EOF", "<<'EOF'", `<<"EOF"`:
			lines = lines[1 : n-1]
		}
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginPatch {
		return nil, fmt.Errorf("the first line of the patch must be %q", beginPatch)
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endPatch {
		return nil, fmt.Errorf("the last line of the patch must be %q", endPatch)
	}
	p := &parser{lines: lines[:len(lines)-1], i: 1}
	var ops []fileOp
	for p.i < len(p.lines) {
		line := strings.TrimSpace(p.lines[p.i])
		if line == "" {
			p.i++
			continue
		}
		op, err := p.fileOp(line)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file: put %q, %q or %q sections between its first and last lines", strings.TrimSpace(addFile), strings.TrimSpace(updateFile), strings.TrimSpace(deleteFile))
	}
	return ops, nil
}

type parser struct {
	lines []string
	i     int // index of the next line
}

// errorf reports a problem at patch line i (0-based).
func (p *parser) errorf(i int, format string, args ...any) error {
	return fmt.Errorf("line %d of the patch: %s", i+1, fmt.Sprintf(format, args...))
}

func (p *parser) fileOp(header string) (fileOp, error) {
	at := p.i
	p.i++
	pathAfter := func(marker string) (string, error) {
		name := strings.TrimSpace((header + " ")[len(marker):])
		if name == "" {
			return "", p.errorf(at, "%q names no file", header)
		}
		return name, nil
	}
	switch {
	case strings.HasPrefix(header+" ", addFile):
		name, err := pathAfter(addFile)
		if err != nil {
			return fileOp{}, err
		}
		op := fileOp{kind: opAdd, path: name, at: at + 1}
		for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "+") {
			op.lines = append(op.lines, p.lines[p.i][1:])
			p.i++
		}
		return op, nil
	case strings.HasPrefix(header+" ", deleteFile):
		name, err := pathAfter(deleteFile)
		return fileOp{kind: opDelete, path: name, at: at + 1}, err
	case strings.HasPrefix(header+" ", updateFile):
		name, err := pathAfter(updateFile)
		if err != nil {
			return fileOp{}, err
		}
		op := fileOp{kind: opUpdate, path: name, at: at + 1}
		if p.i < len(p.lines) && strings.HasPrefix(strings.TrimSpace(p.lines[p.i]), moveTo) {
			op.moveTo = strings.TrimSpace(strings.TrimSpace(p.lines[p.i])[len(moveTo):])
			if op.moveTo == "" {
				return fileOp{}, p.errorf(p.i, "%q names no file", strings.TrimSpace(p.lines[p.i]))
			}
			p.i++
		}
		for p.i < len(p.lines) {
			line := p.lines[p.i]
			if strings.TrimSpace(line) == "" {
				p.i++
				continue
			}
			if strings.HasPrefix(line, "***") {
				break
			}
			c, err := p.chunk(len(op.chunks) == 0)
			if err != nil {
				return fileOp{}, err
			}
			op.chunks = append(op.chunks, c)
		}
		if len(op.chunks) == 0 && op.moveTo == "" {
			return fileOp{}, p.errorf(at, "the update of %s has no changes: add a \"@@\" section with lines starting with ' ', '-' or '+'", name)
		}
		return op, nil
	}
	return fileOp{}, p.errorf(at, "%q is not a section header: use %q, %q or %q followed by a path", header, strings.TrimSpace(addFile), strings.TrimSpace(deleteFile), strings.TrimSpace(updateFile))
}

// chunk parses one "@@" section. The first section of a file may omit "@@".
func (p *parser) chunk(first bool) (chunk, error) {
	c := chunk{at: p.i + 1}
	head := strings.TrimRight(p.lines[p.i], " \t")
	switch {
	case head == "@@":
		p.i++
	case strings.HasPrefix(head, "@@ "):
		if ctx := strings.TrimPrefix(head, "@@ "); !unifiedHeader.MatchString(ctx) {
			c.context = ctx
		}
		p.i++
	case !first:
		return chunk{}, p.errorf(p.i, "expected a \"@@\" line to start the next section, got %q", p.lines[p.i])
	}
	n := 0
	for ; p.i < len(p.lines); p.i++ {
		line := p.lines[p.i]
		if strings.TrimSpace(line) == endOfFile {
			if n == 0 {
				return chunk{}, p.errorf(p.i, "%q ends a section that has no lines", endOfFile)
			}
			c.eof = true
			p.i++
			break
		}
		if line == "" {
			c.keep("")
			n++
			continue
		}
		switch line[0] {
		case ' ':
			c.keep(line[1:])
		case '-':
			c.old = append(c.old, line[1:])
		case '+':
			c.new, c.kept = append(c.new, line[1:]), append(c.kept, -1)
		default:
			if n == 0 {
				return chunk{}, p.errorf(p.i, "%q does not start with ' ' (a line kept), '-' (a line removed) or '+' (a line added)", line)
			}
			return c, nil
		}
		n++
	}
	if n == 0 {
		return chunk{}, p.errorf(c.at-1, "the section has no lines")
	}
	return c, nil
}

// keep adds a line the section keeps unchanged.
func (c *chunk) keep(line string) {
	c.kept = append(c.kept, len(c.old))
	c.old, c.new = append(c.old, line), append(c.new, line)
}
