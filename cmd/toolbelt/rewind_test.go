package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

func anthropic(text string, calls ...llmtest.Call) llmtest.Response {
	return llmtest.Response{Body: llmtest.Anthropic("", text, calls...)}
}

// TestChatRewind drives /rewind in toolbelt chat: the list of turns (the
// files each changed, its shell commands), a rewind of files and
// conversation to before turn 2 (the shell command's file stays and is
// named as not covered; the next request no longer carries turn 2), and
// a rewind refused, with nothing changed, because someone else changed a
// file since. Each rewind is in the audit log.
func TestChatRewind(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(a, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := func(id, old, new string) llmtest.Call {
		return llmtest.Call{ID: id, Name: "edit", Args: `{"path":"a.txt","edits":[{"oldText":"` + old + `","newText":"` + new + `"}]}`}
	}
	read := func(id string) llmtest.Call { return llmtest.Call{ID: id, Name: "read", Args: `{"path":"a.txt"}`} }
	s := llmtest.New(t,
		anthropic("", llmtest.Call{ID: "w1", Name: "write", Args: `{"path":"b.txt","content":"b"}`}), anthropic("Made b."),
		anthropic("", read("r1")), anthropic("", edit("e1", "one", "two")),
		anthropic("", llmtest.Call{ID: "x1", Name: "exec", Args: `{"command":"echo shell > c.txt"}`}), anthropic("Changed a."),
		anthropic("Here."),
		anthropic("", read("r2")), anthropic("", edit("e2", "one", "three")),
		llmtest.Response{Check: func([]byte) *llmtest.Response {
			if err := os.WriteFile(a, []byte("three, and by hand\n"), 0o644); err != nil {
				t.Error(err)
			}
			r := anthropic("Changed again.")
			return &r
		}})
	input := "make b\nchange a\n/rewind\n/rewind 2\nare you there?\nchange a again\n/rewind 3 files\n/rewind 9\n/quit\n"
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", input, "chat", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--yes").expect(t, 0)
	for _, want := range []string{
		"TURN  TIME", "make b", "b.txt", "change a", "a.txt (+ 1 shell command(s), not covered)",
		"Undid call call_", ": reverted a.txt.", "Rewound the conversation to before turn 2 (4 message(s) kept).",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{
		"not covered by the rewind", "exec: echo shell > c.txt",
		"nothing was rewound: cannot undo call call_", "a.txt: changed since",
		"there is no turn 9: the session has 3 turn(s)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for name, want := range map[string]string{"a.txt": "three, and by hand\n", "b.txt": "b", "c.txt": "shell\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 10 {
		t.Fatalf("%d requests", len(reqs))
	}
	if after := string(reqs[6].Body); !strings.Contains(after, "make b") || strings.Contains(after, "change a") || !strings.Contains(after, "are you there?") {
		t.Errorf("the request after the rewind: %s", after)
	}
	rewinds := auditRecords(t, env, "--tool", "rewind")
	if len(rewinds) != 3 || rewinds[0].IsError || rewinds[1].ErrorClass != "conflict" || rewinds[2].ErrorClass != "refused" {
		t.Fatalf("rewind records: %+v", rewinds)
	}
	var args map[string]any
	if err := json.Unmarshal(rewinds[0].Arguments, &args); err != nil || args["to"] != 2.0 || args["files"] != true || args["conversation"] != true {
		t.Errorf("first rewind's arguments %s", rewinds[0].Arguments)
	}
}

// TestSessionsRewind: toolbelt sessions rewind lists a kept session's
// turns, refuses (exit 1, nothing changed) while a file its turns changed
// was changed by someone else since, takes back only the files with
// --files and only the conversation with --conversation; the next run
// resumes from what is kept.
func TestSessionsRewind(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(a, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t,
		anthropic("", llmtest.Call{ID: "w1", Name: "write", Args: `{"path":"b.txt","content":"b"}`}), anthropic("Made b."),
		anthropic("", llmtest.Call{ID: "r1", Name: "read", Args: `{"path":"a.txt"}`}),
		anthropic("", llmtest.Call{ID: "e1", Name: "edit", Args: `{"path":"a.txt","edits":[{"oldText":"one","newText":"two"}]}`}), anthropic("Changed a."),
		anthropic("Hello."))
	env := cliEnvironment(t)
	run := func(prompt string) {
		runCLIWith(t, env, "", "", "run", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--session", "s1", "--yes", prompt).expect(t, 0)
	}
	rewind := func(code int, args ...string) cliResult {
		return runCLIWith(t, env, "", "", append([]string{"sessions", "rewind", "s1", "--workspace", ws}, args...)...).expect(t, code)
	}
	messages := func() int {
		var got struct{ Transcript []json.RawMessage }
		r := runCLIWith(t, env, "", "", "sessions", "show", "s1", "--json", "--workspace", ws).expect(t, 0)
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		return len(got.Transcript)
	}
	run("make b")
	run("change a")
	if r := rewind(0); !strings.Contains(r.stdout, "make b    b.txt") || !strings.Contains(r.stdout, "change a  a.txt") {
		t.Errorf("turns:\n%s", r.stdout)
	}
	if err := os.WriteFile(a, []byte("two, and by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := rewind(1, "--to", "1"); !strings.Contains(r.stderr, "nothing was rewound: cannot undo 2 calls") || !strings.Contains(r.stderr, "a.txt: changed since") {
		t.Errorf("refusal: %s", r.stderr)
	}
	if b, _ := os.ReadFile(a); string(b) != "two, and by hand\n" || messages() != 10 {
		t.Fatalf("the refused rewind changed something: a.txt %q, %d messages", b, messages())
	}
	if err := os.WriteFile(a, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := rewind(0, "--to", "2", "--files"); !strings.Contains(r.stdout, "reverted a.txt") || strings.Contains(r.stdout, "conversation") {
		t.Errorf("files only: %s", r.stdout)
	}
	if b, _ := os.ReadFile(a); string(b) != "one\n" || messages() != 10 {
		t.Errorf("after --files: a.txt %q, %d messages", b, messages())
	}
	rewind(0, "--to", "2", "--conversation")
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil || messages() != 4 {
		t.Errorf("after --conversation: b.txt %v, %d messages", err, messages())
	}
	run("hello")
	if last := string(s.Requests()[5].Body); !strings.Contains(last, "make b") || strings.Contains(last, "change a") {
		t.Errorf("the run after the rewind: %s", last)
	}
}

// TestSessionsRewindMCP: an MCP client keeps its own conversation, but the
// files Toolbelt's tools changed for its session are in the journal.
// toolbelt sessions rewind, given the MCP session's key (the sessionKey
// of its audit records), lists its calls as turns and takes the files of
// calls 2 and after back; refused, with nothing changed, while one was
// changed since by someone else, and refused for the conversation, which
// is the client's. Each rewind is audited.
func TestSessionsRewindMCP(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a := filepath.Join(ws, "a.txt")
	env := cliEnvironment(t)
	cs, _ := mcpSession(t, env, ws)
	for _, w := range [][2]string{{"a.txt", "two\n"}, {"b.txt", "b"}, {"a.txt", "three\n"}} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write", Arguments: map[string]any{"path": w[0], "content": w[1]}})
		if err != nil || res.IsError {
			t.Fatalf("write %s: %v %s", w[0], err, textOf(res))
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	writes := auditRecordsUntil(t, env, func(rs []audit.Record) bool { return len(rs) == 3 }, "--tool", "write")
	key := writes[0].SessionKey
	if len(writes) != 3 || key == "" || writes[2].SessionKey != key {
		t.Fatalf("the writes' records: %+v", writes)
	}
	elsewhere := t.TempDir()
	rewind := func(code int, args ...string) cliResult {
		return runCLIWith(t, env, elsewhere, "", append([]string{"sessions", "rewind", key}, args...)...).expect(t, code)
	}
	if r := rewind(0); !containsAll(r.stdout, []string{"1     ", `write {"content":"two\n","path":"a.txt"}`, "b.txt", "3     "}) {
		t.Errorf("turns:\n%s", r.stdout)
	}
	if err := os.WriteFile(a, []byte("three, and by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := rewind(1, "--to", "2"); !containsAll(r.stderr, []string{"nothing was rewound: cannot undo 2 calls", "a.txt: changed since"}) {
		t.Errorf("refusal: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil {
		t.Fatalf("the refused rewind removed b.txt: %v", err)
	}
	if r := rewind(2, "--to", "1", "--conversation"); !strings.Contains(r.stderr, "keeps no conversation of session "+key+" (its MCP client keeps its own)") {
		t.Errorf("conversation: %s", r.stderr)
	}
	if err := os.WriteFile(a, []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := rewind(0, "--to", "2"); !containsAll(r.stdout, []string{"Undid 2 calls", "reverted a.txt", "deleted b.txt"}) || strings.Contains(r.stdout, "conversation") {
		t.Errorf("rewind: %s", r.stdout)
	}
	if b, _ := os.ReadFile(a); string(b) != "two\n" {
		t.Errorf("a.txt = %q after the rewind", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after the rewind: %v", err)
	}
	if r := runCLIWith(t, env, elsewhere, "", "sessions", "rewind", "stdio-nobody").expect(t, 2); !strings.Contains(r.stderr, "toolbelt audit --json names the sessionKey") {
		t.Errorf("an unknown key: %s", r.stderr)
	}
	rewinds := auditRecords(t, env, "--tool", "rewind")
	if len(rewinds) != 3 || rewinds[0].ErrorClass != "conflict" || rewinds[1].ErrorClass != "refused" || rewinds[2].IsError || rewinds[2].SessionKey != key {
		t.Fatalf("rewind records: %+v", rewinds)
	}
}
