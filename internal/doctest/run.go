package doctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Session runs the blocks of one document in order, in one scratch
// directory, carrying the working directory from block to block.
type Session struct {
	// Dir is where the first block starts.
	Dir string
	// Env is the environment every command sees.
	Env []string
	// Replace rewrites the output before it is compared: each old string
	// (a scratch path) becomes its new one (a neutral name), in order.
	Replace []string
	// State, when set, is a file that carries the exported variables from
	// block to block, as one interactive shell would.
	State string
}

// Result is what one command printed and how it exited.
type Result struct {
	// Got is the output, normalized, one element per line, with the
	// "[exit N]" line added when N is not 0.
	Got []string
}

// marker ends each command's output in the script a block runs as.
const marker = "\x1edoctest-end"

// Run runs a block's commands in one shell and returns each one's output.
func (s *Session) Run(ctx context.Context, b Block) ([]Result, error) {
	var script strings.Builder
	if s.State != "" {
		script.WriteString("[ -f " + strconv.Quote(s.State) + " ] && . " + strconv.Quote(s.State) + "\n")
	}
	script.WriteString("cd " + strconv.Quote(s.Dir) + " || exit 99\n")
	for _, c := range b.Commands {
		script.WriteString(c.Script)
		// The exit status and the working directory follow each command;
		// the extra newline ends a last line the command left open.
		script.WriteString("\nprintf '\\n" + marker + " %d %s\\n' \"$?\" \"$PWD\"\n")
	}
	if s.State != "" {
		script.WriteString("export -p > " + strconv.Quote(s.State) + "\n")
	}
	f, err := os.CreateTemp("", "doctest-*.sh")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(script.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", f.Name())
	cmd.Env = s.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	ownGroup(cmd)
	runErr := cmd.Run()
	stopGroup(cmd)
	chunks := strings.Split(out.String(), marker+" ")
	var results []Result
	for i := range b.Commands {
		if i+1 >= len(chunks) {
			return results, fmt.Errorf("the block stopped at command %d of %d (%v); output:\n%s", i+1, len(b.Commands), runErr, out.String())
		}
		text := chunks[i]
		if i > 0 {
			// The previous command's marker line: "<status> <dir>\n".
			_, text, _ = strings.Cut(text, "\n")
		}
		text = strings.TrimSuffix(text, "\n")
		status, dir, _ := strings.Cut(strings.SplitN(chunks[i+1], "\n", 2)[0], " ")
		got := s.normalize(text)
		if status != "0" {
			got = append(got, "[exit "+status+"]")
		}
		results = append(results, Result{Got: got})
		s.Dir = dir
	}
	return results, nil
}

// normalize replaces scratch paths, drops trailing spaces and trailing
// empty lines, and splits the text into lines.
func (s *Session) normalize(text string) []string {
	for i := 0; i+1 < len(s.Replace); i += 2 {
		text = strings.ReplaceAll(text, s.Replace[i], s.Replace[i+1])
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
