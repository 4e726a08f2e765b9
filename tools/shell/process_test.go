package shell

import (
	"fmt"
	"strings"
	"testing"
)

func TestBackgroundPollAndLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// The command waits for a line on stdin, so the test decides when it
	// moves on; no timing is involved.
	got, info := e.exec(map[string]any{
		"command":    `for i in $(seq 1 300); do echo "line $i"; done; read -r go; echo "after $go"; exit 4`,
		"background": true,
	}, false)
	id := info.SessionID
	if id == "" || info.Status != "running" || !strings.Contains(got, "Command started in the background (session "+id) {
		t.Fatalf("background exec: %q %+v", got, info)
	}
	list, _ := e.process(map[string]any{"action": "list"})
	if !strings.Contains(list, id) || !strings.Contains(list, "running") {
		t.Errorf("list does not show the running session: %q", list)
	}

	// The output so far, then the process still running.
	var poll string
	for !strings.Contains(poll, "line 300") {
		p, _ := e.process(map[string]any{"action": "poll", "sessionId": id, "timeout": 200})
		if !strings.Contains(p, "\n\nProcess still running. It has run for ") || !strings.Contains(p, `Poll again with "timeout"`) {
			t.Fatalf("poll of a running process: %q", p)
		}
		poll += p
	}
	if strings.Count(poll, "line 1\n") != 1 {
		t.Errorf("polls repeated or lost output: %q", poll)
	}

	e.process(map[string]any{"action": "write", "sessionId": id, "data": "now\n"})
	final, fin := e.process(map[string]any{"action": "poll", "sessionId": id, "timeout": 120_000})
	if !strings.HasPrefix(final, "after now") || !strings.HasSuffix(final, "(Command exited with code 4)") {
		t.Errorf("last poll = %q, want only the new output and the exit status", final)
	}
	if fin.Status != "exited" || *fin.ExitCode != 4 {
		t.Errorf("details %+v", fin)
	}
	again, _ := e.process(map[string]any{"action": "poll", "sessionId": id})
	if !strings.HasPrefix(again, "(no new output)") {
		t.Errorf("poll after the end = %q", again)
	}

	// log: the last 200 lines by default, then pages.
	log, _ := e.process(map[string]any{"action": "log", "sessionId": id})
	lines := strings.Split(log, "\n")
	if lines[0] != "line 102" || !strings.Contains(log, "after now") ||
		!strings.HasSuffix(log, "[Showing lines 102-301 of 301. Earlier lines: offset=1.]") {
		t.Errorf("default log = %q … %q", lines[0], lines[len(lines)-1])
	}
	log, _ = e.process(map[string]any{"action": "log", "sessionId": id, "offset": 10, "limit": 3})
	if want := "line 10\nline 11\nline 12\n\n[Showing lines 10-12 of 301. Earlier lines: offset=7. Later lines: offset=13.]"; log != want {
		t.Errorf("log page = %q, want %q", log, want)
	}
	log, _ = e.process(map[string]any{"action": "log", "sessionId": id, "offset": 400})
	if !strings.Contains(log, "past the end") {
		t.Errorf("log past the end = %q", log)
	}

	// clear forgets finished sessions only.
	_, running := e.exec(map[string]any{"command": "sleep 3600", "background": true}, false)
	msg := e.call("process", map[string]any{"action": "clear", "sessionId": running.SessionID})
	if !msg.IsError || !strings.Contains(text(msg), "still running") {
		t.Errorf("clear of a running session: %q", text(msg))
	}
	cleared, _ := e.process(map[string]any{"action": "clear"})
	if cleared != "Cleared 1 finished session(s)." {
		t.Errorf("clear = %q", cleared)
	}
	msg = e.call("process", map[string]any{"action": "poll", "sessionId": id})
	if !msg.IsError || !strings.Contains(text(msg), "there is no session") {
		t.Errorf("poll of a cleared session: %q", text(msg))
	}
	removed, rm := e.process(map[string]any{"action": "remove", "sessionId": running.SessionID})
	if !strings.Contains(removed, "stopped") || !strings.Contains(removed, "removed") || rm.Status != "killed" {
		t.Errorf("remove = %q %+v", removed, rm)
	}
	if !groupGone(running.PID) {
		t.Errorf("remove left process group %d running", running.PID)
	}
	list, _ = e.process(map[string]any{"action": "list"})
	if !strings.HasPrefix(list, "No sessions.") {
		t.Errorf("list after clearing and removing = %q", list)
	}
}

func TestYieldContinuesInBackground(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	got, info := e.exec(map[string]any{"command": "echo before; read -r x; echo after", "yieldMs": 100}, false)
	if !strings.HasPrefix(got, "before\n\nCommand is still running after 100ms and continues in the background (session "+info.SessionID) {
		t.Fatalf("yield result = %q", got)
	}
	e.process(map[string]any{"action": "write", "sessionId": info.SessionID, "eof": true})
	poll, _ := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 120_000})
	if poll != "after\n\n(Command exited with code 0)" {
		t.Errorf("poll = %q, want only the output after the yield", poll)
	}
}

func TestBackgroundKeepsItsTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	started, info := e.exec(map[string]any{"command": "echo up; sleep 3600 & wait", "background": true, "timeout": 1}, false)
	poll, fin := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 120_000})
	// "up" is in the start's result when the command printed it before the
	// start returned, else in the poll's: each output is reported once.
	if strings.Contains(started, "up\n") == strings.HasPrefix(poll, "up\n") || !strings.Contains(poll, "(Command timed out after 1s and was stopped") {
		t.Errorf("start = %q, poll = %q", started, poll)
	}
	if fin.Status != "timeout" {
		t.Errorf("status = %q, want timeout", fin.Status)
	}
	if !groupGone(info.PID) {
		t.Errorf("process group %d outlived its timeout", info.PID)
	}
}

func TestProcessKill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	_, info := e.exec(map[string]any{"command": "trap '' TERM; sleep 3600 & sleep 3600 & wait", "background": true}, false)
	got, fin := e.process(map[string]any{"action": "kill", "sessionId": info.SessionID})
	if got != fmt.Sprintf("Session %s stopped.", info.SessionID) || fin.Status != "killed" {
		t.Errorf("kill = %q %+v", got, fin)
	}
	if !groupGone(info.PID) {
		t.Errorf("process group %d survived kill", info.PID)
	}
	got, _ = e.process(map[string]any{"action": "kill", "sessionId": info.SessionID})
	if !strings.Contains(got, "had already finished") {
		t.Errorf("second kill = %q", got)
	}
	msg := e.call("process", map[string]any{"action": "write", "sessionId": info.SessionID, "data": "x"})
	if !msg.IsError || !strings.Contains(text(msg), "has finished") {
		t.Errorf("write to a finished session: %q", text(msg))
	}
}

func TestProcessInputErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	// Not a command that runs unasked: those read /dev/null.
	_, info := e.exec(map[string]any{"command": `read -r line && echo "$line"`, "background": true}, false)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "poll"}, "needs a sessionId"},
		{map[string]any{"action": "log", "sessionId": "zzz"}, `there is no session`},
		{map[string]any{"action": "write", "sessionId": info.SessionID}, "write needs data"},
		{map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 120_001}, "maximum"},
		{map[string]any{"action": "explode"}, "action"},
	}
	for _, tt := range tests {
		msg := e.call("process", tt.args)
		if !msg.IsError || !strings.Contains(text(msg), tt.want) {
			t.Errorf("%v: isError=%v text %q, want %q", tt.args, msg.IsError, text(msg), tt.want)
		}
	}
	e.process(map[string]any{"action": "write", "sessionId": info.SessionID, "data": "echoed\n", "eof": true})
	poll, _ := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 120_000})
	if poll != "echoed\n\n(Command exited with code 0)" {
		t.Errorf("cat after write and eof: %q", poll)
	}
}
