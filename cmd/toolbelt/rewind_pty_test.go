package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestChatRewindAtTerminal drives /rewind in toolbelt chat at a
// pseudo-terminal, as a person would: the list of turns, a rewind of files
// and conversation to before turn 2 (the next request no longer carries
// it), and a rewind refused, with nothing changed, because the person
// changed a file by hand since the turn's edit. Both rewinds are audited.
func TestChatRewindAtTerminal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(a, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(id string) llmtest.Call { return llmtest.Call{ID: id, Name: "read", Args: `{"path":"a.txt"}`} }
	edit := func(id, to string) llmtest.Call {
		return llmtest.Call{ID: id, Name: "edit", Args: `{"path":"a.txt","edits":[{"oldText":"one","newText":"` + to + `"}]}`}
	}
	s := llmtest.New(t,
		anthropic("", llmtest.Call{ID: "w1", Name: "write", Args: `{"path":"b.txt","content":"b"}`}), anthropic("Made b."),
		anthropic("", read("r1")), anthropic("", edit("e1", "two")), anthropic("Changed a to two."),
		anthropic("", read("r2")), anthropic("", edit("e2", "three")), anthropic("Changed a to three."))
	env := cliEnvironment(t)
	cmd := exec.Command(os.Args[0], "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--yes")
	cmd.Env = env
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer tty.Close()
	screen := newScreen(tty)
	// say types line once the chat prompts again after what it showed
	// for the last line, which must include want.
	shown := 0
	say := func(line string, want ...string) string {
		t.Helper()
		var out string
		deadline := time.After(60 * time.Second)
		for {
			text := screen.text()
			out = text[min(shown, len(text)):]
			if strings.HasSuffix(out, "\n> ") && containsAll(out, want) {
				shown = len(text)
				break
			}
			select {
			case <-screen.changed:
			case <-deadline:
				t.Fatalf("the chat never showed %q and its prompt:\n%s", want, out)
			}
		}
		if _, err := tty.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		return out
	}
	say("make b", "/help for commands.")
	say("change a to two", "Made b.")
	say("/rewind", "Changed a to two.")
	say("/rewind 2", "TURN  TIME", "make b", "b.txt", "change a to two", "a.txt")
	say("change a to three", "Undid call call_", ": reverted a.txt.", "Rewound the conversation to before turn 2 (4 message(s) kept).")
	say("", "Changed a to three.") // an empty line: a prompt again
	if err := os.WriteFile(a, []byte("three, and by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	say("/rewind 2")
	say("/rewind", "nothing was rewound: cannot undo call call_", "a.txt: changed since")
	if turns := say("/quit", "change a to three", "a.txt"); strings.Contains(turns, "to two") {
		t.Errorf("the turns still list the one rewound:\n%s", turns)
	}
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("exit %d:\n%s", code, screen.all(t))
	}
	for name, want := range map[string]string{"a.txt": "three, and by hand\n", "b.txt": "b"} {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 8 {
		t.Fatalf("%d requests", len(reqs))
	}
	if after := string(reqs[5].Body); !strings.Contains(after, "make b") || strings.Contains(after, "to two") || !strings.Contains(after, "change a to three") {
		t.Errorf("the request after the rewind: %s", after[:min(len(after), 1500)])
	}
	rewinds := auditRecords(t, env, "--tool", "rewind")
	if len(rewinds) != 2 || rewinds[0].IsError || rewinds[1].ErrorClass != "conflict" {
		t.Fatalf("rewind records: %+v", rewinds)
	}
}

// containsAll says whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
