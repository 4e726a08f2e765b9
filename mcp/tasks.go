package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/jobtools"
)

// MCP tasks (protocol revision 2025-11-25, experimental there): a client
// that sends a tools/call of an async tool with params.task gets the job
// as a task — a CreateTaskResult whose task id is the job's — and follows
// it with tasks/get, tasks/result, tasks/list and tasks/cancel. The job is
// in the store, so the task outlives the client's session and the server
// process. The go-sdk (v1.8.0) knows nothing of tasks; they are built on
// its extension points: the transports move params.task into _meta (the
// SDK's CallToolParams would drop it), receiving middleware answers
// task-augmented calls and adds the capability to initialize and
// execution.taskSupport to tools/list, and the tasks/* methods are the
// SDK's custom methods.

// taskMetaKey is where liftTask puts a tools/call's params.task.
const taskMetaKey = "toolbelt/task"

// relatedTaskKey names the task a tasks/result answer belongs to.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// liftTask returns the params of a request with a tools/call's "task"
// member moved to _meta[taskMetaKey]; other params are returned as they
// are.
func liftTask(method string, params json.RawMessage) json.RawMessage {
	if method != "tools/call" || !bytes.Contains(params, []byte(`"task"`)) {
		return params
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p["task"] == nil || string(p["task"]) == "null" {
		return params
	}
	meta := map[string]json.RawMessage{}
	if m, ok := p["_meta"]; ok && string(m) != "null" && json.Unmarshal(m, &meta) != nil {
		return params
	}
	meta[taskMetaKey] = p["task"]
	delete(p, "task")
	p["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}

// liftTaskBody is liftTask for the body of an HTTP POST (one message).
func liftTaskBody(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"task"`)) {
		return body
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return body
	}
	lifted := liftTask(req.Method, req.Params)
	if bytes.Equal(lifted, req.Params) {
		return body
	}
	req.Params = lifted
	out, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return body
	}
	return out
}

// taskQueue is what tasks need of the job queue (a jobs.Queue is one).
type taskQueue interface {
	tool.Jobs
	// Pending and Finished list a session's jobs.
	Pending(ctx context.Context, session string) ([]tool.JobInfo, error)
	Finished(ctx context.Context, session string, since time.Time) ([]tool.JobInfo, error)
	// Retention is how long a finished job is kept: a task's ttl.
	Retention() time.Duration
}

// tasks returns the job queue tasks are made of, if the server has one.
func (s *Server) tasks() (taskQueue, bool) {
	q, ok := s.runner.Context().Jobs.(taskQueue)
	return q, ok
}

// taskSession is the session a task-augmented call runs in: its job
// belongs to the principal that made it (the bearer token's; "" for stdio
// and HTTP without tokens, where every client is the one local user), not
// to the MCP session, which ends with its connection or the server.
func taskSession(principal string) string { return "mcp-tasks:" + principal }

// taskCallerKey holds, in a tasks/* request's context, who sent it.
type taskCallerKey struct{}

// The capabilities and tool execution tasks add.
var (
	tasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)
	taskSupport     = json.RawMessage(`{"taskSupport":"optional"}`)
)

// offerTasks, when the server has a job queue, adds the tasks capability to
// initialize, execution.taskSupport "optional" to async tools in
// tools/list, and who sent a tasks/* request to its context.
func (s *Server) offerTasks(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if _, ok := s.tasks(); !ok {
			return next(ctx, method, req)
		}
		if strings.HasPrefix(method, "tasks/") {
			ss, _ := req.GetSession().(*sdk.ServerSession)
			ctx = context.WithValue(ctx, taskCallerKey{}, callerOf(s.opts.Owner, ss, req.GetExtra()))
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *sdk.InitializeResult:
			return &patched{res: r, patch: func(m map[string]json.RawMessage) error {
				return setMember(m, "capabilities", func(caps map[string]json.RawMessage) error {
					caps["tasks"] = tasksCapability
					return nil
				})
			}}, nil
		case *sdk.ListToolsResult:
			if async := s.asyncListed(r); len(async) > 0 {
				return &asyncTools{ListToolsResult: r, async: async}, nil
			}
		}
		return res, err
	}
}

// asyncListed returns the names of the async tools in list.
func (s *Server) asyncListed(list *sdk.ListToolsResult) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, t := range list.Tools {
		if s.listed[t.Name].async != nil {
			names = append(names, t.Name)
		}
	}
	return names
}

// markAsync sets execution.taskSupport of the tools named in a tools/list
// result m.
func markAsync(m map[string]json.RawMessage, async []string) error {
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(m["tools"], &tools); err != nil {
		return err
	}
	for _, t := range tools {
		var name string
		if json.Unmarshal(t["name"], &name) == nil && slices.Contains(async, name) {
			t["execution"] = taskSupport
		}
	}
	b, err := schema.Encode(tools)
	m["tools"] = b
	return err
}

// setMember changes the object m[key] with fn.
func setMember(m map[string]json.RawMessage, key string, fn func(map[string]json.RawMessage) error) error {
	obj := map[string]json.RawMessage{}
	if raw, ok := m[key]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
	}
	if err := fn(obj); err != nil {
		return err
	}
	b, err := schema.Encode(obj)
	m[key] = b
	return err
}

// patched is a result the SDK encodes with members its types lack.
type patched struct {
	sdk.ResultBase // the Result marker; the metadata is res's
	res            sdk.Result
	patch          func(map[string]json.RawMessage) error
}

func (p *patched) GetMeta() map[string]any  { return p.res.GetMeta() }
func (p *patched) SetMeta(m map[string]any) { p.res.SetMeta(m) }

func (p *patched) MarshalJSON() ([]byte, error) { return patchJSON(p.res, p.patch) }

// asyncTools is a tools/list result whose async tools say
// execution.taskSupport, a member the SDK's Tool lacks. It embeds the SDK's
// result rather than wrapping it (as patched does) so that what the SDK
// sets on a result after the middlewares have returned it — resultType for
// clients of the 2026-07-28 protocol — is set on the result it writes.
type asyncTools struct {
	*sdk.ListToolsResult
	async []string
}

func (a *asyncTools) MarshalJSON() ([]byte, error) {
	return patchJSON(a.ListToolsResult, func(m map[string]json.RawMessage) error { return markAsync(m, a.async) })
}

// patchJSON encodes res as the SDK writes it (<, > and & not escaped), with
// patch applied to its members.
func patchJSON(res sdk.Result, patch func(map[string]json.RawMessage) error) ([]byte, error) {
	b, err := schema.Encode(res)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := patch(m); err != nil {
		return nil, err
	}
	return schema.Encode(m)
}

// taskCalls answers a task-augmented tools/call (see liftTask) of an async
// tool with a CreateTaskResult: the call runs in the principal's task
// session (taskSession), and its job is the task. A call that ends before
// it becomes a job (refused by policy, invalid arguments) is answered with
// its result; one that needs approval asks first, as any call does. A
// task for a tool that is not async is refused (-32601), as the spec has
// it for tools whose taskSupport is "forbidden". Without a job queue,
// params.task is ignored.
func (s *Server) taskCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		if _, asked := call.Params.Meta[taskMetaKey]; !asked {
			return next(ctx, method, req)
		}
		delete(call.Params.Meta, taskMetaKey)
		q, ok := s.tasks()
		if !ok {
			return next(ctx, method, req)
		}
		if name, ok := s.front.Canonical(call.Params.Name); ok && s.isListed(name) {
			call.Params.Name = name
		}
		if s.asyncOf(call.Params.Name) == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("tool %q does not run as a task: only async tools do (execution.taskSupport in tools/list)", call.Params.Name)}
		}
		defer func() {
			if p := recover(); p != nil {
				res, err = s.panicked(p), nil
			}
		}()
		who := s.caller(call)
		who.SessionKey = taskSession(who.Principal)
		msg, asked := s.run(ctx, call, who)
		if asked != nil {
			return asked, nil
		}
		env, ok := msg.Details.(tool.PendingEnvelope)
		if !ok {
			return s.wrap(s.result(msg), nil)
		}
		j, err := q.Job(ctx, s.taskScope(who), env.TaskID)
		if err != nil {
			return nil, fmt.Errorf("the job of task %s: %w", env.TaskID, err)
		}
		return &createTaskResult{Task: s.task(q, j)}, nil
	}
}

// asyncOf returns the job spec of the listed tool of that name, or nil.
func (s *Server) asyncOf(name string) *tool.AsyncSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed[name].async
}

// taskScope is the scope whose jobs who's tasks are.
func (s *Server) taskScope(who tool.Identity) tool.Scope {
	return tool.Scope{Workspace: tool.ResolveDir(s.runner.Context().Workspace), Session: taskSession(who.Principal)}
}

// taskInfo is a task as the protocol writes it.
type taskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is how long the task is kept after it was made, in ms.
	TTL          int64 `json:"ttl"`
	PollInterval int64 `json:"pollInterval"`
}

// task describes job j as a task.
func (s *Server) task(q taskQueue, j tool.JobInfo) taskInfo {
	updated := j.CreatedAt
	if j.CompletedAt != nil {
		updated = *j.CompletedAt
	}
	poll := tool.AsyncSpec{}.WithDefaults().PollingInterval
	if spec := s.asyncOf(j.Tool); spec != nil {
		poll = spec.WithDefaults().PollingInterval
	}
	t := taskInfo{
		TaskID: j.TaskID, Status: taskStatus(j.Status), StatusMessage: cmp.Or(j.Error, j.Message),
		CreatedAt: j.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: updated.UTC().Format(time.RFC3339Nano),
		TTL: q.Retention().Milliseconds(), PollInterval: poll.Milliseconds(),
	}
	return t
}

// taskStatus maps a job's status to a task's: pending and processing are
// working; the final ones keep their names. Jobs never wait for the
// client's input, so no task is input_required.
func taskStatus(job string) string {
	switch job {
	case "completed", "failed", "cancelled":
		return job
	default:
		return "working"
	}
}

// createTaskResult answers a task-augmented request.
type createTaskResult struct {
	sdk.ResultBase
	Task taskInfo `json:"task"`
}

// taskResult answers tasks/get and tasks/cancel: the task.
type taskResult struct {
	sdk.ResultBase
	taskInfo
}

// taskParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

// listTasksParams are the params of tasks/list.
type listTasksParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// listTasksResult answers tasks/list.
type listTasksResult struct {
	sdk.ResultBase
	Tasks      []taskInfo `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// serveTasks adds the tasks/* methods.
func (s *Server) serveTasks() {
	for method, err := range map[string]error{
		"tasks/get":    sdk.AddReceivingCustomMethod(s.sdk, "tasks/get", s.getTask),
		"tasks/result": sdk.AddReceivingCustomMethod(s.sdk, "tasks/result", s.taskOutcome),
		"tasks/list":   sdk.AddReceivingCustomMethod(s.sdk, "tasks/list", s.listTasks),
		"tasks/cancel": sdk.AddReceivingCustomMethod(s.sdk, "tasks/cancel", s.cancelTask),
	} {
		if err != nil {
			panic("toolbelt: " + method + ": " + err.Error())
		}
	}
}

// errNoTasks answers tasks/* on a server without a job queue.
var errNoTasks = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server runs no tasks: it has no job queue"}

// ownTask returns the job of a task the caller of ctx made.
func (s *Server) ownTask(ctx context.Context, p *taskParams) (taskQueue, tool.JobInfo, error) {
	q, ok := s.tasks()
	if !ok {
		return nil, tool.JobInfo{}, errNoTasks
	}
	who, _ := ctx.Value(taskCallerKey{}).(tool.Identity)
	j, err := q.Job(ctx, s.taskScope(who), p.TaskID)
	if err != nil {
		// Another principal's task is no task of this one's.
		return nil, tool.JobInfo{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no task %q", p.TaskID)}
	}
	return q, j, nil
}

// getTask answers tasks/get.
func (s *Server) getTask(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*taskResult, error) {
	q, j, err := s.ownTask(ctx, p)
	if err != nil {
		return nil, err
	}
	return &taskResult{taskInfo: s.task(q, j)}, nil
}

// cancelTask answers tasks/cancel: the job is cancelled.
func (s *Server) cancelTask(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*taskResult, error) {
	q, j, err := s.ownTask(ctx, p)
	if err != nil {
		return nil, err
	}
	who, _ := ctx.Value(taskCallerKey{}).(tool.Identity)
	if j.Final() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %s is %s: a task that has ended cannot be cancelled", j.TaskID, taskStatus(j.Status))}
	}
	j, err = q.Cancel(ctx, s.taskScope(who), j.TaskID)
	if err != nil {
		return nil, err
	}
	return &taskResult{taskInfo: s.task(q, j)}, nil
}

// taskOutcome answers tasks/result: the task's tools/call result, once the
// job has ended (it waits until then, or until the request is cancelled).
func (s *Server) taskOutcome(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*sdk.CallToolResult, error) {
	q, j, err := s.ownTask(ctx, p)
	if err != nil {
		return nil, err
	}
	if !j.Final() {
		if j, err = s.awaitJob(ctx, q, j); err != nil {
			return nil, err
		}
	}
	res := s.jobResult(j)
	res.Meta = sdk.Meta{relatedTaskKey: map[string]any{"taskId": j.TaskID}}
	return res, nil
}

// awaitJob returns job j once it has ended: it looks again at each event
// of the job on the runner's bus, and every poll interval of its tool (a
// job another process works reports no events here).
func (s *Server) awaitJob(ctx context.Context, q taskQueue, j tool.JobInfo) (tool.JobInfo, error) {
	sub := s.runner.Subscribe(0)
	defer sub.Close()
	scope := tool.Scope{Workspace: j.Workspace, Session: j.Session}
	every := time.Duration(s.task(q, j).PollInterval) * time.Millisecond
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		got, err := q.Job(ctx, scope, j.TaskID)
		if err != nil || got.Final() {
			return got, err
		}
		select {
		case <-ctx.Done():
			return tool.JobInfo{}, ctx.Err()
		case <-tick.C:
		case e, ok := <-sub.Events():
			if !ok {
				return tool.JobInfo{}, errors.New("the server is closing")
			}
			if e.Job == nil || e.Job.TaskID != j.TaskID {
				continue
			}
		}
	}
}

// jobResult is the tools/call result of a job that has ended. What the
// handler reported (the result, the error) is text from outside, wrapped as
// the pipeline wraps it (job_status does too).
func (s *Server) jobResult(j tool.JobInfo) *sdk.CallToolResult {
	cfg := s.runner.Config()
	outside := func(text string) tool.Content {
		return tool.Content{Type: tool.TextContent, Text: content.WrapExternal(text, content.Wrap{Source: jobtools.Source(j), Notice: cfg.ExternalNotice, OmitNotice: cfg.OmitExternalNotice})}
	}
	msg := tool.ResultMessage{ToolName: j.Tool, IsError: j.Status != "completed"}
	switch j.Status {
	case "completed":
		msg.Content = []tool.Content{outside(jobtools.ResultText(j.Result))}
	case "cancelled":
		msg.Content = []tool.Content{{Type: tool.TextContent, Text: fmt.Sprintf("Job %s (%s) was cancelled.", j.TaskID, j.Tool)}}
	default:
		msg.Content = []tool.Content{{Type: tool.TextContent, Text: fmt.Sprintf("Job %s (%s) failed:", j.TaskID, j.Tool)}, outside(cmp.Or(j.Error, j.Message))}
	}
	return s.result(msg)
}

// taskPage is the number of tasks in one tasks/list answer.
const taskPage = 100

// listTasks answers tasks/list: the caller's tasks, working ones first,
// then the ended ones, oldest first; the cursor is the number of tasks
// already listed.
func (s *Server) listTasks(ctx context.Context, _ *sdk.ServerSession, p *listTasksParams) (*listTasksResult, error) {
	q, ok := s.tasks()
	if !ok {
		return nil, errNoTasks
	}
	who, _ := ctx.Value(taskCallerKey{}).(tool.Identity)
	scope := s.taskScope(who)
	working, err := q.Pending(ctx, scope.Session)
	if err != nil {
		return nil, err
	}
	ended, err := q.Finished(ctx, scope.Session, time.Time{})
	if err != nil {
		return nil, err
	}
	from := 0
	if p.Cursor != "" {
		if _, err := fmt.Sscanf(p.Cursor, "%d", &from); err != nil || from < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", p.Cursor)}
		}
	}
	// A job that ended between the two reads is in both: it is listed once,
	// as ended.
	done := make(map[string]bool, len(ended))
	for _, j := range ended {
		done[j.TaskID] = true
	}
	jobs := append(slices.DeleteFunc(working, func(j tool.JobInfo) bool { return done[j.TaskID] }), ended...)
	out := &listTasksResult{Tasks: []taskInfo{}}
	for i, j := range jobs {
		if i < from || j.Workspace != scope.Workspace {
			continue
		}
		if len(out.Tasks) == taskPage {
			out.NextCursor = fmt.Sprint(i)
			break
		}
		out.Tasks = append(out.Tasks, s.task(q, j))
	}
	return out, nil
}
