package dir

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// Request is the JSON a handler reads from standard input.
type Request struct {
	// Operation is "call", or "undo" to take back a call of a tool whose
	// metadata declares undo.
	Operation string `json:"operation"`
	// Arguments are the validated arguments (an object); absent for undo.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Undo is, for undo, the data the response of the call to take back
	// kept ("undo").
	Undo json.RawMessage `json:"undo,omitempty"`
	// CallID is the call's id (for undo, the undo's own).
	CallID string `json:"callId"`
	// Context says who and where the call runs for.
	Context RequestContext `json:"context"`
	// Settings are the tool's settings from toolbelt.yaml (tools.<name>),
	// checked against what its metadata declares; absent when it
	// declares none.
	Settings json.RawMessage `json:"settings,omitempty"`
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
	// Undo, from a tool whose metadata declares undo, is the data taking
	// the call back needs (any JSON), kept with the call.
	Undo json.RawMessage `json:"undo,omitempty"`
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

// Log is a log line a handler may write to standard error, sent to the
// client that follows the call (MCP notifications/message).
type Log struct {
	Log string `json:"log"`
	// Level is one of tool.LogLevels (default info).
	Level string `json:"level"`
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
	args, err := withDefaults(args, t.Parameters)
	if err != nil {
		return tool.Result{}, tool.InputErrorf("the arguments are not a JSON object: %v", err)
	}
	return t.ask(ctx, Request{Operation: "call", Arguments: args, CallID: call.ID}, call, tc, update)
}

// withDefaults fills in the properties args lacks that schema s gives a
// default, in nested objects too, so that the handler gets the call as the
// schema describes it (the seeds' schema.json example: size and style
// reach the handler as their defaults, not missing). A value given, even
// null, is kept.
func withDefaults(args json.RawMessage, s *jsonschema.Schema) (json.RawMessage, error) {
	if s == nil || len(s.Properties) == 0 {
		return args, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return args, err
	}
	changed := false
	for name, p := range s.Properties {
		v, given := obj[name]
		switch {
		case !given && p.Default != nil:
			obj[name], changed = p.Default, true
		case given && len(p.Properties) > 0 && bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")):
			nv, err := withDefaults(v, p)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(nv, v) {
				obj[name], changed = nv, true
			}
		}
	}
	if !changed {
		return args, nil
	}
	return json.Marshal(obj)
}

// undo asks the handler to take back a call (operation "undo"), with the
// data the call's response kept, which the pipeline passes as the undo
// call's arguments.
func (t *Tool) undo(ctx context.Context, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
	if tc == nil {
		tc = &tool.Context{}
	}
	return t.ask(ctx, Request{Operation: "undo", Undo: call.Arguments, CallID: call.ID}, call, tc, update)
}

// ask runs the handler for one request (its context and settings filled
// in here), and turns its answer into the result.
func (t *Tool) ask(ctx context.Context, req Request, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
	if t.settingsErr != nil {
		return tool.Result{}, &Failure{Info: tool.ErrorInfo{Message: t.settingsErr.Error(), Suggestion: "Do not retry: ask the user to fix the tool's settings in toolbelt.yaml."}}
	}
	req.Context = RequestContext{Workspace: tc.Workspace, Session: tc.SessionKey, Agent: tc.AgentID}
	req.Settings = t.settings
	in, err := json.Marshal(req)
	if err != nil {
		return tool.Result{}, tool.InputErrorf("the arguments are not valid JSON: %v", err)
	}
	var conv *conversation
	if t.Metadata.Interactive {
		if conv, err = converse(in, clientOf(tc)); err != nil {
			return tool.Result{}, err
		}
		defer conv.close()
	}
	var mu sync.Mutex
	var logs []string
	stderr := func(line string) {
		if r, ok := parseRequest(line); ok && conv != nil {
			conv.answer(ctx, r)
			return
		}
		if l, ok := parseLog(line); ok {
			tool.Log(ctx, l.Level, l.Log)
		} else if p, ok := parseProgress(line); ok {
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
	l, err := t.how(ctx, call, tc)
	if err != nil {
		return tool.Result{}, err
	}
	res, err := t.runHandler(ctx, in, conv, tc, l, stderr)
	if err != nil {
		return tool.Result{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if res.Stopped {
		return tool.Result{}, cmpErr(context.Cause(ctx), context.Canceled)
	}
	return t.answer(res, logs, l.mode)
}

// How a handler runs; results' details say which ("mode").
const (
	modeHost      = "host"      // on the host, with the user's rights
	modeSandbox   = "sandbox"   // in the sandbox the metadata or the caller asks for
	modeContained = "contained" // an untrusted tool's call that no one approved
)

// launch is how one call's handler starts.
type launch struct {
	mode string
	// code is, for an approved call of an untrusted tool, the fingerprint
	// of its folder that the person approved: the handler runs from a
	// copy of the folder that has it.
	code string
}

// how decides how the call runs. A trusted tool runs on the host, or in
// the sandbox when its metadata or the caller asks for it. An untrusted
// one runs so only when a person approved the call as its preview showed
// it, from a copy of its folder with the fingerprint they were shown;
// otherwise it runs contained, or not at all.
func (t *Tool) how(ctx context.Context, call tool.Call, tc *tool.Context) (launch, error) {
	mode := modeHost
	if t.Metadata.Sandbox || tc.Sandboxed {
		mode = modeSandbox
	}
	if t.Untrusted == "" {
		return launch{mode: mode}, nil
	}
	if code, ok := t.approved.take(call.ID); ok && tool.ApprovalOf(ctx) == tool.ApprovalGiven {
		return launch{mode: mode, code: code}, nil
	}
	if _, _, err := t.container(ctx, tc); err != nil {
		return launch{}, &Failure{Info: tool.ErrorInfo{
			Message:    fmt.Sprintf("%s was not run: it comes from a folder the agent can write (%s), so it runs only contained or with a person's approval, and it cannot run contained here: %v", t.Meta.ID, t.Untrusted, err),
			Suggestion: "Ask the user to approve the call (every call of it needs approval here), or to declare its folder trusted in toolbelt.yaml.",
		}}
	}
	return launch{mode: modeContained}, nil
}

// container returns bubblewrap, when it can contain the tool's handler in
// the call's workspace (its real path, also returned), or why it cannot:
// the call has no workspace, the tool's folder is not in it (a contained
// handler sees nothing else but the system's programs), or bubblewrap is
// missing or cannot set up its namespaces here.
func (t *Tool) container(ctx context.Context, tc *tool.Context) (*sandbox.Bwrap, string, error) {
	if tc.Workspace == "" {
		return nil, "", errors.New("the call has no workspace")
	}
	root, err := filepath.EvalSymlinks(tc.Workspace)
	if err != nil {
		return nil, "", err
	}
	if !within(t.Dir, root) {
		return nil, "", fmt.Errorf("its folder %s lies outside the call's workspace %s, and a contained handler sees only the workspace", t.Dir, root)
	}
	if b, ok := t.boxes.Load(root); ok {
		return b.(*sandbox.Bwrap), root, nil
	}
	b, err := sandbox.Find(ctx, t.opts.Bwrap)
	if err == nil {
		err = b.CheckContain(ctx, root)
	}
	if err != nil {
		return nil, "", err
	}
	t.boxes.Store(root, b)
	return b, root, nil
}

// runHandler runs the handler once (or asks the persistent one) with the
// request in (or, for an interactive handler, the conversation conv that
// begins with it), as l says, passing its standard error lines to stderr.
func (t *Tool) runHandler(ctx context.Context, in []byte, conv *conversation, tc *tool.Context, l launch, stderr func(string)) (shell.ChildResult, error) {
	if t.pers != nil {
		return t.callPersistent(ctx, in, tc, l, stderr)
	}
	child, done, err := t.child(ctx, tc, l)
	if err != nil {
		return shell.ChildResult{}, err
	}
	defer done()
	child.Stdin, child.Stderr = in, stderr
	if conv != nil {
		child.Input = conv.in
	}
	res, err := shell.RunChild(ctx, child)
	if err != nil {
		return res, &Failure{Info: tool.ErrorInfo{
			Message:    fmt.Sprintf("the handler of %s could not be started: %v", t.Meta.ID, err),
			Suggestion: "This is a problem with the tool's installation, not with the call; tell the user.",
		}}
	}
	return res, nil
}

// child works out how to start the handler for a call in tc, as l says;
// done removes what it made for the run (a copy of the tool's folder).
func (t *Tool) child(ctx context.Context, tc *tool.Context, l launch) (_ shell.Child, done func(), err error) {
	dir, argv, cleanup := t.Dir, t.Argv, func() {}
	if l.code != "" {
		if dir, err = t.copyCode(l.code); err != nil {
			return shell.Child{}, nil, err
		}
		argv, cleanup = t.argvIn(dir), func() { os.RemoveAll(dir) }
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	// Secret-looking variables: those the configuration allows every
	// handler, and those a trusted tool's metadata lists; none for a
	// contained handler, which no one approved.
	var allow []string
	switch {
	case t.Untrusted == "":
		allow = append(append(allow, t.opts.EnvAllow...), t.Metadata.Env...)
	case l.mode != modeContained:
		allow = t.opts.EnvAllow
	}
	set := map[string]string{"TOOLBELT_TOOL_DIR": dir}
	c := shell.Child{
		Path: argv[0], Args: argv, Dir: cmp.Or(tc.Workspace, dir),
		MaxStdout: cmpOr(t.opts.MaxOutput, DefaultMaxOutput), KillGrace: t.opts.KillGrace,
	}
	var plan sandbox.Plan
	switch l.mode {
	case modeContained:
		b, root, err := t.container(ctx, tc)
		if err != nil {
			return shell.Child{}, nil, &Failure{Info: tool.ErrorInfo{Message: fmt.Sprintf("%s was not run: it cannot run contained here: %v", t.Meta.ID, err)}}
		}
		plan = b.Contain(root, root, shell.ConcealedIn(tc, root), argv)
	case modeSandbox:
		if plan, err = t.sandboxPlan(ctx, tc, dir, argv); err != nil {
			return shell.Child{}, nil, err
		}
	}
	if plan.Path != "" {
		c.Path, c.Args, c.Cred, c.Dir, c.Done = plan.Path, append([]string{plan.Path}, plan.Args...), plan.Credential, "/", plan.Release
		for k, v := range plan.Env {
			set[k] = v
		}
	}
	c.Env = shell.ScrubbedEnv(allow, set)
	return c, cleanup, nil
}

// sandboxPlan is the plan that runs argv in the sandbox: the call's
// workspace writable (but what the file tools conceal), the tool's folder
// dir read-only, the home directory hidden.
func (t *Tool) sandboxPlan(ctx context.Context, tc *tool.Context, dir string, argv []string) (sandbox.Plan, error) {
	if tc.Workspace == "" {
		return sandbox.Plan{}, &Failure{Info: tool.ErrorInfo{Message: fmt.Sprintf("%s must run in the sandbox, which needs a workspace, and this call has none", t.Meta.ID)}}
	}
	root, err := filepath.EvalSymlinks(tc.Workspace)
	if err != nil {
		return sandbox.Plan{}, err
	}
	spec := shell.SandboxSpec(tc, root, 256)
	spec.ReadOnly = []string{dir}
	b, err := sandbox.Find(ctx, t.opts.Bwrap)
	if err != nil {
		return sandbox.Plan{}, &Failure{Info: tool.ErrorInfo{Message: err.Error()}}
	}
	plan, err := b.Wrap(spec, argv)
	if err != nil {
		return sandbox.Plan{}, &Failure{Info: tool.ErrorInfo{Message: err.Error()}}
	}
	return plan, nil
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// answer turns what the handler printed, run as mode says, into the
// call's result.
func (t *Tool) answer(res shell.ChildResult, logs []string, mode string) (tool.Result, error) {
	fail := func(msg, suggestion string) (tool.Result, error) {
		if len(logs) > 0 {
			msg += ". Its last log lines: " + strings.Join(logs, " | ")
		}
		return tool.Result{}, &Failure{Info: tool.ErrorInfo{Message: msg, Suggestion: suggestion}, Stderr: logs}
	}
	broken := "The tool itself is broken, not your call: do not retry it; tell the user."
	if mode == modeContained {
		broken += " It ran contained — the workspace read-only, no network, of the system only its programs — because its folder is one the agent can write: a handler that must write files, reach the network or use programs from elsewhere needs the user's approval for each call, or its folder declared trusted."
	}
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
		return fail(fmt.Sprintf("the handler of %s did not answer with one JSON object on standard output (%v); it printed: %s", t.Meta.ID, jsonErr, textclip.Clip(string(out), 200)), broken)
	case resp.Success == nil:
		return fail(fmt.Sprintf(`the handler of %s answered without "success": true or false; it printed: %s`, t.Meta.ID, textclip.Clip(string(out), 200)), broken)
	case !*resp.Success:
		msg := resp.Error
		if msg == "" {
			msg = t.Meta.ID + " failed without saying why"
		}
		return tool.Result{}, &Failure{Info: tool.ErrorInfo{Message: msg, CanRetry: resp.CanRetry, Suggestion: resp.Suggestion}, Stderr: logs}
	}
	for i, c := range resp.Content {
		if c.Type == tool.ResourceContent {
			if c.URI == "" {
				return fail(fmt.Sprintf("the handler of %s answered with a resource block (content[%d]) without a uri", t.Meta.ID, i), broken)
			}
			if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
				return fail(fmt.Sprintf("the handler of %s answered with a resource block (content[%d]) whose blob is not base64", t.Meta.ID, i), broken)
			}
		}
		if c.Type == tool.ImageContent || c.Type == tool.AudioContent {
			if !strings.HasPrefix(c.MIMEType, string(c.Type)+"/") {
				return fail(fmt.Sprintf("the handler of %s answered with an %s block (content[%d]) without an %s mimeType", t.Meta.ID, c.Type, i, c.Type), broken)
			}
			if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
				return fail(fmt.Sprintf("the handler of %s answered with an %s block (content[%d]) whose data is not base64", t.Meta.ID, c.Type, i), broken)
			}
		}
	}
	details := map[string]any{"source": "directory", "mode": mode}
	var result any
	if len(resp.Result) > 0 {
		_ = json.Unmarshal(resp.Result, &result) // decoded once already
		details["result"] = result
	}
	if resp.Summary != "" {
		details["summary"] = resp.Summary
	}
	var undo any
	if t.Metadata.Undo && len(resp.Undo) > 0 && string(resp.Undo) != "null" {
		undo = resp.Undo
	}
	var structured any = details
	if t.Output != nil {
		// The result is the tool's structured content, held to output.json.
		structured = result
	}
	if len(resp.Content) > 0 {
		return tool.Result{Content: resp.Content, Details: structured, Undo: undo}, nil
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
	r.Details, r.Undo = structured, undo
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

// parseLog reads a log line: {"log": "…", "level": "warning"}, the level
// one of tool.LogLevels or left out (info).
func parseLog(line string) (Log, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") {
		return Log{}, false
	}
	var l Log
	if err := json.Unmarshal([]byte(line), &l); err != nil || l.Log == "" {
		return Log{}, false
	}
	l.Level = cmp.Or(l.Level, "info")
	return l, slices.Contains(tool.LogLevels, l.Level)
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

// preview says what a call would run: the handler, its interpreter and
// the SHA-256 of the handler file, so that an approval "always" does not
// carry over to a changed handler. For an untrusted tool, the SHA-256 is
// that of everything in its folder (remembered for the call: an approved
// call runs only a copy of the folder that has it), and the risk is high
// where the handler cannot run contained, so that a person is asked.
func (t *Tool) preview(ctx context.Context, call tool.Call, tc *tool.Context) (tool.Effects, error) {
	e := tool.Effects{
		Summary:    fmt.Sprintf("run the handler of the directory tool %s (%s)", t.Meta.ID, t.Dir),
		Command:    strings.Join(t.Argv, " "),
		Executable: t.Argv[0],
	}
	if t.Untrusted == "" {
		b, err := os.ReadFile(t.Handler)
		if err != nil {
			return tool.Effects{}, fmt.Errorf("reading the handler of %s: %w", t.Meta.ID, err)
		}
		sum := sha256.Sum256(b)
		e.ScriptHash = hex.EncodeToString(sum[:])
		return e, nil
	}
	if tc == nil {
		tc = &tool.Context{}
	}
	where := "on the host, with your rights"
	if t.Metadata.Sandbox || tc.Sandboxed {
		where = "in the sandbox (the workspace writable, no network)"
	}
	e.Summary = fmt.Sprintf("run CODE THE AGENT COULD HAVE WRITTEN: the handler of the directory tool %s (%s; %s). Approved, it runs %s, from a copy of its folder with the SHA-256 below", t.Meta.ID, t.Dir, t.Untrusted, where)
	code, codeErr := codeHash(t.Dir, "")
	if codeErr == nil {
		e.ScriptHash = code
		t.approved.put(call.ID, code)
	} else {
		e.Summary = fmt.Sprintf("run the handler of the directory tool %s (%s), which comes from a folder the agent can write (%s), contained, approved or not: it cannot be approved to run outside containment (%v)", t.Meta.ID, t.Dir, t.Untrusted, codeErr)
	}
	if _, _, err := t.container(ctx, tc); err != nil {
		if codeErr != nil {
			return tool.Effects{}, t.cannotCopy(codeErr)
		}
		e.Risk = tool.RiskHigh
		e.Summary += fmt.Sprintf("; it cannot run contained here (%v), so every call needs a person's approval", err)
		return e, nil
	}
	if codeErr == nil {
		e.Summary += "; unapproved, it runs contained (the workspace read-only, no network)"
	}
	return e, nil
}

// maxCodes bounds the fingerprints a tool keeps for calls that were shown
// for approval but have not run (denied, dry runs).
const maxCodes = 1024

// codes are the fingerprints of an untrusted tool's folder that previews
// showed, by call id, until the call runs.
type codes struct {
	mu sync.Mutex
	m  map[string]code
}

type code struct {
	hash string
	at   time.Time
}

// put remembers hash for the call id, forgetting the oldest fingerprint
// when there are too many.
func (c *codes) put(id, hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]code{}
	}
	if len(c.m) >= maxCodes {
		oldest := ""
		for k, v := range c.m {
			if oldest == "" || v.at.Before(c.m[oldest].at) {
				oldest = k
			}
		}
		delete(c.m, oldest)
	}
	c.m[id] = code{hash, time.Now()}
}

// take returns and forgets the fingerprint shown for the call id.
func (c *codes) take(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	delete(c.m, id)
	return v.hash, ok
}

func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
