// Package doctest runs the shell examples of Markdown documents and
// compares what they print with what the documents say they print.
//
// An example is a fenced block whose info string starts with "console":
//
//	```console
//	$ toolbelt call read --args '{"path":"greet.go"}'
//	package main
//	…
//	```
//
// A line starting with "$ " is a command; the lines after it, up to the next
// command, are its expected output (stdout and stderr together, in the
// order they were written). A command continues on the next line when its
// line ends with a backslash, and on every following line that starts with
// "> " (a here-document, as an interactive shell would show it). A command
// that exits with a status other than 0 shows it as a last output line
// "[exit N]".
//
// In expected output, "…" matches any text on its line, and a line that is
// only "…" matches any number of lines, so ids, times and long listings can
// be left out.
//
// Words after "console" in the info string change how a block runs:
//
//	skip: REASON       the block is not run; REASON says why (a server that
//	                   must be running, the network)
//	needs=CMD[,CMD]    the block runs only when every CMD is on PATH
//	postgres           the block uses the PostgreSQL server the document
//	                   names; the runner provides it (see Block.Postgres)
//	model              the block talks to a local model server the document
//	                   names; the runner provides one that replays scripted
//	                   answers (see Block.Model)
//
// The blocks of one document run in order, in one scratch directory; the
// working directory a block ends in is where the next one starts, and the
// variables it exported are set in the next one. Whatever a block leaves
// running (a server started with &) is stopped when the block ends.
package doctest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Block is one console block of a document.
type Block struct {
	// Line is the 1-based line of the opening fence.
	Line int
	// Info is the fence's info string after "console".
	Info string
	// Commands are the block's commands with their expected output.
	Commands []Command
	// start and end are the 0-based lines of the block's content
	// (between the fences), for rewriting.
	start, end int
}

// Command is one command of a block and what it should print.
type Command struct {
	// Script is the shell text, continuation lines included, without the
	// "$ " and "> " prompts.
	Script string
	// Want is the expected output, one element per line.
	Want []string
	// Display is the command as the document shows it, prompts included.
	Display []string
	// blank counts the empty lines between the output and the next
	// command, which are not part of the output.
	blank int
}

// Skip returns the reason a block is not run, or "".
func (b Block) Skip() string {
	if i := strings.Index(b.Info, "skip:"); i >= 0 {
		return strings.TrimSpace(b.Info[i+len("skip:"):])
	}
	return ""
}

// Needs returns the commands a block needs on PATH.
func (b Block) Needs() []string {
	for _, f := range strings.Fields(b.Info) {
		if v, ok := strings.CutPrefix(f, "needs="); ok {
			return strings.Split(v, ",")
		}
	}
	return nil
}

// Postgres says whether the block uses a PostgreSQL server, which whoever
// runs the examples provides (or skips the block, saying so).
func (b Block) Postgres() bool {
	return slices.Contains(strings.Fields(b.Info), "postgres")
}

// Model says whether the block talks to a local model server, which
// whoever runs the examples provides (a replay of scripted answers) or
// skips the block, saying so.
func (b Block) Model() bool {
	return slices.Contains(strings.Fields(b.Info), "model")
}

// fence matches an opening or closing code fence.
var fence = regexp.MustCompile("^(`{3,}|~{3,})(.*)$")

// Parse returns the console blocks of a Markdown document. A console block
// whose first line is not a command is an error: it would be tested as
// nothing.
func Parse(doc string) ([]Block, error) {
	lines := strings.Split(doc, "\n")
	var blocks []Block
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		marker, info := m[1], strings.TrimSpace(m[2])
		end := i + 1
		for end < len(lines) && !(strings.HasPrefix(lines[end], marker) && strings.TrimSpace(strings.TrimLeft(lines[end], marker[:1])) == "") {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: the code block is never closed", i+1)
		}
		lang, rest, _ := strings.Cut(info, " ")
		if lang == "console" {
			b, err := parseBlock(lines[i+1:end], i+1)
			if err != nil {
				return nil, err
			}
			b.Info, b.start, b.end = strings.TrimSpace(rest), i+1, end
			blocks = append(blocks, b)
		}
		i = end
	}
	return blocks, nil
}

// parseBlock splits a console block's lines into commands and outputs.
func parseBlock(lines []string, fenceLine int) (Block, error) {
	b := Block{Line: fenceLine}
	for j := 0; j < len(lines); j++ {
		l := lines[j]
		cmd, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			if len(b.Commands) == 0 {
				return b, fmt.Errorf("line %d: a console block starts with a command (\"$ …\"), not %q", fenceLine+1+j, l)
			}
			c := &b.Commands[len(b.Commands)-1]
			c.Want = append(c.Want, l)
			continue
		}
		c := Command{Display: []string{l}}
		script := []string{cmd}
		for strings.HasSuffix(script[len(script)-1], "\\") && j+1 < len(lines) {
			j++
			c.Display = append(c.Display, lines[j])
			script = append(script, lines[j])
		}
		for j+1 < len(lines) && (strings.HasPrefix(lines[j+1], "> ") || lines[j+1] == ">") {
			j++
			c.Display = append(c.Display, lines[j])
			script = append(script, strings.TrimPrefix(strings.TrimPrefix(lines[j], ">"), " "))
		}
		c.Script = strings.Join(script, "\n")
		b.Commands = append(b.Commands, c)
	}
	for i := range b.Commands {
		c := &b.Commands[i]
		for len(c.Want) > 0 && strings.TrimSpace(c.Want[len(c.Want)-1]) == "" {
			c.Want = c.Want[:len(c.Want)-1]
			c.blank++
		}
	}
	return b, nil
}

// Match reports whether got (output lines) matches want (expected lines
// with "…" wildcards).
func Match(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "…" {
		for k := 0; k <= len(got); k++ {
			if Match(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 || !matchLine(want[0], got[0]) {
		return false
	}
	return Match(want[1:], got[1:])
}

// matchLine matches one line, "…" standing for any text.
func matchLine(want, got string) bool {
	if !strings.Contains(want, "…") {
		return want == got
	}
	parts := strings.Split(want, "…")
	var re strings.Builder
	re.WriteString("^")
	for i, p := range parts {
		if i > 0 {
			re.WriteString(".*")
		}
		re.WriteString(regexp.QuoteMeta(p))
	}
	re.WriteString("$")
	ok, _ := regexp.MatchString(re.String(), got)
	return ok
}

// Rewrite returns doc with each block's expected output replaced by
// outputs[block index][command index] where that is not nil. Lines of the
// new output that an expected line with "…" still matches keep that line,
// so a rewrite does not replace a wildcard by this run's time or id.
func Rewrite(doc string, blocks []Block, outputs [][][]string) string {
	lines := strings.Split(doc, "\n")
	var out []string
	prev := 0
	for bi, b := range blocks {
		out = append(out, lines[prev:b.start]...)
		for ci, c := range b.Commands {
			out = append(out, c.Display...)
			if bi < len(outputs) && ci < len(outputs[bi]) && outputs[bi][ci] != nil {
				out = append(out, keepWildcards(c.Want, outputs[bi][ci])...)
			} else {
				out = append(out, c.Want...)
			}
			for range c.blank {
				out = append(out, "")
			}
		}
		prev = b.end
	}
	out = append(out, lines[prev:]...)
	return strings.Join(out, "\n")
}

// keepWildcards aligns got with want (a longest common subsequence of
// matching lines) and returns got with each matched line replaced by the
// expected line that matches it.
func keepWildcards(want, got []string) []string {
	n, m := len(want), len(got)
	// lcs[i][j]: length of the longest alignment of want[i:] and got[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case matchLine(want[i], got[j]):
				lcs[i][j] = lcs[i+1][j+1] + 1
			case lcs[i+1][j] >= lcs[i][j+1]:
				lcs[i][j] = lcs[i+1][j]
			default:
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	out := make([]string, 0, m)
	i, j := 0, 0
	for j < m {
		switch {
		case i < n && matchLine(want[i], got[j]):
			out = append(out, want[i])
			i++
			j++
		case i < n && lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			out = append(out, got[j])
			j++
		}
	}
	return out
}
