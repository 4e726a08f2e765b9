package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// rpcClient speaks JSON-RPC to `toolbelt serve` as an MCP client of
// protocol revision 2025-11-25 with tasks does: the go-sdk's client
// knows no tasks, so the requests are written here.
type rpcClient struct {
	t                   *testing.T
	url, token, session string
	id                  int
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// connect opens a session of token's principal at url.
func connect(t *testing.T, url, token string) *rpcClient {
	t.Helper()
	c := &rpcClient{t: t, url: url, token: token}
	var init struct {
		Capabilities struct {
			Tasks struct {
				Requests struct {
					Tools struct {
						Call *struct{} `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
				List   *struct{} `json:"list"`
				Cancel *struct{} `json:"cancel"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	c.must("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tasks-test", "version": "1"}}, &init)
	if tc := init.Capabilities.Tasks; tc.Requests.Tools.Call == nil || tc.List == nil || tc.Cancel == nil {
		t.Fatalf("initialize declares no tasks for tools/call, tasks/list and tasks/cancel: %+v", init)
	}
	c.send("notifications/initialized", map[string]any{}, false)
	return c
}

// send posts a request (or a notification) and returns the answer's result
// or error.
func (c *rpcClient) send(method string, params any, call bool) (json.RawMessage, *rpcError) {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if call {
		c.id++
		msg["id"] = c.id
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(body)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if !call {
		return nil, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		var answer struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal([]byte(line), &answer) == nil && answer.ID == c.id && (answer.Result != nil || answer.Error != nil) {
			return answer.Result, answer.Error
		}
	}
	c.t.Fatalf("%s: no answer (HTTP %d)", method, resp.StatusCode)
	return nil, nil
}

// must sends a request that must succeed and decodes its result into out.
func (c *rpcClient) must(method string, params, out any) {
	c.t.Helper()
	res, rerr := c.send(method, params, true)
	if rerr != nil {
		c.t.Fatalf("%s: error %d %s", method, rerr.Code, rerr.Message)
	}
	if err := json.Unmarshal(res, out); err != nil {
		c.t.Fatalf("%s: %v: %s", method, err, res)
	}
}

// task is a task as tasks/get answers it.
type task struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	TTL          int64  `json:"ttl"`
	PollInterval int64  `json:"pollInterval"`
	CreatedAt    string `json:"createdAt"`
}

// callResult is a tools/call (or tasks/result) answer.
type callResult struct {
	Meta    map[string]json.RawMessage `json:"_meta"`
	Content []struct{ Text string }    `json:"content"`
	IsError bool                       `json:"isError"`
	Task    *task                      `json:"task"`
}

func (r callResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestServeTasks: a client that sends a tools/call of an async tool with
// params.task gets the job as a task; `toolbelt serve` restarts; the same
// principal, in a new session, finds the task with tasks/get and
// tasks/list and gets the job's result with tasks/result, and cancels
// another task, whose job is cancelled. Another principal sees neither
// task. A call without params.task gets the pending envelope; a task for
// a tool that is not async is refused.
func TestServeTasks(t *testing.T) {
	t.Parallel()
	env, _, _ := dirToolsEnv(t, "mcp:\n  tokens:\n    - {token: \"${TEST_ALICE_TOKEN}\", principal: alice}\n    - {token: \"${TEST_BOB_TOKEN}\", principal: bob}\n")
	env = append(env, "TEST_ALICE_TOKEN=alice-secret", "TEST_BOB_TOKEN=bob-secret")
	url, cmd, stderr := startServe(t, env)
	alice := connect(t, url, "alice-secret")

	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	alice.must("tools/list", map[string]any{}, &list)
	for _, tl := range list.Tools {
		async := tl.Name == "reminder"
		if got := tl.Execution != nil && tl.Execution.TaskSupport == "optional"; got != async {
			t.Errorf("tools/list: %s has execution %+v", tl.Name, tl.Execution)
		}
	}

	start := func(message string, seconds int) task {
		t.Helper()
		var res callResult
		alice.must("tools/call", map[string]any{"name": "reminder", "arguments": map[string]any{"message": message, "seconds": seconds}, "task": map[string]any{"ttl": 60000}}, &res)
		if res.Task == nil || res.Task.TaskID == "" || res.Task.Status != "working" || res.Task.PollInterval != 1000 || res.Task.TTL <= 0 || res.Task.CreatedAt == "" {
			t.Fatalf("tools/call with a task: not a CreateTaskResult: %+v %q", res.Task, res.text())
		}
		return *res.Task
	}
	tea := start("tea", 2)
	long := start("never", 3600)

	var plain callResult
	alice.must("tools/call", map[string]any{"name": "reminder", "arguments": map[string]any{"message": "plain", "seconds": 1}}, &plain)
	if plain.Task != nil || !strings.Contains(plain.text(), `"status":"pending"`) {
		t.Errorf("a call without a task: %+v %q, want the pending envelope", plain.Task, plain.text())
	}
	if _, rerr := alice.send("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "x"}, "task": map[string]any{}}, true); rerr == nil || rerr.Code != -32601 {
		t.Errorf("a task for a tool that is not async: %+v, want error -32601", rerr)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("serve exited %d: %s", code, stderr)
	}
	url, _, _ = startServe(t, env)
	alice = connect(t, url, "alice-secret")
	bob := connect(t, url, "bob-secret")

	var got task
	alice.must("tasks/get", map[string]any{"taskId": tea.TaskID}, &got)
	if got.TaskID != tea.TaskID || (got.Status != "working" && got.Status != "completed") {
		t.Errorf("tasks/get after the restart: %+v", got)
	}
	var tasks struct{ Tasks []task }
	alice.must("tasks/list", map[string]any{}, &tasks)
	listed := map[string]bool{}
	for _, tk := range tasks.Tasks {
		listed[tk.TaskID] = true
	}
	if len(tasks.Tasks) != 2 || !listed[tea.TaskID] || !listed[long.TaskID] {
		t.Errorf("tasks/list = %+v, want %s and %s", tasks.Tasks, tea.TaskID, long.TaskID)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if _, rerr := bob.send(method, map[string]any{"taskId": tea.TaskID}, true); rerr == nil || rerr.Code != -32602 {
			t.Errorf("bob's %s of alice's task: %+v, want error -32602", method, rerr)
		}
	}
	bob.must("tasks/list", map[string]any{}, &tasks)
	if len(tasks.Tasks) != 0 {
		t.Errorf("bob's tasks/list = %+v", tasks.Tasks)
	}

	var res callResult
	alice.must("tasks/result", map[string]any{"taskId": tea.TaskID}, &res)
	if res.IsError || !strings.Contains(res.text(), "EXTERNAL_UNTRUSTED_CONTENT") || !strings.Contains(res.text(), "\nReminder: tea\n") || !strings.Contains(string(res.Meta["io.modelcontextprotocol/related-task"]), tea.TaskID) {
		t.Errorf("tasks/result = %q (error %v, _meta %s)", res.text(), res.IsError, res.Meta)
	}
	alice.must("tasks/get", map[string]any{"taskId": tea.TaskID}, &got)
	if got.Status != "completed" {
		t.Errorf("tasks/get after tasks/result: %+v", got)
	}

	alice.must("tasks/cancel", map[string]any{"taskId": long.TaskID}, &got)
	if got.Status != "cancelled" {
		t.Errorf("tasks/cancel: %+v", got)
	}
	if _, rerr := alice.send("tasks/cancel", map[string]any{"taskId": long.TaskID}, true); rerr == nil || rerr.Code != -32602 {
		t.Errorf("cancelling a cancelled task: %+v, want error -32602", rerr)
	}
	alice.must("tasks/result", map[string]any{"taskId": long.TaskID}, &res)
	if !res.IsError || !strings.Contains(res.text(), "cancelled") {
		t.Errorf("tasks/result of the cancelled task = %q (error %v)", res.text(), res.IsError)
	}
	if out := runCLIWith(t, env, "", "", "jobs", "show", long.TaskID); !strings.Contains(out.stdout, "cancelled") {
		t.Errorf("the job of the cancelled task: %s", fmt.Sprint(out.stdout, out.stderr))
	}
}
