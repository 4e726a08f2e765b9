package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/audit"
)

// wireReply is a JSON-RPC answer as toolbelt mcp writes it.
type wireReply struct {
	ID     any `json:"id"`
	Result *struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// The scenario: requests piped into `toolbelt mcp`, then end of
// input. Every request is answered and the write is done, run after run;
// bad lines in between get JSON-RPC errors; names are repaired; calls are
// audited on channel mcp with the session, not as the owner; a temporary
// file an interrupted write left behind is removed at start.
func TestMCPStdioPipedRequests(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	ws := t.TempDir()
	leftover := filepath.Join(ws, ".notes.txt.toolbelt-0123456789ab.tmp")
	if err := os.WriteFile(leftover, []byte("half a write"), 0o600); err != nil {
		t.Fatal(err)
	}
	backdate(t, leftover) // left by an earlier run
	if err := os.WriteFile(filepath.Join(ws, "given.txt"), []byte("given text"), 0o600); err != nil {
		t.Fatal(err)
	}
	userFile := filepath.Join(ws, "notes.tmp")
	if err := os.WriteFile(userFile, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := func(id int, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", id, name, args)
	}
	const runs = 5
	for run := range runs {
		file := fmt.Sprintf("out%d.txt", run)
		input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			"{not json\n" +
			"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"x\":\"\xc3\x28\"}\n" +
			line(2, "write", fmt.Sprintf(`{"path":%q,"content":"run %d"}`, file, run)) +
			line(3, "functions.READ", `{"path":"given.txt"}`) +
			line(4, "raed", `{"path":"x"}`) +
			line(5, "test_sleep", `{"ms":300}`)
		r := runCLIWith(t, env, "", input, "mcp", "--workspace", ws).expect(t, 0)
		got := map[string]wireReply{}
		for l := range strings.Lines(r.stdout) {
			var w wireReply
			if err := json.Unmarshal([]byte(l), &w); err != nil {
				t.Fatalf("run %d: stdout line is not JSON: %q", run, l)
			}
			got[fmt.Sprint(w.ID)] = w
		}
		for _, id := range []string{"1", "2", "3", "4", "5", "9", "<nil>"} {
			if _, ok := got[id]; !ok {
				t.Errorf("run %d: no reply with id %s:\n%s\n%s", run, id, r.stdout, r.stderr)
			}
		}
		if w := got["<nil>"]; w.Error == nil || w.Error.Code != -32700 {
			t.Errorf("run %d: the line that is not JSON: %+v", run, w.Error)
		}
		if w := got["9"]; w.Error == nil || w.Error.Code != -32700 || !strings.Contains(w.Error.Message, "UTF-8") {
			t.Errorf("run %d: invalid UTF-8: %+v", run, w.Error)
		}
		text := func(id string) (string, bool) {
			w := got[id]
			if w.Result == nil || len(w.Result.Content) == 0 {
				t.Fatalf("run %d: reply %s is not a tool result: %+v", run, id, w.Error)
			}
			return w.Result.Content[0].Text, w.Result.IsError
		}
		if data, err := os.ReadFile(filepath.Join(ws, file)); err != nil || string(data) != fmt.Sprintf("run %d", run) {
			t.Errorf("run %d: the write was not done: %q %v", run, data, err)
		}
		if s, isErr := text("3"); isErr || !strings.Contains(s, "given text") {
			t.Errorf("run %d: functions.READ: %q", run, s)
		}
		if s, isErr := text("4"); !isErr || !strings.HasPrefix(s, `{"status":"error","tool":"raed","error":"Tool \"raed\" not found. Did you mean \"read\"`) {
			t.Errorf("run %d: unknown tool: %q", run, s)
		}
		if s, isErr := text("5"); isErr || s != "slept 300 ms" {
			t.Errorf("run %d: the call in flight at the end of input: %q", run, s)
		}
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the temporary file of an interrupted write is still there: %v", err)
	}
	if _, err := os.Stat(userFile); err != nil {
		t.Errorf("a file of another name was removed: %v", err)
	}
	recs := auditRecords(t, env)
	if len(recs) != runs*4 {
		t.Fatalf("%d audit records, want %d", len(recs), runs*4)
	}
	sessions := map[string]bool{}
	for _, rec := range recs {
		sessions[rec.SessionKey] = true
		if rec.Channel != "mcp" || !strings.HasPrefix(rec.SessionKey, "stdio-") || rec.Owner {
			t.Errorf("record of %s: channel %q session %q owner %v", rec.Tool, rec.Channel, rec.SessionKey, rec.Owner)
		}
		if rec.Tool == "raed" && rec.ErrorClass != "unknown-tool" {
			t.Errorf("unknown tool recorded as %q", rec.ErrorClass)
		}
	}
	if len(sessions) != runs {
		t.Errorf("%d sessions over %d processes", len(sessions), runs)
	}
}

// startServe starts `toolbelt serve` and returns its endpoint.
func startServe(t *testing.T, env []string, args ...string) (string, *exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	url := ""
	for sc.Scan() {
		if m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		_ = cmd.Wait()
		t.Fatalf("no address printed: %s", stderr.String())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return url, cmd, stderr
}

// post sends body to url with the headers kv (name, value, name, value…;
// an empty value is left out, and "Host" sets the request's host), and
// returns the answer's status and body.
func post(t *testing.T, url, body string, kv ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		switch name, value := kv[i], kv[i+1]; {
		case value == "":
		case name == "Host":
			req.Host = value
		default:
			req.Header.Set(name, value)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postMCP posts a JSON-RPC message to url as an MCP client does over
// streamable HTTP, with the headers kv added (as post takes them).
func postMCP(t *testing.T, url, body string, kv ...string) (int, string) {
	t.Helper()
	return post(t, url, body, append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, kv...)...)
}

type withToken struct{ token string }

func (b withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// `toolbelt serve` with the limits of toolbelt.yaml: tokens map to
// principals (read from the environment), the session cap answers 503, a
// stalled body 408; calls are audited with the principal and the session.
func TestServeLimitsAndPrincipals(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `mcp:
  tokens:
    - {token: "${TEST_ALICE_TOKEN}", principal: alice, owner: true}
  maxSessions: 1
  bodyTimeout: 300ms
`)
	env := append(cliEnvironment(t), "TEST_ALICE_TOKEN=alice-secret")
	url, cmd, stderr := startServe(t, env, "--config", cfg, "--workspace", workspaceWith(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "alice", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withToken{"alice-secret"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Test_Greet", Arguments: map[string]any{"name": "Alice"}})
	if err != nil || textOf(res) != "Hello, Alice." {
		t.Fatalf("%v %q", err, textOf(res))
	}
	if code, body := postMCP(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"second","version":"1"}}}`, "Authorization", "Bearer alice-secret"); code != http.StatusServiceUnavailable || !strings.Contains(body, "mcp.maxSessions") {
		t.Errorf("a second session over the cap of 1: %d %s", code, body)
	}
	// A body that stalls is cut off.
	hostPort := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	conn, err := net.Dial("tcp", hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer alice-secret\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":", hostPort)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a stalled body: %v %v", resp, err)
	}
	session := cs.ID()
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	recs := auditRecords(t, env)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	if r := recs[0]; r.Tool != "test_greet" || r.Principal != "alice" || !r.Owner || r.Channel != "mcp" || r.SessionKey != session || session == "" {
		t.Errorf("record: tool %q principal %q owner %v channel %q session %q (client's %q)", r.Tool, r.Principal, r.Owner, r.Channel, r.SessionKey, session)
	}
}

// A token read from an unset variable stops the server with a clear
// message.
func TestServeTokenFromAnUnsetVariable(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "mcp:\n  tokens: [{token: \"${TEST_NOT_SET_TOKEN}\", principal: ci}]\n")
	r := runCLI(t, "", "serve", "--config", cfg, "--addr", "127.0.0.1:0").expect(t, 2)
	if !strings.Contains(r.stderr, "the token of ci is read from $TEST_NOT_SET_TOKEN, which is not set") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// `toolbelt serve` over HTTP: the connection limit of toolbelt.yaml answers
// 503 beyond it and serves again once a connection closes; a body that is
// not JSON gets 400 and the server goes on.
func TestServeConnectionLimit(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "mcp:\n  maxConnections: 3\n")
	env := cliEnvironment(t)
	url, _, _ := startServe(t, env, "--config", cfg, "--workspace", workspaceWith(t))
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	get := func(conn net.Conn) (int, error) {
		// GET / is the console's, behind the Host check as /mcp is.
		fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var held []net.Conn
	for range 3 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		held = append(held, conn)
	}
	// The three connections are accepted before the fourth; it is refused.
	over, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	if code, err := get(over); code != http.StatusServiceUnavailable {
		t.Errorf("a connection over mcp.maxConnections: %d %v", code, err)
	}
	if code, err := get(held[0]); code != http.StatusOK {
		t.Errorf("a connection within the limit: %d %v", code, err)
	}
	for _, c := range held {
		c.Close()
	}
	// Once they are closed, the server serves again (the closes reach it
	// in their own time).
	var code int
	for range 200 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		code, _ = get(conn)
		conn.Close()
		if code == http.StatusOK {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Fatalf("after the connections closed: %d", code)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d", resp.StatusCode)
	}
}

// TestServeRepairsNames: over HTTP, names models spell differently reach
// the listed tool, an unknown one gets the pipeline's answer naming the
// closest, and every call is audited on channel mcp. (A server of its own:
// beside the connection limit's, the SDK client's connections could meet
// the limit before the server had seen the probes' connections close.)
func TestServeRepairsNames(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	url, _, _ := startServe(t, env, "--workspace", workspaceWith(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "names", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for name, want := range map[string]string{
		"functions.READ": "x", "default_api:read": "x",
		"raed": `{"status":"error","tool":"raed","error":"Tool \"raed\" not found. Did you mean \"read\"`,
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"path": "notes.txt", "limit": 1}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := textOf(res); !strings.HasPrefix(got, want) || res.IsError != (name == "raed") {
			t.Errorf("%s: %v %q", name, res.IsError, got)
		}
	}
	var classes []string
	for _, r := range auditRecordsUntil(t, env, func(rs []audit.Record) bool { return len(rs) >= 3 }) {
		classes = append(classes, fmt.Sprintf("%s %s %s", r.Tool, r.Channel, r.ErrorClass))
	}
	slices.Sort(classes)
	if want := []string{"raed mcp unknown-tool", "read mcp ", "read mcp "}; !slices.Equal(classes, want) {
		t.Errorf("audit: %q, want %q", classes, want)
	}
}
