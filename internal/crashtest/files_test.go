package crashtest

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Every change a call makes is recognizable: a file holds the lines
//
//	file=PATH
//	call=LABEL
//	line 1 of LABEL … line n of LABEL
//	sum=HASH
//
// where LABEL names the call and HASH is made from the lines before it. A
// file is whole when it is exactly what body makes for its path and the
// label it names. Labels have one width ("r001-c0-00042": round, slot,
// number), so none is a prefix of another, and within one slot they sort
// in the order they were made.

// body is the content call label writes to the file at p (slash-separated,
// relative to the workspace) with n numbered lines.
func body(p, label string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file=%s\ncall=%s\n", p, label)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of %s\n", i, label)
	}
	sum := sha256.Sum256([]byte(b.String()))
	fmt.Fprintf(&b, "sum=%x\n", sum[:8])
	return b.String()
}

// state is what a file holds: absent, whole (the label of the call that
// wrote it), or broken (anything else: a torn or mixed write).
type state struct {
	absent bool
	label  string // whole when set
	broken string // what is wrong, when neither absent nor whole
}

func (s state) String() string {
	switch {
	case s.absent:
		return "absent"
	case s.label != "":
		return s.label
	}
	return "broken (" + s.broken + ")"
}

// readState reads the file at p in workspace ws; n is the number of lines
// its writers give it.
func readState(ws, p string, n int) state {
	b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(p)))
	if errors.Is(err, fs.ErrNotExist) {
		return state{absent: true}
	}
	if err != nil {
		return state{broken: err.Error()}
	}
	lines := strings.SplitN(string(b), "\n", 3)
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "call=") {
		return state{broken: fmt.Sprintf("%d bytes that name no call: %.60q", len(b), b)}
	}
	label := strings.TrimPrefix(lines[1], "call=")
	if string(b) != body(p, label, n) {
		return state{broken: fmt.Sprintf("%d bytes, not what call %s writes: %.80q", len(b), label, b)}
	}
	return state{label: label}
}

// The files of a slot (a process that makes calls, one at a time): single
// files that write and edit change, a group that only apply_patch changes
// (all of it at once), and one file per exec call.
const (
	singles     = 3
	groupSize   = 3
	singleLines = 8
	groupLines  = 1
	execLines   = 2
)

func singleFile(slot string, i int) string { return fmt.Sprintf("%s/s%d.txt", slot, i) }
func groupFile(slot string, i int) string  { return fmt.Sprintf("%s/p/%d.txt", slot, i) }
func execFile(slot, label string) string   { return fmt.Sprintf("%s/x/%s.txt", slot, label) }

func group(slot string) []string {
	out := make([]string, groupSize)
	for i := range out {
		out[i] = groupFile(slot, i)
	}
	return out
}

// op is one call a slot makes: its label, tool and arguments, and the files
// it changes (none for a read) with what they held when the call was made.
type op struct {
	label  string
	tool   string
	args   string
	files  []string
	before []state
	lines  int // of each file it writes
}

// The kinds of calls, by front door: the CLI runs exec (approved with
// --yes) and read; the MCP front doors grep, whose pattern names the call
// so that its audit record can be told apart (they choose their own ids).
var (
	cliTools = []string{"write", "write", "edit", "edit", "apply_patch", "apply_patch", "exec", "read"}
	mcpTools = []string{"write", "write", "edit", "edit", "apply_patch", "apply_patch", "grep"}
)

// nextOp makes slot's next call, from what its files hold now.
func nextOp(ws, slot, label string, tools []string, rng *rand.Rand) op {
	tool := tools[rng.IntN(len(tools))]
	switch tool {
	case "write", "edit":
		p := singleFile(slot, rng.IntN(singles))
		st := readState(ws, p, singleLines)
		if tool == "edit" && st.label != "" {
			return editOp(p, st, label)
		}
		return op{label: label, tool: "write", args: jsonArgs(map[string]any{"path": p, "content": body(p, label, singleLines)}), files: []string{p}, before: []state{st}, lines: singleLines}
	case "apply_patch":
		if o, ok := patchOp(ws, slot, label); ok {
			return o
		}
	case "exec":
		p := execFile(slot, label)
		cmd := fmt.Sprintf("mkdir -p %s && printf '%%s' '%s' > %s", path.Dir(p), body(p, label, execLines), p)
		return op{label: label, tool: "exec", args: jsonArgs(map[string]any{"command": cmd}), files: []string{p}, before: []state{{absent: true}}, lines: execLines}
	case "grep":
		return op{label: label, tool: "grep", args: jsonArgs(map[string]any{"pattern": "call=" + label, "path": slot, "literal": true})}
	}
	return op{label: label, tool: "read", args: jsonArgs(map[string]any{"path": singleFile(slot, 0)})}
}

// editOp replaces what p holds, whole, by what call label writes, in
// several edits of one call.
func editOp(p string, st state, label string) op {
	was, now := strings.Split(body(p, st.label, singleLines), "\n"), strings.Split(body(p, label, singleLines), "\n")
	last := len(was) - 2 // the sum line
	edits := []map[string]string{
		{"oldText": was[1] + "\n", "newText": now[1] + "\n"},
		{"oldText": strings.Join(was[2:last], "\n") + "\n", "newText": strings.Join(now[2:last], "\n") + "\n"},
		{"oldText": was[last] + "\n", "newText": now[last] + "\n"},
	}
	return op{label: label, tool: "edit", args: jsonArgs(map[string]any{"path": p, "edits": edits}), files: []string{p}, before: []state{st}, lines: singleLines}
}

// patchOp changes every file of slot's group in one patch: it adds the
// absent ones and rewrites the whole ones. A group with a broken file gets
// no patch (false).
func patchOp(ws, slot, label string) (op, bool) {
	var b strings.Builder
	var before []state
	b.WriteString("*** Begin Patch\n")
	for _, p := range group(slot) {
		st := readState(ws, p, groupLines)
		before = append(before, st)
		now := strings.Split(strings.TrimSuffix(body(p, label, groupLines), "\n"), "\n")
		switch {
		case st.absent:
			fmt.Fprintf(&b, "*** Add File: %s\n", p)
			for _, l := range now {
				b.WriteString("+" + l + "\n")
			}
		case st.label != "":
			was := strings.Split(strings.TrimSuffix(body(p, st.label, groupLines), "\n"), "\n")
			fmt.Fprintf(&b, "*** Update File: %s\n@@\n %s\n", p, was[0])
			for _, l := range was[1:] {
				b.WriteString("-" + l + "\n")
			}
			for _, l := range now[1:] {
				b.WriteString("+" + l + "\n")
			}
		default:
			return op{}, false
		}
	}
	b.WriteString("*** End Patch\n")
	return op{label: label, tool: "apply_patch", args: jsonArgs(map[string]any{"patch": b.String()}), files: group(slot), before: before, lines: groupLines}, true
}

func jsonArgs(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
