package dir

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// Request is the JSON a handler reads from standard input.
type Request struct {
	// Operation is "call".
	Operation string `json:"operation"`
	// Arguments are the validated arguments (an object).
	Arguments json.RawMessage `json:"arguments"`
	// CallID is the call's id.
	CallID string `json:"callId"`
	// Context says who and where the call runs for.
	Context RequestContext `json:"context"`
}

// RequestContext is the request's context.
type RequestContext struct {
	Workspace string `json:"workspace"`
	Session   string `json:"session"`
	Agent     string `json:"agent"`
}

// Response is the JSON a handler writes to standard output.
type Response struct {
	// Success says whether the call worked.
	Success *bool `json:"success"`
	// Result is the result, any JSON; Summary says it in a line.
	Result  json.RawMessage `json:"result,omitempty"`
	Summary string          `json:"summary,omitempty"`
	// Content, when set, is what the model sees (text and image blocks).
	Content []tool.Content `json:"content,omitempty"`
	// Error, CanRetry and Suggestion describe a failure.
	Error      string `json:"error,omitempty"`
	CanRetry   bool   `json:"canRetry,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// Progress is a line a handler may write to standard error.
type Progress struct {
	Progress *float64 `json:"progress"`
	Message  string   `json:"message"`
}

// Failure is a call the handler could not complete: it said so itself, or
// it broke the protocol (crashed, printed no JSON, printed too much). Its
// message is written for the model.
type Failure struct {
	Info tool.ErrorInfo
	// Stderr holds the handler's last log lines, for people.
	Stderr []string
}

func (f *Failure) Error() string { return f.Info.Message }

// ErrorInfo tells the pipeline what the model sees.
func (f *Failure) ErrorInfo() tool.ErrorInfo { return f.Info }

func mapError(err error) tool.ErrorInfo {
	var f *Failure
	if errors.As(err, &f) {
		return f.Info
	}
	return tool.ErrorInfo{Message: err.Error()}
}

// logLines is how many of a handler's last log lines are kept for errors.
const logLines = 10

// execute runs one call: the handler gets the request, its answer becomes
// the result.
func (t *Tool) execute(ctx context.Context, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
	if tc == nil {
		tc = &tool.Context{}
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	in, err := json.Marshal(Request{
		Operation: "call", Arguments: args, CallID: call.ID,
		Context: RequestContext{Workspace: tc.WorkspaceDir, Session: tc.SessionKey, Agent: tc.AgentID},
	})
	if err != nil {
		return tool.Result{}, tool.InputErrorf("the arguments are not valid JSON: %v", err)
	}
	var mu sync.Mutex
	var logs []string
	stderr := func(line string) {
		if p, ok := parseProgress(line); ok {
			update(progressResult(p))
			return
		}
		mu.Lock()
		logs = append(logs, line)
		if len(logs) > logLines {
			logs = logs[1:]
		}
		mu.Unlock()
	}
	res, err := t.runHandler(ctx, in, tc, stderr)
	if err != nil {
		return tool.Result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if res.Stopped {
		return tool.Result{}, cmpErr(context.Cause(ctx), context.Canceled)
	}
	return t.answer(res, logs)
}

// runHandler runs the handler once (or asks the persistent one) with the
// request in, passing its standard error lines to stderr.
func (t *Tool) runHandler(ctx context.Context, in []byte, tc *tool.Context, stderr func(string)) (shell.ChildResult, error) {
	if t.pers != nil {
		return t.callPersistent(ctx, in, tc, stderr)
	}
	child, err := t.child(ctx, tc)
	if err != nil {
		return shell.ChildResult{}, err
	}
	child.Stdin, child.Stderr = in, stderr
	res, err := shell.RunChild(ctx, child)
	if err != nil {
		return res, &Failure{Info: tool.ErrorInfo{
			Message:    fmt.Sprintf("the handler of %s could not be started: %v", t.Meta.ID, err),
			Suggestion: "This is a problem with the tool's installation, not with the call; tell the user.",
		}}
	}
	return res, nil
}

// child works out how to start the handler for a call in tc.
func (t *Tool) child(ctx context.Context, tc *tool.Context) (shell.Child, error) {
	allow := append(append([]string(nil), t.opts.EnvAllow...), t.Metadata.Env...)
	set := map[string]string{"TOOLBELT_TOOL_DIR": t.Dir}
	dir := t.Dir
	if tc.WorkspaceDir != "" {
		dir = tc.WorkspaceDir
	}
	c := shell.Child{
		Path: t.Argv[0], Args: t.Argv, Dir: dir,
		MaxStdout: cmpOr(t.opts.MaxOutput, DefaultMaxOutput), KillGrace: t.opts.KillGrace,
	}
	if t.Metadata.Sandbox || tc.Sandboxed {
		if tc.WorkspaceDir == "" {
			return shell.Child{}, &Failure{Info: tool.ErrorInfo{Message: fmt.Sprintf("%s must run in the sandbox, which needs a workspace, and this call has none", t.Meta.ID)}}
		}
		root, err := filepath.EvalSymlinks(tc.WorkspaceDir)
		if err != nil {
			return shell.Child{}, err
		}
		spec := shell.SandboxSpec(tc, root, 256)
		spec.ReadOnly = []string{t.Dir}
		b, err := sandbox.Find(ctx, t.opts.Bwrap)
		if err != nil {
			return shell.Child{}, &Failure{Info: tool.ErrorInfo{Message: err.Error()}}
		}
		plan, err := b.Wrap(spec, t.Argv)
		if err != nil {
			return shell.Child{}, &Failure{Info: tool.ErrorInfo{Message: err.Error()}}
		}
		c.Path, c.Args, c.Cred, c.Dir, c.Done = plan.Path, append([]string{plan.Path}, plan.Args...), plan.Credential, "/", plan.Release
		for k, v := range plan.Env {
			set[k] = v
		}
	}
	c.Env = shell.ScrubbedEnv(allow, set)
	return c, nil
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// answer turns what the handler printed into the call's result.
func (t *Tool) answer(res shell.ChildResult, logs []string) (tool.Result, error) {
	fail := func(msg, suggestion string) (tool.Result, error) {
		if len(logs) > 0 {
			msg += ". Its last log lines: " + strings.Join(logs, " | ")
		}
		return tool.Result{}, &Failure{Info: tool.ErrorInfo{Message: msg, Suggestion: suggestion}, Stderr: logs}
	}
	const broken = "The tool itself is broken, not your call: do not retry it; tell the user."
	if res.StdoutOverflow {
		return fail(fmt.Sprintf("the handler of %s printed more than %d bytes and was stopped", t.Meta.ID, cmpOr(t.opts.MaxOutput, DefaultMaxOutput)),
			"Ask for less (a narrower query, a limit), or tell the user the tool's output is too large.")
	}
	out := bytes.TrimSpace(res.Stdout)
	var resp Response
	jsonErr := errors.New("no output")
	if len(out) > 0 {
		dec := json.NewDecoder(bytes.NewReader(out))
		jsonErr = dec.Decode(&resp)
		if jsonErr == nil && dec.More() {
			jsonErr = errors.New("more than one JSON value")
		}
	}
	switch {
	case res.ExitCode == -1 && jsonErr != nil:
		return fail(fmt.Sprintf("the handler of %s was killed by %s before it answered", t.Meta.ID, shell.SignalName(res.Signal)), broken)
	case res.ExitCode != 0 && jsonErr != nil:
		return fail(fmt.Sprintf("the handler of %s exited with code %d without an answer", t.Meta.ID, res.ExitCode), broken)
	case jsonErr != nil:
		return fail(fmt.Sprintf("the handler of %s did not answer with one JSON object on standard output (%v); it printed: %s", t.Meta.ID, jsonErr, shorten(string(out), 200)), broken)
	case resp.Success == nil:
		return fail(fmt.Sprintf(`the handler of %s answered without "success": true or false; it printed: %s`, t.Meta.ID, shorten(string(out), 200)), broken)
	case !*resp.Success:
		msg := resp.Error
		if msg == "" {
			msg = t.Meta.ID + " failed without saying why"
		}
		return tool.Result{}, &Failure{Info: tool.ErrorInfo{Message: msg, CanRetry: resp.CanRetry, Suggestion: resp.Suggestion}, Stderr: logs}
	}
	for i, c := range resp.Content {
		if c.Type == tool.ImageContent {
			if c.MIMEType == "" || !strings.HasPrefix(c.MIMEType, "image/") {
				return fail(fmt.Sprintf("the handler of %s answered with an image block (content[%d]) without an image mimeType", t.Meta.ID, i), broken)
			}
			if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
				return fail(fmt.Sprintf("the handler of %s answered with an image block (content[%d]) whose data is not base64", t.Meta.ID, i), broken)
			}
		}
	}
	details := map[string]any{"source": "directory"}
	var result any
	if len(resp.Result) > 0 {
		_ = json.Unmarshal(resp.Result, &result) // decoded once already
		details["result"] = result
	}
	if resp.Summary != "" {
		details["summary"] = resp.Summary
	}
	if len(resp.Content) > 0 {
		return tool.Result{Content: resp.Content, Details: details}, nil
	}
	var text string
	switch r := result.(type) {
	case nil:
		text = resp.Summary
	case string:
		text = r
	default:
		b, _ := json.MarshalIndent(r, "", "  ")
		text = string(b)
		if resp.Summary != "" {
			text = resp.Summary + "\n\n" + text
		}
	}
	if text == "" {
		text = "(" + t.Meta.ID + " succeeded with no output)"
	}
	r := tool.Text(text)
	r.Details = details
	return r, nil
}

// parseProgress reads a progress line: {"progress": 40, "message": "…"}.
func parseProgress(line string) (Progress, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return Progress{}, false
	}
	var p Progress
	if err := json.Unmarshal([]byte(line), &p); err != nil || p.Progress == nil && p.Message == "" {
		return Progress{}, false
	}
	return p, true
}

// progressResult is the partial result a progress line becomes.
func progressResult(p Progress) tool.Result {
	text := p.Message
	details := map[string]any{"message": p.Message}
	if p.Progress != nil {
		details["progress"] = *p.Progress
		text = strings.TrimSpace(fmt.Sprintf("%g%% %s", *p.Progress, p.Message))
	}
	r := tool.Text(text)
	r.Details = details
	return r
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// preview says what a call would run: the handler, its interpreter and
// the SHA-256 of the handler file, so that an approval "always" does not
// carry over to a changed handler.
func (t *Tool) preview(_ context.Context, _ tool.Call, _ *tool.Context) (tool.Effects, error) {
	b, err := os.ReadFile(t.Handler)
	if err != nil {
		return tool.Effects{}, fmt.Errorf("reading the handler of %s: %w", t.Meta.ID, err)
	}
	sum := sha256.Sum256(b)
	return tool.Effects{
		Summary:    fmt.Sprintf("run the handler of the directory tool %s (%s)", t.Meta.ID, t.Dir),
		Command:    strings.Join(t.Argv, " "),
		Executable: t.Argv[0],
		ScriptHash: hex.EncodeToString(sum[:]),
	}, nil
}

func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
