package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// auditLog collects audit records.
type auditLog struct {
	mu   sync.Mutex
	list []audit.Record
}

func (a *auditLog) Append(_ context.Context, r audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = append(a.list, r)
	return nil
}

func (a *auditLog) records() []audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]audit.Record(nil), a.list...)
}

// fixturePolicy denies secret and asks before greeting root, as connect's.
var fixturePolicy = &policy.Policy{Tools: policy.Rules{
	Deny: []string{"secret"},
	Ask:  []policy.AskRule{{Tools: []string{"greet"}, When: map[string][]string{"name": {"root*"}}}},
}, OwnerOnly: []string{"big"}}

func newServer(t *testing.T, f *fixture, opts mcp.Options, log *auditLog) *mcp.Server {
	t.Helper()
	opts.Logger = quietLog
	srv := mcp.New(f.reg, &tool.Context{Identity: tool.Identity{Owner: true, Channel: "cli"}}, opts, invoke.WithPolicy(fixturePolicy), invoke.WithAudit(log))
	t.Cleanup(srv.Close)
	return srv
}

type rpcReply struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

func callLine(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", id, name, args)
}

// serveLines serves input over stdio to its end and returns the replies.
func serveLines(t *testing.T, srv *mcp.Server, input string, o mcp.StdioOptions) []rpcReply {
	t.Helper()
	out := &syncbuf.Buffer{}
	o.In, o.Out = strings.NewReader(input), out
	if err := srv.ServeStdio(context.Background(), o); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	var replies []rpcReply
	for line := range strings.Lines(out.String()) {
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", line)
		}
		replies = append(replies, r)
	}
	return replies
}

func byID(replies []rpcReply) map[string]rpcReply {
	m := map[string]rpcReply{}
	for _, r := range replies {
		m[fmt.Sprint(r.ID)] = r
	}
	return m
}

func resultText(t *testing.T, r rpcReply) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("reply %v is not a tool result: %s %+v", r.ID, r.Result, r.Error)
	}
	return res.Content[0].Text, res.IsError
}

// Bad lines get JSON-RPC errors and the session goes on; every request
// piped in before the end of input is answered, the slow one included.
func TestStdioSurvivesBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &auditLog{}
	srv := newServer(t, f, mcp.Options{}, log)
	input := initLine +
		"not json at all\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n" +
		`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}` + "\n" +
		`[{"jsonrpc":"2.0","id":9,"method":"ping"}]` + "\n" +
		`{"id":10,"method":"ping"}` + "\n" +
		"\n" +
		callLine(2, "slow", `{"steps":3}`) +
		`{"jsonrpc":"2.0","id":11,"method":"ping"}` + "\n" +
		callLine(3, "greet", `{"name":"after the junk"}`)
	replies := serveLines(t, srv, input, mcp.StdioOptions{MaxLineBytes: 1024})
	got := byID(replies)
	for id, want := range map[string]struct {
		code int
		msg  string
	}{
		"7":  {-32700, "not valid UTF-8"},
		"10": {-32600, "not a JSON-RPC 2.0 message"},
	} {
		r, ok := got[id]
		if !ok || r.Error == nil || r.Error.Code != want.code || !strings.Contains(r.Error.Message, want.msg) {
			t.Errorf("reply to %s: %+v, want error %d %q", id, r.Error, want.code, want.msg)
		}
	}
	var nulls []string
	for _, r := range replies {
		if r.ID == nil && r.Error != nil {
			nulls = append(nulls, fmt.Sprintf("%d %s", r.Error.Code, r.Error.Message))
		}
	}
	if len(nulls) != 3 || !strings.HasPrefix(nulls[0], "-32700 message is not valid JSON") || !strings.HasPrefix(nulls[1], "-32700 message longer than 1024 bytes") ||
		!strings.HasPrefix(nulls[2], "-32600 JSON-RPC batches are not supported") {
		t.Errorf("errors with id null: %q", nulls)
	}
	if text, isErr := resultText(t, got["2"]); isErr || text != "counted" {
		t.Errorf("the slow call in flight at the end of input: %q", text)
	}
	if text, isErr := resultText(t, got["3"]); isErr || text != "Hello, after the junk!" {
		t.Errorf("a call after the bad lines: %q", text)
	}
	if r, ok := got["11"]; !ok || r.Error != nil {
		t.Errorf("ping after the bad lines: %+v", r)
	}
	if _, ok := got["1"]; !ok || len(replies) != 9 {
		t.Errorf("%d replies: %+v", len(replies), replies)
	}
}

// Names are repaired as everywhere else; an unknown name gets a tool error
// with the closest names and an audit record; a denied tool with invalid
// arguments gets the denial, not its schema. Every record says channel mcp,
// the session, and the owner flag from the options.
func TestStdioNamesAndIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &auditLog{}
	srv := newServer(t, f, mcp.Options{}, log)
	input := initLine +
		callLine(2, "GREET", `{"name":"Ada"}`) +
		callLine(3, "functions.greet", `{"name":"Bo"}`) +
		callLine(4, "default_api:greet", `{"name":"Cy"}`) +
		callLine(5, "gret", `{"name":"Di"}`) +
		callLine(6, "secret", `{"no such":"argument"}`) +
		callLine(7, "big", `{}`)
	got := byID(serveLines(t, srv, input, mcp.StdioOptions{}))
	for id, want := range map[string]string{"2": "Hello, Ada!", "3": "Hello, Bo!", "4": "Hello, Cy!"} {
		if text, isErr := resultText(t, got[id]); isErr || text != want {
			t.Errorf("call %s: %q, want %q", id, text, want)
		}
	}
	if text, isErr := resultText(t, got["5"]); !isErr || !strings.HasPrefix(text, `{"status":"error","tool":"gret","error":"Tool \"gret\" not found. Did you mean \"greet\"`) {
		t.Errorf("unknown tool: %q", text)
	}
	if text, isErr := resultText(t, got["6"]); !isErr || !strings.Contains(text, `"status":"blocked"`) || strings.Contains(text, "additional") || strings.Contains(text, "no such") {
		t.Errorf("denied tool with invalid arguments: %q", text)
	}
	if text, isErr := resultText(t, got["7"]); !isErr || !strings.Contains(text, policy.OwnerOnlyReason) {
		t.Errorf("owner-only tool, mcp.owner unset: %q", text)
	}
	recs := log.records()
	if len(recs) != 6 {
		t.Fatalf("%d audit records, want 6", len(recs))
	}
	session := recs[0].SessionKey
	classes := map[string]string{}
	for _, r := range recs {
		classes[r.Tool] = r.ErrorClass
		if r.Channel != "mcp" || r.SessionKey != session || !strings.HasPrefix(session, "stdio-") || r.Owner || r.Principal != "" {
			t.Errorf("record of %s: channel %q session %q owner %v principal %q", r.Tool, r.Channel, r.SessionKey, r.Owner, r.Principal)
		}
	}
	if classes["gret"] != "unknown-tool" || classes["secret"] != "denied" || classes["big"] != "denied" || classes["greet"] != "" {
		t.Errorf("audit classes %v", classes)
	}
	// Owner from the options: the owner-only tool runs.
	srv = newServer(t, f, mcp.Options{Owner: true}, &auditLog{})
	if text, isErr := resultText(t, byID(serveLines(t, srv, initLine+callLine(2, "big", `{}`), mcp.StdioOptions{}))["2"]); isErr || len(text) != 30000 {
		t.Errorf("owner-only tool for the owner: %v %q…", isErr, text[:min(len(text), 80)])
	}
}

// When ctx is cancelled (SIGTERM), no more requests are read but a call in
// flight still finishes and is answered.
func TestStdioDrainsOnCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	started, release := make(chan struct{}), make(chan struct{})
	hold := tool.Must(tool.New("hold", "Waits to be released.", func(ctx context.Context, _ struct{}, _ tool.Invocation) (tool.Result, error) {
		close(started)
		select {
		case <-release:
			return tool.Text("released"), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}))
	hold.Meta.ReadOnly = true
	if err := f.reg.Register(hold); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, f, mcp.Options{}, &auditLog{})
	pr, pw := io.Pipe()
	out := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, mcp.StdioOptions{In: pr, Out: out, Grace: time.Minute}) }()
	if _, err := io.WriteString(pw, initLine+callLine(2, "hold", `{}`)); err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	time.Sleep(50 * time.Millisecond) // let the cancellation reach the server before the call ends
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if text, isErr := resultText(t, byID(replies(t, out.String()))["2"]); isErr || text != "released" {
		t.Errorf("call in flight at cancel: %q", text)
	}
}

func replies(t *testing.T, out string) []rpcReply {
	t.Helper()
	var rs []rpcReply
	for line := range strings.Lines(out) {
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		rs = append(rs, r)
	}
	return rs
}

// serveLimited serves srv over HTTP on 127.0.0.1 with o, through the
// connection limit.
func serveLimited(t *testing.T, srv *mcp.Server, o mcp.HTTPOptions) *httptest.Server {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	ts := httptest.NewUnstartedServer(srv.Handler(o))
	ts.Listener = mcp.LimitListener(ts.Listener, o.MaxConnections)
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// postJSON posts an MCP message, with a session id and token when given.
func postJSON(t testing.TB, url, session, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func httpClient(t *testing.T, url, token string) (*sdk.ClientSession, error) {
	t.Helper()
	rt := http.DefaultTransport
	if token != "" {
		rt = bearer{token, rt}
	}
	return sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, nil)
}

// eventually polls cond until it holds, failing after a generous while.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
	}
}

func TestHTTPSessionCap(t *testing.T) {
	t.Parallel()
	srv := newServer(t, newFixture(t), mcp.Options{}, &auditLog{})
	url := serveLimited(t, srv, mcp.HTTPOptions{MaxSessions: 2}).URL
	var open []*sdk.ClientSession
	for range 2 {
		cs, err := httpClient(t, url, "")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, cs)
	}
	defer func() {
		for _, cs := range open {
			cs.Close()
		}
	}()
	resp, body := postJSON(t, url, "", "", initBody)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "too many MCP sessions: 2 are open, the limit is 2 (mcp.maxSessions)") || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a third session: %d %s", resp.StatusCode, body)
	}
	if _, err := httpClient(t, url, ""); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("an SDK client over the cap: %v", err)
	}
	// The sessions open still work; closing one makes room.
	if res, err := open[0].CallTool(context.Background(), &sdk.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "cap"}}); err != nil || texts(res) != "Hello, cap!" {
		t.Errorf("an open session: %v", err)
	}
	open[1].Close()
	open = open[:1]
	eventually(t, "a new session once one is closed", func() bool {
		resp, _ := postJSON(t, url, "", "", initBody)
		return resp.StatusCode == http.StatusOK
	})
}

func TestHTTPIdleSessionsAreReaped(t *testing.T) {
	t.Parallel()
	srv := newServer(t, newFixture(t), mcp.Options{}, &auditLog{})
	url := serveLimited(t, srv, mcp.HTTPOptions{SessionIdleTimeout: 200 * time.Millisecond, MaxSessions: 1}).URL
	resp, body := postJSON(t, url, "", "", initBody)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	// Left idle, the session is closed: its place under the cap is free
	// again (asking does not touch the idle session), and its id is no
	// longer known.
	eventually(t, "the idle session is closed", func() bool {
		resp, _ := postJSON(t, url, "", "", initBody)
		return resp.StatusCode == http.StatusOK
	})
	if resp, body := postJSON(t, url, session, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the reaped session: %d %s", resp.StatusCode, body)
	}
}

// A client that sends its body too slowly is cut off with 408.
func TestHTTPSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	srv := newServer(t, newFixture(t), mcp.Options{}, &auditLog{})
	ts := serveLimited(t, srv, mcp.HTTPOptions{BodyTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST / HTTP/1.1\r\nHost: " + ts.Listener.Addr().String() + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
	if _, err := io.WriteString(conn, head+`{"jsonrpc":"2.0",`); err != nil {
		t.Fatal(err)
	}
	// … and nothing more.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "mcp.bodyTimeout") {
		t.Errorf("stalled body: %d %s", resp.StatusCode, body)
	}
	// The connection is closed after it.
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the connection stays open after a stalled body")
	}
}

func TestHTTPConnectionLimit(t *testing.T) {
	t.Parallel()
	srv := newServer(t, newFixture(t), mcp.Options{}, &auditLog{})
	ts := serveLimited(t, srv, mcp.HTTPOptions{MaxConnections: 2})
	addr := ts.Listener.Addr().String()
	get := func() (int, string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Two idle connections take both places.
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		defer c.Close()
	}
	// A third is told why and closed (the two may still be on their way
	// to being accepted, so ask until the limit shows).
	eventually(t, "the limit refuses a connection", func() bool {
		code, body := get()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "too many connections: the limit is 2 (mcp.maxConnections)")
	})
	held[0].Close()
	eventually(t, "a place is free again", func() bool {
		code, _ := get()
		return code != http.StatusServiceUnavailable && code != 0
	})
}

// Each bearer token maps to a principal and an owner flag; calls are
// recorded with them and the session; a session cannot be used with
// another principal's token.
func TestHTTPTokensMapToPrincipals(t *testing.T) {
	t.Parallel()
	log := &auditLog{}
	srv := newServer(t, newFixture(t), mcp.Options{}, log)
	url := serveLimited(t, srv, mcp.HTTPOptions{Tokens: []mcp.Token{
		{Token: "alice-token", Principal: "alice", Owner: true},
		{Token: "bob-token", Principal: "bob"},
	}}).URL
	alice, err := httpClient(t, url, "alice-token")
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob, err := httpClient(t, url, "bob-token")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if res := callTool(t, alice, "big", nil); res.IsError {
		t.Errorf("alice (owner) calls an owner-only tool: %q", texts(res)[:80])
	}
	if res := callTool(t, bob, "big", nil); !res.IsError || !strings.Contains(texts(res), policy.OwnerOnlyReason) {
		t.Errorf("bob (not owner) calls an owner-only tool: %q", texts(res))
	}
	if _, err := httpClient(t, url, "eve-token"); err == nil {
		t.Error("connected with an unknown token")
	}
	// Bob cannot ride on Alice's session.
	if resp, body := postJSON(t, url, alice.ID(), "bob-token", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"big","arguments":{}}}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob with alice's session: %d %s", resp.StatusCode, body)
	}
	recs := log.records()
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for i, want := range []struct {
		principal, session string
		owner              bool
	}{{"alice", alice.ID(), true}, {"bob", bob.ID(), false}} {
		r := recs[i]
		if r.Principal != want.principal || r.SessionKey != want.session || r.Owner != want.owner || r.Channel != "mcp" || r.SessionKey == "" {
			t.Errorf("record %d: principal %q session %q owner %v channel %q, want %+v", i, r.Principal, r.SessionKey, r.Owner, r.Channel, want)
		}
	}
}

// A question the server asks the client (approval by elicitation) after the
// client's input ended cannot be answered: it fails at once, the call is
// blocked rather than run, and the session ends instead of waiting.
func TestStdioQuestionAfterEndOfInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	srv := newServer(t, f, mcp.Options{}, &auditLog{})
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		callLine(2, "danger", `{"target":"/"}`)
	got := byID(serveLines(t, srv, input, mcp.StdioOptions{}))
	r, ok := got["2"]
	if !ok {
		t.Fatalf("no reply to the call: %+v", got)
	}
	if r.Error == nil || !strings.Contains(r.Error.Message, "the MCP client closed its input, so it cannot answer") {
		t.Errorf("reply to the call: %+v %s", r.Error, r.Result)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dangerRuns != 0 {
		t.Errorf("danger ran %d times", f.dangerRuns)
	}
}

// TestStdioEndsWithASubscriptionOpen: a subscriptions/listen stream lasts
// until the session ends, so the end of input does not wait for its answer
// (it waited forever: an imported `toolbelt mcp` whose client had gone
// never exited); the requests before the end are still answered.
func TestStdioEndsWithASubscriptionOpen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	srv := newServer(t, f, mcp.Options{}, &auditLog{})
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}` + "\n" +
		callLine(3, "greet", `{"name":"listener"}`)
	done := make(chan []rpcReply, 1)
	go func() { done <- serveLines(t, srv, input, mcp.StdioOptions{}) }()
	select {
	case replies := <-done:
		got := byID(replies)
		if text, _ := resultText(t, got["3"]); text != "Hello, listener!" {
			t.Errorf("the call before the end: %q", text)
		}
	case <-time.After(time.Minute):
		t.Fatal("ServeStdio did not return a minute after its input ended with a subscriptions/listen stream open")
	}
}
