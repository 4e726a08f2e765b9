package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// working is an async handler whose job never ends by itself.
type working struct{}

func (working) Submit(context.Context, tool.AsyncSubmit) (string, error) { return "ext", nil }
func (working) Poll(context.Context, string) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{Status: tool.AsyncProcessing, Progress: 30, Message: "rendering"}, nil
}
func (working) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, nil
}

// pipeClient talks to a server over stdio, one request at a time.
type pipeClient struct {
	t   *testing.T
	in  io.Writer
	out *bufio.Scanner
	id  int
}

// ask sends a request and returns its reply.
func (c *pipeClient) ask(method, params string) rpcReply {
	c.t.Helper()
	c.id++
	if _, err := fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params); err != nil {
		c.t.Fatal(err)
	}
	for c.out.Scan() {
		var r rpcReply
		if json.Unmarshal(c.out.Bytes(), &r) == nil && fmt.Sprint(r.ID) == fmt.Sprint(c.id) {
			return r
		}
	}
	c.t.Fatalf("%s: no reply", method)
	return rpcReply{}
}

// serveTasks serves reg with the job queue q (none when nil) over stdio.
func serveTasks(t *testing.T, reg *registry.Registry, q invoke.JobQueue) *pipeClient {
	t.Helper()
	var opts []invoke.Option
	if q != nil {
		opts = append(opts, invoke.WithJobs(q))
	}
	srv := mcp.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir(), Owner: true}}, mcp.Options{Logger: quietLog}, opts...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), mcp.StdioOptions{In: inR, Out: outW}) }()
	t.Cleanup(func() {
		inW.Close()
		drained := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, outR); close(drained) }()
		<-done
		srv.Close()
		outW.Close()
		<-drained
	})
	c := &pipeClient{t: t, in: inW, out: bufio.NewScanner(outR)}
	c.out.Buffer(nil, 1<<20)
	return c
}

const tasksInit = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}`

func tasksRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	for _, tl := range []tool.Tool{
		{Name: "slow", Description: "slow work", Async: &tool.AsyncSpec{Type: tool.AsyncPolling}, Handler: working{}},
		{Name: "quick", Description: "quick work", Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Text("done"), nil
		}},
	} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// TestTasksOverStdio: over stdio, where params.task reaches the server
// through the line connection, a task-augmented call of an async tool is a
// task that tasks/get, tasks/list, tasks/cancel and tasks/result follow;
// a call without params.task gets the pending envelope; a task of a tool
// that is not async is refused; an unknown task id is an invalid param.
func TestTasksOverStdio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := taskJobs(t)
	c := serveTasks(t, tasksRegistry(t), q)
	if r := c.ask("initialize", tasksInit); !strings.Contains(string(r.Result), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize: %s", r.Result)
	}
	if r := c.ask("tools/list", `{}`); !strings.Contains(string(r.Result), `"execution":{"taskSupport":"optional"},"inputSchema"`) || strings.Count(string(r.Result), "taskSupport") != 1 {
		t.Errorf("tools/list: %s", r.Result)
	}
	var created struct {
		Task struct{ TaskID, Status string }
	}
	r := c.ask("tools/call", `{"name":"slow","arguments":{},"task":{"ttl":1000},"_meta":{"progressToken":"p1"}}`)
	if err := json.Unmarshal(r.Result, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		t.Fatalf("tools/call with a task: %s %+v", r.Result, r.Error)
	}
	id := created.Task.TaskID
	if r := c.ask("tools/call", `{"name":"slow","arguments":{}}`); !strings.Contains(string(r.Result), `\"status\":\"pending\"`) {
		t.Errorf("tools/call without a task: %s", r.Result)
	}
	if r := c.ask("tools/call", `{"name":"quick","arguments":{},"task":{}}`); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("a task of a tool that is not async: %s %+v", r.Result, r.Error)
	}
	if r := c.ask("tasks/get", `{"taskId":"`+id+`"}`); !strings.Contains(string(r.Result), `"status":"working"`) || !strings.Contains(string(r.Result), `"pollInterval":5000`) {
		t.Errorf("tasks/get: %s %+v", r.Result, r.Error)
	}
	if r := c.ask("tasks/list", `{}`); strings.Count(string(r.Result), `"taskId"`) != 1 || !strings.Contains(string(r.Result), id) {
		t.Errorf("tasks/list (the task only, not the plain call's job): %s %+v", r.Result, r.Error)
	}
	if r := c.ask("tasks/cancel", `{"taskId":"`+id+`"}`); !strings.Contains(string(r.Result), `"status":"cancelled"`) {
		t.Errorf("tasks/cancel: %s %+v", r.Result, r.Error)
	}
	if j, err := q.Get(ctx, id); err != nil || j.Status != jobs.StatusCancelled {
		t.Errorf("the job after tasks/cancel: %+v %v", j, err)
	}
	if r := c.ask("tasks/result", `{"taskId":"`+id+`"}`); !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result: %s %+v", r.Result, r.Error)
	}
	if r := c.ask("tasks/get", `{"taskId":"task_nope"}`); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/get of no task: %s %+v", r.Result, r.Error)
	}
}

// TestNoTasksWithoutQueue: a server without a job queue declares no tasks,
// answers a call with params.task as any call, and tasks/get with
// method-not-found.
func TestNoTasksWithoutQueue(t *testing.T) {
	t.Parallel()
	c := serveTasks(t, tasksRegistry(t), nil)
	if r := c.ask("initialize", tasksInit); strings.Contains(string(r.Result), `"tasks"`) {
		t.Errorf("initialize: %s", r.Result)
	}
	if r := c.ask("tools/call", `{"name":"quick","arguments":{},"task":{}}`); !strings.Contains(string(r.Result), `"text":"done"`) {
		t.Errorf("tools/call with a task: %s %+v", r.Result, r.Error)
	}
	if r := c.ask("tasks/get", `{"taskId":"x"}`); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/get: %s %+v", r.Result, r.Error)
	}
}

// staleQueue is a job queue whose Pending still lists the jobs that have
// ended, as a read made just before they ended does.
type staleQueue struct{ *jobs.Queue }

func (q staleQueue) Pending(ctx context.Context, session string) ([]tool.JobInfo, error) {
	pending, err := q.Queue.Pending(ctx, session)
	if err != nil {
		return nil, err
	}
	ended, err := q.Queue.Finished(ctx, session, time.Time{})
	for _, j := range ended {
		j.Status = "processing"
		pending = append(pending, j)
	}
	return pending, err
}

// TestTasksListedOnce: a job that ends between tasks/list's reads of the
// working and the ended jobs is listed once, as ended.
func TestTasksListedOnce(t *testing.T) {
	t.Parallel()
	q := taskJobs(t)
	c := serveTasks(t, tasksRegistry(t), staleQueue{q})
	c.ask("initialize", tasksInit)
	var created struct{ Task struct{ TaskID string } }
	if r := c.ask("tools/call", `{"name":"slow","arguments":{},"task":{}}`); json.Unmarshal(r.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with a task: %s %+v", r.Result, r.Error)
	}
	id := created.Task.TaskID
	if r := c.ask("tasks/cancel", `{"taskId":"`+id+`"}`); r.Error != nil {
		t.Fatalf("tasks/cancel: %+v", r.Error)
	}
	if r := c.ask("tasks/list", `{}`); strings.Count(string(r.Result), id) != 1 || !strings.Contains(string(r.Result), `"status":"cancelled"`) {
		t.Errorf("tasks/list: %s %+v", r.Result, r.Error)
	}
}

// taskJobs is a job queue in a SQLite file of the test's, stopped when the
// test ends.
func taskJobs(t *testing.T) *jobs.Queue {
	t.Helper()
	q, err := jobs.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), jobs.Config{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	return q
}

// TestAsyncToolsListedAsTheSDKWritesThem: tools/list of a server with async
// tools (whose answer gains execution.taskSupport) says what the SDK says of
// any tools/list to a client of the 2026-07-28 protocol — resultType
// "complete" — and writes <, > and & as the SDK does, unescaped; the same
// answer without a queue says the same.
func TestAsyncToolsListedAsTheSDKWritesThem(t *testing.T) {
	t.Parallel()
	reg := tasksRegistry(t)
	if err := reg.Register(tool.Tool{Name: "marked", Description: "<b>bold</b> & plain", Async: &tool.AsyncSpec{Type: tool.AsyncPolling}, Handler: working{}}); err != nil {
		t.Fatal(err)
	}
	init := `{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}`
	meta := fmt.Sprintf(`{"_meta":{%q:"2026-07-28",%q:{"name":"pipe","version":"1"},%q:{}}}`, sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientInfo, sdk.MetaKeyClientCapabilities)
	list := func(q invoke.JobQueue) string {
		c := serveTasks(t, reg, q)
		c.ask("initialize", init)
		r := c.ask("tools/list", meta)
		if r.Error != nil {
			t.Fatalf("tools/list: %+v", r.Error)
		}
		return string(r.Result)
	}
	withTasks, without := list(taskJobs(t)), list(nil)
	for name, got := range map[string]string{"with a queue": withTasks, "without": without} {
		if !strings.Contains(got, `"resultType":"complete"`) {
			t.Errorf("tools/list %s, 2026-07-28: no resultType: %s", name, got)
		}
		if !strings.Contains(got, `"description":"<b>bold</b> & plain"`) {
			t.Errorf("tools/list %s: the description not as the SDK writes it: %s", name, got)
		}
	}
	if strings.Count(withTasks, `"execution":{"taskSupport":"optional"}`) != 2 || strings.Contains(without, "taskSupport") {
		t.Errorf("execution.taskSupport: with a queue %s; without %s", withTasks, without)
	}
}
