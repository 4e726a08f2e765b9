package shell

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/tool"
)

// processInput is the process tool's parameters.
type processInput struct {
	Action    string `json:"action" enum:"list,poll,log,write,kill,clear,remove" jsonschema:"list: the sessions. poll: new output since the last poll and whether it is still running. log: its output by lines. write: send data to its standard input. kill: stop it. clear: forget finished sessions. remove: stop (if running) and forget one session."`
	SessionID string `json:"sessionId,omitempty" jsonschema:"The session, as exec returned it. Required for every action except list and clear."`
	Timeout   int    `json:"timeout,omitempty" minimum:"0" maximum:"120000" jsonschema:"poll: milliseconds to wait for the command to finish before returning (default 0: return at once, at most 120000)."`
	Offset    int    `json:"offset,omitempty" minimum:"1" jsonschema:"log: first line to show, 1-based (default: the last lines)."`
	Limit     int    `json:"limit,omitempty" minimum:"1" jsonschema:"log: number of lines to show (default 200)."`
	Data      string `json:"data,omitempty" jsonschema:"write: the text to send to standard input; include \\n to end a line."`
	EOF       bool   `json:"eof,omitempty" jsonschema:"write: close standard input after data (in a pty: send Ctrl-D)."`
}

const processDescription = `Follow commands that exec left running in the background (after yieldMs, or with background: true), by sessionId.

- poll: output since the last poll, then "Process still running." or how it ended. timeout waits up to that many ms (at most 120000) for it to finish.
- log: its output by lines (offset, limit; default the last 200 lines).
- write: send data to its standard input (eof: true closes it).
- kill: stop it and every process it started (SIGTERM, then SIGKILL).
- list: all sessions; clear: forget finished sessions; remove: stop and forget one.
Finished sessions are kept for %s.`

// defaultLogLines is how many lines log shows when not told.
const defaultLogLines = 200

// processFactory makes the process tool for a tool context: it needs a
// workspace, like exec.
func (m *Manager) processFactory(tc *tool.Context) (*tool.Tool, error) {
	if _, err := workspaceRoot(tc); err != nil {
		return nil, err
	}
	cfg, err := loadSettings(tc.Config)
	if err != nil {
		return nil, err
	}
	t, err := tool.New("process", fmt.Sprintf(processDescription, cfg.sessionTTL),
		func(ctx context.Context, in processInput, inv tool.Invocation) (tool.Result, error) {
			return m.process(ctx, cfg, ownerOf(inv.Context), in)
		})
	if err != nil {
		return nil, err
	}
	t.Meta = processMeta
	return &t, nil
}

// process runs one call of the process tool. It sees only the sessions
// owner started (see ownerOf): another session's commands can be neither
// listed, read, written to nor killed.
func (m *Manager) process(ctx context.Context, cfg settings, owner string, in processInput) (tool.Result, error) {
	switch in.Action {
	case "list":
		return m.listResult(owner), nil
	case "clear":
		return m.clear(in.SessionID, owner)
	}
	if in.SessionID == "" {
		return tool.Result{}, tool.InputErrorf("action %q needs a sessionId: the id exec returned (use {\"action\":\"list\"} to see the sessions)", in.Action)
	}
	s, ok := m.get(in.SessionID, owner)
	if !ok {
		return tool.Result{}, tool.InputErrorf("there is no session %q: it never existed, was removed, or finished more than %s ago. Use {\"action\":\"list\"} to see the sessions", in.SessionID, cfg.sessionTTL)
	}
	defer s.reportHosts(ctx)
	switch in.Action {
	case "poll":
		return poll(ctx, s, time.Duration(in.Timeout)*time.Millisecond, cfg.maxTimeout), nil
	case "log":
		return logResult(s, in.Offset, in.Limit), nil
	case "write":
		return write(ctx, s, in.Data, in.EOF)
	case "kill":
		return m.kill(ctx, s, false, cfg.maxTimeout), nil
	case "remove":
		return m.kill(ctx, s, true, cfg.maxTimeout), nil
	}
	return tool.Result{}, tool.InputErrorf("unknown action %q: use list, poll, log, write, kill, clear or remove", in.Action)
}

// poll waits up to d for s to finish and returns its new output and state.
func poll(ctx context.Context, s *session, d, maxTimeout time.Duration) tool.Result {
	finished := s.wait(ctx, d)
	out := s.unread()
	var status string
	if finished {
		status = s.endLine(maxTimeout)
		if status == "" {
			status = "(Command exited with code 0)"
		}
	} else {
		running := time.Since(s.started)
		next := min(max(running, 5*time.Second), 120*time.Second)
		status = fmt.Sprintf("Process still running. It has run for %s and will be stopped at its timeout of %s. "+
			`Poll again with "timeout": %d to wait up to %s for it to finish.`,
			roundDuration(running), roundDuration(s.timeout), next.Milliseconds(), roundDuration(next))
	}
	if out == "" {
		out = "(no new output)"
	}
	return s.result(strings.TrimRight(out, "\n") + "\n\n" + status)
}

// logResult returns lines of s's output: from offset (1-based) for limit
// lines, by default the last defaultLogLines.
func logResult(s *session, offset, limit int) tool.Result {
	text, _ := s.out.Since(0, !s.finished())
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return s.result("(no output yet)")
	}
	lines := strings.Split(text, "\n")
	n := len(lines)
	if limit <= 0 {
		limit = defaultLogLines
	}
	var from int // 0-based
	if offset > 0 {
		from = offset - 1
	} else {
		from = max(n-limit, 0)
	}
	var b strings.Builder
	if from >= n {
		fmt.Fprintf(&b, "[offset %d is past the end: the output has %d lines. Use an offset from 1 to %d.]", offset, n, n)
		return s.result(b.String())
	}
	to := min(from+limit, n)
	b.WriteString(strings.Join(lines[from:to], "\n"))
	if from > 0 || to < n {
		fmt.Fprintf(&b, "\n\n[Showing lines %d-%d of %d.", from+1, to, n)
		if from > 0 {
			fmt.Fprintf(&b, " Earlier lines: offset=%d.", max(from-limit, 0)+1)
		}
		if to < n {
			fmt.Fprintf(&b, " Later lines: offset=%d.", to+1)
		}
		b.WriteString("]")
	}
	return s.result(b.String())
}

// write sends data to s's standard input.
func write(ctx context.Context, s *session, data string, eof bool) (tool.Result, error) {
	if data == "" && !eof {
		return tool.Result{}, tool.InputErrorf("write needs data (the text to send; include \\n to end a line) or eof: true")
	}
	if s.finished() {
		return tool.Result{}, tool.InputErrorf("session %s has finished, so it reads no more input. Start the command again with exec", s.id)
	}
	n, err := s.write(ctx, data, eof)
	if err != nil {
		return tool.Result{}, tool.InputErrorf("could not write to session %s: %v", s.id, err)
	}
	text := fmt.Sprintf("Wrote %d bytes to session %s.", n, s.id)
	if eof {
		text += " Its input is closed."
	}
	text += ` Use {"action":"poll"} to see what it printed.`
	return s.result(text), nil
}

// kill stops s and, when remove is set, forgets it.
func (m *Manager) kill(ctx context.Context, s *session, remove bool, maxTimeout time.Duration) tool.Result {
	wasRunning := !s.finished()
	if wasRunning {
		s.stop(stopKilled)
		select {
		case <-s.done:
		case <-ctx.Done():
			return tool.Errorf("session %s was told to stop, but the call ended before it had (SIGKILL follows SIGTERM after %s). Poll it to see when it has", s.id, roundDuration(s.killGrace))
		}
	}
	var text string
	switch {
	case wasRunning:
		text = fmt.Sprintf("Session %s stopped.", s.id)
	default:
		text = fmt.Sprintf("Session %s had already finished.", s.id)
		if end := s.endLine(maxTimeout); end != "" {
			text += " " + end
		}
	}
	if remove {
		m.forget(s.id)
		text += " It was removed."
	}
	return s.result(text)
}

// clear forgets the finished session id, or every finished session.
func (m *Manager) clear(id, owner string) (tool.Result, error) {
	if id != "" {
		s, ok := m.get(id, owner)
		if !ok {
			return tool.Result{}, tool.InputErrorf("there is no session %q. Use {\"action\":\"list\"} to see the sessions", id)
		}
		if !s.finished() {
			return tool.Result{}, tool.InputErrorf("session %s is still running: kill it first, or use \"remove\" to stop and forget it", id)
		}
		m.forget(id)
		return tool.Textf("Session %s cleared.", id), nil
	}
	n := 0
	for _, s := range m.list(owner) {
		if s.finished() {
			m.forget(s.id)
			n++
		}
	}
	return tool.Textf("Cleared %d finished session(s).", n), nil
}

// listResult lists the sessions for people and programs.
func (m *Manager) listResult(owner string) tool.Result {
	sessions := m.list(owner)
	infos := make([]sessionInfo, 0, len(sessions))
	var b strings.Builder
	for _, s := range sessions {
		in := s.info()
		infos = append(infos, in)
		state := in.Status
		switch {
		case in.ExitCode != nil:
			state = fmt.Sprintf("%s %d", in.Status, *in.ExitCode)
		case in.Signal != "":
			state = fmt.Sprintf("%s %s", in.Status, in.Signal)
		}
		cmd := textclip.Clip(strings.ReplaceAll(in.Command, "\n", " "), 80)
		sandbox := ""
		if in.Sandboxed {
			sandbox = " sandbox"
		}
		fmt.Fprintf(&b, "%s  %-12s %8s  pid %-7d%s  %s\n", in.SessionID, state,
			roundDuration(time.Duration(in.DurationMs)*time.Millisecond), in.PID, sandbox, cmd)
	}
	if len(infos) == 0 {
		b.WriteString(`No sessions. Commands appear here when exec leaves them running (yieldMs or "background": true).`)
	}
	res := tool.Text(strings.TrimRight(b.String(), "\n"))
	res.Details = map[string]any{"sessions": infos}
	return res
}
