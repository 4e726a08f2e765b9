package shell

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// sessionInfo describes a session to programs (result details, list).
type sessionInfo struct {
	SessionID string `json:"sessionId,omitempty"`
	Command   string `json:"command"`
	Workdir   string `json:"workdir"`
	PID       int    `json:"pid"`
	// Status is "running", "exited", "signaled", "timeout", "cancelled",
	// "killed", "shutdown" or "failed".
	Status    string `json:"status"`
	ExitCode  *int   `json:"exitCode,omitempty"`
	Signal    string `json:"signal,omitempty"`
	Sandboxed bool   `json:"sandboxed"`
	// Mode is how the command runs: "contained" (without approval, under
	// bubblewrap: workspace read-only, no network), "allowlisted" (without
	// approval, on the host, passed the allowlist and path checks),
	// "sandbox" (in the sandbox asked for) or "host".
	Mode        string `json:"mode"`
	PTY         bool   `json:"pty,omitempty"`
	StartedAt   string `json:"startedAt"`
	DurationMs  int64  `json:"durationMs"`
	OutputBytes int64  `json:"outputBytes"`
	// Truncated: part of the output was dropped to stay within the limit.
	Truncated bool `json:"truncated,omitempty"`
	// Lingering: some of its processes survived every attempt to end them.
	Lingering bool `json:"lingering,omitempty"`
	// Network lists the hosts a sandboxed command with the network asked
	// for (tools.exec.network), reached or refused.
	Network []tool.HostUse `json:"network,omitempty"`
}

// info describes s as it is now.
func (s *session) info() sessionInfo {
	total := s.out.Total()
	in := sessionInfo{
		SessionID: s.id, Command: s.command, Workdir: s.workdir, PID: s.pid,
		Sandboxed: s.sandboxed, Mode: s.mode, PTY: s.pty,
		StartedAt:   s.started.UTC().Format(time.RFC3339),
		OutputBytes: total,
		Truncated:   total > int64(s.out.headCap+s.out.ringCap),
	}
	if s.net != nil {
		in.Network = s.net.used()
	}
	if !s.finished() {
		in.Status = "running"
		in.DurationMs = time.Since(s.started).Milliseconds()
		return in
	}
	e := s.end
	in.DurationMs = e.ended.Sub(s.started).Milliseconds()
	in.Lingering = e.lingering
	switch {
	case e.err != nil:
		in.Status = "failed"
	case e.reason != notStopped:
		in.Status = [...]string{stopTimeout: "timeout", stopCancelled: "cancelled", stopKilled: "killed", stopShutdown: "shutdown"}[e.reason]
	case e.code >= 0:
		in.Status = "exited"
	default:
		in.Status = "signaled"
	}
	if e.code >= 0 && e.err == nil {
		code := e.code
		in.ExitCode = &code
	} else if e.signal != 0 {
		in.Signal = signalName(e.signal)
	}
	return in
}

// reportHosts records the hosts s's command asked the network for since
// the last report in the audit record of the call whose context ctx is.
func (s *session) reportHosts(ctx context.Context) {
	if s.net != nil {
		s.net.report(ctx)
	}
}

// result is a result with text and, as details, what s is now.
func (s *session) result(text string) tool.Result {
	res := tool.Text(text)
	res.Details = s.info()
	return res
}

// endLine says how a finished command ended, in the words models are used
// to: "(Command exited with code 2)". It is empty for a plain success.
func (s *session) endLine(maxTimeout time.Duration) string {
	e := s.end
	var line string
	switch {
	case e.reason == stopTimeout && s.capped:
		line = fmt.Sprintf("(Command timed out after %s, the time limit the caller set for this call, and was stopped, with every process it started.)",
			roundDuration(s.timeout))
	case e.reason == stopTimeout && s.foreground:
		longer := min(2*s.timeout, maxTimeout)
		line = fmt.Sprintf("(Command timed out after %s and was stopped, with every process it started. "+
			"If it needs more time, run it again with a longer timeout (at most %d seconds), for example \"timeout\": %d.)",
			roundDuration(s.timeout), int(maxTimeout/time.Second), int(longer/time.Second))
	case e.reason == stopTimeout:
		longer := min(2*s.timeout, maxTimeout)
		line = fmt.Sprintf("(Command timed out after %s and was stopped, with every process it started. "+
			"If it needs more time, run it again with a longer timeout (at most %d seconds), for example \"timeout\": %d, "+
			"or with \"background\": true and follow it with the process tool.)",
			roundDuration(s.timeout), int(maxTimeout/time.Second), int(longer/time.Second))
	case e.reason == stopCancelled:
		line = "(Command was cancelled and stopped, with every process it started.)"
	case e.reason == stopKilled:
		line = "(Command was killed on request.)"
	case e.reason == stopShutdown:
		line = "(Command was stopped because Toolbelt is shutting down.)"
	default:
		line = exitLine(e)
	}
	if e.lingering {
		line += "\n(Some of its processes could not be stopped.)"
	}
	return line
}

// exitLine says how a command that ended by itself ended.
func exitLine(e exitInfo) string {
	switch {
	case e.err != nil:
		return fmt.Sprintf("(Command failed: %v)", e.err)
	case e.code == 0:
		return ""
	case e.code == 127:
		return "(Command exited with code 127: Command not found)"
	case e.code == 126:
		return "(Command exited with code 126: Command not executable (permission denied))"
	case e.code > 128 && e.code < 128+65:
		return fmt.Sprintf("(Command exited with code %d, which usually means it was killed by %s)", e.code, signalName(syscall.Signal(e.code-128)))
	case e.code > 0:
		return fmt.Sprintf("(Command exited with code %d)", e.code)
	}
	return fmt.Sprintf("(Command was killed by signal %s)", signalName(e.signal))
}

// withEnd joins a command's output and the line saying how it ended.
func withEnd(output, end string) string {
	output = strings.TrimRight(output, "\n")
	switch {
	case output == "" && end == "":
		return "(no output)"
	case output == "":
		return end
	case end == "":
		return output
	}
	return output + "\n\n" + end
}

// roundDuration formats d for people: "2s", "1m30s", "250ms".
func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
