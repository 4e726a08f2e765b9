package mcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type greetArgs struct {
	Name string `json:"name" jsonschema:"Who to greet" minLength:"1"`
}

// fixture is a registry of tools that exercise the server.
type fixture struct {
	reg        *registry.Registry
	cancelled  chan struct{}
	dangerRuns int
	mu         sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{reg: registry.New(), cancelled: make(chan struct{}, 1)}
	greet := tool.Must(tool.New("greet", "Greets someone.", func(_ context.Context, in greetArgs, _ tool.Invocation) (tool.Result, error) {
		return tool.Textf("Hello, %s!", in.Name), nil
	}))
	greet.Meta = tool.Meta{ReadOnly: true, Label: "Greet"}
	slow := tool.Must(tool.New("slow", "Counts slowly, reporting progress, until cancelled or done.", func(ctx context.Context, in struct {
		Steps int `json:"steps" minimum:"1"`
	}, inv tool.Invocation) (tool.Result, error) {
		for i := range in.Steps {
			inv.Update(tool.Textf("step %d of %d", i+1, in.Steps))
			select {
			case <-time.After(60 * time.Millisecond):
			case <-ctx.Done():
				f.cancelled <- struct{}{}
				return tool.Result{}, ctx.Err()
			}
		}
		return tool.Text("counted"), nil
	}))
	slow.Meta.ReadOnly = true
	picture := tool.Must(tool.New("picture", "Draws a picture.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		img := image.NewRGBA(image.Rect(0, 0, 4, 4))
		var b bytes.Buffer
		_ = png.Encode(&b, img)
		res := tool.Image("a 4×4 picture", b.Bytes(), "image/png")
		res.Content = append(res.Content, tool.Content{Type: tool.AudioContent, Data: base64.StdEncoding.EncodeToString([]byte("RIFF0000WAVE")), MIMEType: "audio/wav"})
		return res, nil
	}))
	picture.Meta.ReadOnly = true
	danger := tool.Must(tool.New("danger", "Deletes things.", func(context.Context, struct {
		Target string `json:"target"`
	}, tool.Invocation) (tool.Result, error) {
		f.mu.Lock()
		f.dangerRuns++
		f.mu.Unlock()
		return tool.Text("deleted"), nil
	}))
	danger.Meta = tool.Meta{Risk: tool.RiskHigh, Destructive: true, OpenWorld: true}
	secret := tool.Must(tool.New("secret", "Not for this client.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text("leaked"), nil
	}))
	big := tool.Must(tool.New("big", "Returns a lot of text.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text(strings.Repeat("x", 30000)), nil
	}))
	big.Meta.ReadOnly = true
	for _, tt := range []tool.Tool{greet, slow, picture, danger, secret, big} {
		if err := f.reg.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

var quietLog = slog.New(slog.DiscardHandler)

// connect serves the fixture and connects an SDK client over in-memory
// transports.
func connect(t *testing.T, f *fixture, opts mcp.Options, client *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return connectVersion(t, f, opts, client, "")
}

// connectVersion is connect speaking a given protocol version ("" for the
// latest).
func connectVersion(t *testing.T, f *fixture, opts mcp.Options, client *sdk.ClientOptions, version string) *sdk.ClientSession {
	t.Helper()
	opts.Logger = quietLog
	p := &policy.Policy{Tools: policy.Rules{
		Deny: []string{"secret"},
		Ask:  []policy.AskRule{{Tools: []string{"greet"}, When: map[string][]string{"name": {"root*"}}}},
	}}
	srv := mcp.New(f.reg, &tool.Context{Identity: tool.Identity{Owner: true}}, opts, invoke.WithPolicy(p))
	t.Cleanup(srv.Close)
	var sessOpts *sdk.ClientSessionOptions
	if version != "" {
		sessOpts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	return connectTo(t, srv, client, sessOpts)
}

// connectTo connects an SDK client to srv over in-memory transports, until
// the test ends.
func connectTo(t *testing.T, srv *mcp.Server, client *sdk.ClientOptions, sessOpts *sdk.ClientSessionOptions) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, client).Connect(ctx, ct, sessOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		_ = ss.Wait()
		cancel()
	})
	return cs
}

func texts(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// errorOf is the error inside an error result's envelope; "" when the
// result is not an error in the envelope.
func errorOf(res *sdk.CallToolResult) string {
	if !res.IsError || len(res.Content) == 0 {
		return ""
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		return ""
	}
	env, ok := tool.ParseEnvelope(tc.Text)
	if !ok || env.Status != "error" {
		return ""
	}
	return env.Error
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestListTools(t *testing.T) {
	t.Parallel()
	cs := connect(t, newFixture(t), mcp.Options{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*sdk.Tool{}
	for _, tt := range res.Tools {
		names = append(names, tt.Name)
		byName[tt.Name] = tt
	}
	// The policy-denied tool is never even described.
	if want := []string{"big", "danger", "greet", "picture", "slow"}; !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	g := byName["greet"]
	if g.Title != "Greet" || g.Description != "Greets someone." || !g.Annotations.ReadOnlyHint || *g.Annotations.DestructiveHint || *g.Annotations.OpenWorldHint || !g.Annotations.IdempotentHint {
		t.Errorf("greet: %+v %+v", g, g.Annotations)
	}
	d := byName["danger"]
	if d.Annotations.ReadOnlyHint || !*d.Annotations.DestructiveHint || !*d.Annotations.OpenWorldHint {
		t.Errorf("danger annotations %+v", d.Annotations)
	}
	schemaJSON, _ := json.Marshal(g.InputSchema)
	if !strings.Contains(string(schemaJSON), `"minLength":1`) || !strings.Contains(string(schemaJSON), `"required":["name"]`) {
		t.Errorf("greet schema %s", schemaJSON)
	}
}

func TestCallThroughThePipeline(t *testing.T) {
	t.Parallel()
	cs := connect(t, newFixture(t), mcp.Options{}, nil)
	if res := callTool(t, cs, "greet", map[string]any{"name": "Ada"}); res.IsError || texts(res) != "Hello, Ada!" {
		t.Errorf("greet: %v %q", res.IsError, texts(res))
	}
	// Validation by the pipeline, against the full schema.
	if res := callTool(t, cs, "greet", map[string]any{"name": ""}); !strings.Contains(errorOf(res), "name: minLength: got 0 characters, want at least 1") {
		t.Errorf("validation: %q", texts(res))
	}
	if res := callTool(t, cs, "greet", map[string]any{}); !strings.HasPrefix(errorOf(res), "Missing required parameter: name (received: nothing)") {
		t.Errorf("missing: %q", texts(res))
	}
	// A denied tool is not listed; a call of it anyway gets the policy's
	// denial as a tool result, like any other caller of the pipeline.
	if res := callTool(t, cs, "secret", nil); !res.IsError || !strings.Contains(texts(res), `"status":"blocked"`) || !strings.Contains(texts(res), "not allowed here") {
		t.Errorf("denied tool: %q", texts(res))
	}
	// Policy at call time: an ask rule on the arguments needs approval this
	// client cannot give, so the call is blocked.
	if res := callTool(t, cs, "greet", map[string]any{"name": "root"}); !res.IsError || !strings.Contains(texts(res), `"status":"blocked"`) || !strings.Contains(texts(res), "the MCP client cannot ask its user: it does not support elicitation") {
		t.Errorf("policy: %q", texts(res))
	}
	// An image result.
	res := callTool(t, cs, "picture", map[string]any{})
	img, ok := res.Content[1].(*sdk.ImageContent)
	if res.IsError || !ok || img.MIMEType != "image/png" {
		t.Fatalf("picture: %+v", res.Content)
	}
	if _, err := png.Decode(bytes.NewReader(img.Data)); err != nil {
		t.Errorf("image data: %v", err)
	}
	// Audio goes as MCP's audio content.
	if a, ok := res.Content[2].(*sdk.AudioContent); !ok || a.MIMEType != "audio/wav" || string(a.Data) != "RIFF0000WAVE" {
		t.Errorf("audio: %+v", res.Content[2])
	}
}

func TestProgressAndCancellation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	var progress []string
	cs := connect(t, f, mcp.Options{}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	})
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 3}, Meta: sdk.Meta{"progressToken": "p1"}})
	if err != nil || res.IsError || texts(res) != "counted" {
		t.Fatalf("%v %q", err, texts(res))
	}
	// waitFor waits until the last progress message ends with want.
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(progress)
			last := ""
			if n > 0 {
				last = progress[n-1]
			}
			mu.Unlock()
			if strings.HasSuffix(last, want) {
				return
			}
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("progress %v, want %q last", progress, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("step 3 of 3")
	// Cancelling the client's request cancels the call's context. The
	// cancellation is sent once the call runs (its first progress came):
	// a request cancelled before it is sent never reaches the tool.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 1000}, Meta: sdk.Meta{"progressToken": "p2"}})
		done <- err
	}()
	waitFor(" of 1000")
	cancel()
	select {
	case <-f.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's context was not cancelled")
	}
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error to the client")
	}
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	changed := make(chan struct{}, 4)
	cs := connect(t, f, mcp.Options{}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	extra := tool.Must(tool.New("extra", "Arrived later.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text("here"), nil
	}))
	awaitListSubscription(t, f.reg, changed)
	if err := f.reg.Register(extra); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(tt *sdk.Tool) bool { return tt.Name == "extra" }) {
		t.Error("the new tool is not listed")
	}
	if r := callTool(t, cs, "extra", nil); texts(r) != "here" {
		t.Errorf("%q", texts(r))
	}
	f.reg.Unregister("extra")
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after removal")
	}
}

// awaitListSubscription returns once the client's request for list changes
// has reached the server. The client sends it (subscriptions/listen) after
// its handshake without waiting for the server to take it, so a change
// made at once may precede it: a probe tool is added until a notification
// comes, then removed, and the notification of its removal taken.
func awaitListSubscription(t *testing.T, reg *registry.Registry, changed <-chan struct{}) {
	t.Helper()
	probe := tool.Must(tool.New("subscription_probe", "Probes the subscription.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Text(""), nil
	}))
	for deadline := time.Now().Add(20 * time.Second); ; {
		if err := reg.Register(probe); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
			reg.Unregister(probe.Name)
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatal("no notifications/tools/list_changed after the probe was removed")
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		reg.Unregister(probe.Name)
		if time.Now().After(deadline) {
			t.Fatal("the client's subscription to list changes never reached the server")
		}
	}
}

func TestConfirmationThroughElicitation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  *sdk.ElicitResult
		fallbck string
		want    string
		isError bool
		runs    int
		version string
	}{
		{"allowed once", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, "", "deleted", false, 1, ""},
		{"allowed once, older protocol", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, "", "deleted", false, 1, "2025-11-25"},
		{"denied with a reason", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "reason": "not today"}}, "", "The user denied this call: not today", true, 0, ""},
		{"declined", &sdk.ElicitResult{Action: "decline"}, "", "The user denied this call: the user declined the request", true, 0, ""},
		{"no elicitation: fail closed", nil, "", "but no one is available to approve it (the MCP client cannot ask its user: it does not support elicitation), so it was not run.", true, 0, ""},
		{"no elicitation: fallback allows", nil, "allow", "deleted", false, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			var asked []string
			client := &sdk.ClientOptions{}
			if tc.answer != nil {
				client.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return tc.answer, nil
				}
			}
			cs := connectVersion(t, f, mcp.Options{ConfirmFallback: tc.fallbck}, client, tc.version)
			res := callTool(t, cs, "danger", map[string]any{"target": "build"})
			if res.IsError != tc.isError || !strings.Contains(texts(res), tc.want) {
				t.Errorf("%v %q", res.IsError, texts(res))
			}
			f.mu.Lock()
			runs := f.dangerRuns
			f.mu.Unlock()
			if runs != tc.runs {
				t.Errorf("ran %d times", runs)
			}
			if tc.answer != nil && (len(asked) != 1 || !strings.HasPrefix(asked[0], "Allow danger (high risk)? high-risk call") || !strings.Contains(asked[0], `Arguments: {"target":"build"}`)) {
				t.Errorf("asked %q", asked)
			}
		})
	}
}

func TestResponseLimit(t *testing.T) {
	t.Parallel()
	cs := connect(t, newFixture(t), mcp.Options{MaxResponseBytes: 1000}, nil)
	res := callTool(t, cs, "big", nil)
	if got := texts(res); len(got) > 1100 || !strings.Contains(got, "cut to fit the response limit") || res.IsError {
		t.Errorf("%d bytes: %q…", len(got), got[:80])
	}
}

// serveHTTP starts the streamable HTTP endpoint on 127.0.0.1.
func serveHTTP(t *testing.T, f *fixture, o mcp.HTTPOptions) *httptest.Server {
	t.Helper()
	srv := mcp.New(f.reg, &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog})
	ts := httptest.NewServer(srv.Handler(o))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Close()
	})
	return ts
}

// bearer adds a bearer token to requests.
type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := serveHTTP(t, f, mcp.HTTPOptions{Addr: "127.0.0.1:0", Token: "s3cret"})
	client := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "HTTP"}})
	if err != nil || texts(res) != "Hello, HTTP!" {
		t.Fatalf("%v %q", err, texts(res))
	}
	// A wrong token never reaches the tools.
	if _, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"guess", http.DefaultTransport}}}, nil); err == nil {
		t.Error("connected with a wrong token")
	}
}

// TestHTTPRefusals: what the HTTP front door refuses before a message
// reaches the protocol: a Host or Origin that does not name this server —
// its own names on the port it listens on, or configured ones (another
// local port is another origin, as a browser sees it) — bodies past the
// limits, and JSON-RPC batches, refused as on stdio.
func TestHTTPRefusals(t *testing.T) {
	t.Parallel()
	ts := serveHTTP(t, newFixture(t), mcp.HTTPOptions{Addr: "127.0.0.1:7420", MaxBodyBytes: 4096, MaxJSONDepth: 16,
		AllowedHosts: []string{"tools.example.com", "proxy.example:8443"}, AllowedOrigins: []string{"http://localhost:3000/"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	other := "7421"
	if port == other {
		other = "7422"
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(host, origin, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	batchError := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported (MCP removed them in its 2025-06-18 revision): send one message per request"}}`
	for _, tc := range []struct {
		name, host, origin, body string
		status                   int
		answer                   string // the body, when it matters
	}{
		{"loopback", "", "", initialize, http.StatusOK, ""},
		{"localhost name", "localhost:" + port, "http://localhost:" + port, initialize, http.StatusOK, ""},
		{"its own origin", "", "http://127.0.0.1:" + port, initialize, http.StatusOK, ""},
		{"another local port as origin", "", "http://localhost:" + other, initialize, http.StatusForbidden, ""},
		{"another local address's port as origin", "", "http://127.0.0.1:" + other, initialize, http.StatusForbidden, ""},
		{"a local origin without a port", "", "http://localhost", initialize, http.StatusForbidden, ""},
		{"a configured origin", "", "http://localhost:3000", initialize, http.StatusOK, ""},
		{"a configured host as origin", "", "https://tools.example.com", initialize, http.StatusOK, ""},
		{"another local port as host", "localhost:" + other, "", initialize, http.StatusForbidden, ""},
		{"dns rebinding", "evil.example", "", initialize, http.StatusForbidden, ""},
		{"dns rebinding with port", "evil.example:" + port, "", initialize, http.StatusForbidden, ""},
		{"foreign origin", "", "https://evil.example", initialize, http.StatusForbidden, ""},
		{"null origin", "", "null", initialize, http.StatusForbidden, ""},
		{"batch", "", "", "[" + initialize + "]", http.StatusBadRequest, batchError},
		{"batch after white space", "", "", " \n[" + initialize + "," + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "]", http.StatusBadRequest, batchError},
		{"too deep", "", "", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, http.StatusBadRequest, ""},
		{"too big", "", "", `{"pad":"` + strings.Repeat("x", 5000) + `"}`, http.StatusRequestEntityTooLarge, ""},
		{"not UTF-8", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + "\xff\xfe" + `"}}`, http.StatusBadRequest, ""},
	} {
		resp, body := post(tc.host, tc.origin, tc.body)
		if resp.StatusCode != tc.status || (tc.answer != "" && strings.TrimSpace(body) != tc.answer) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, resp.StatusCode, body, tc.status, tc.answer)
		}
	}
}

func TestCheckListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:7420", "", true},
		{"localhost:7420", "", true},
		{"[::1]:7420", "", true},
		{"0.0.0.0:7420", "", false},
		{":7420", "", false},
		{"192.168.1.5:7420", "", false},
		{"0.0.0.0:7420", "t0k3n", true},
		{"not an address", "", false},
	} {
		if err := mcp.CheckListen(tc.addr, tc.token); (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, %q) = %v", tc.addr, tc.token, err)
		}
	}
}

func TestImageDataIsBase64OnTheWire(t *testing.T) {
	t.Parallel()
	cs := connect(t, newFixture(t), mcp.Options{}, nil)
	res := callTool(t, cs, "picture", nil)
	b, _ := json.Marshal(res.Content[1])
	var wire struct{ Data string }
	_ = json.Unmarshal(b, &wire)
	if raw, err := base64.StdEncoding.DecodeString(wire.Data); err != nil || !bytes.HasPrefix(raw, []byte("\x89PNG")) {
		t.Errorf("wire data %q: %v", wire.Data, err)
	}
}

// TestApprovalIsBoundToTheAction drives the approval rounds by hand: an
// answer counts only with the request state the server signed for the
// exact action.
func TestApprovalIsBoundToTheAction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cs := connect(t, f, mcp.Options{}, &sdk.ClientOptions{
		MultiRoundTrip:     &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) { return nil, nil },
	})
	ctx := context.Background()
	call := func(args map[string]any, answer *sdk.ElicitResult, state string) *sdk.CallToolResult {
		p := &sdk.CallToolParams{Name: "danger", Arguments: args, RequestState: state}
		if answer != nil {
			p.InputResponses = sdk.InputResponseMap{"approval": answer}
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	yes := &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}
	first := call(map[string]any{"target": "build"}, nil, "")
	if !first.NeedsInput() || first.InputRequests["approval"] == nil || first.RequestState == "" {
		t.Fatalf("first round: %+v", first)
	}
	for name, state := range map[string]string{
		"forged state":   "deadbeef.AAAA",
		"another action": first.RequestState, // used below for other arguments
	} {
		args := map[string]any{"target": "build"}
		if name == "another action" {
			args["target"] = "home"
		}
		if res := call(args, yes, state); !res.NeedsInput() {
			t.Errorf("%s: the answer was accepted: %q", name, texts(res))
		}
	}
	f.mu.Lock()
	runs := f.dangerRuns
	f.mu.Unlock()
	if runs != 0 {
		t.Fatalf("ran %d times without a valid approval", runs)
	}
	if res := call(map[string]any{"target": "build"}, yes, first.RequestState); res.NeedsInput() || texts(res) != "deleted" {
		t.Errorf("the approved action: %+v", res)
	}
}

func TestCompactMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var asked int
	cs := connect(t, f, mcp.Options{Compact: true}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked++
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, nil
		},
	})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tt := range res.Tools {
		names = append(names, tt.Name)
	}
	if want := []string{"tool_call", "tool_describe", "tool_search"}; !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Fatalf("compact tools %v", names)
	}
	if r := callTool(t, cs, "tool_search", map[string]any{"query": "say hello to someone"}); !strings.Contains(texts(r), "greet") || strings.Contains(texts(r), "secret") {
		t.Errorf("search: %q", texts(r))
	}
	if r := callTool(t, cs, "tool_describe", map[string]any{"name": "greet"}); !strings.Contains(texts(r), `"minLength":1`) {
		t.Errorf("describe: %q", texts(r))
	}
	if r := callTool(t, cs, "tool_call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}); r.IsError || texts(r) != "Hello, Ada!" {
		t.Errorf("call: %q", texts(r))
	}
	// The named tool's full schema is enforced.
	if r := callTool(t, cs, "tool_call", map[string]any{"name": "greet", "arguments": map[string]any{"name": ""}}); !r.IsError || !strings.Contains(texts(r), "minLength") {
		t.Errorf("validation: %q", texts(r))
	}
	// Policy and approval apply to the named tool.
	if r := callTool(t, cs, "tool_call", map[string]any{"name": "secret", "arguments": map[string]any{}}); !r.IsError || !strings.Contains(texts(r), `"status":"blocked"`) {
		t.Errorf("denied tool: %q", texts(r))
	}
	if r := callTool(t, cs, "tool_call", map[string]any{"name": "danger", "arguments": map[string]any{"target": "build"}}); r.IsError || texts(r) != "deleted" || asked != 1 {
		t.Errorf("approval through compact mode: %q, asked %d", texts(r), asked)
	}
}

// TestListFollowsAChangedSchema: a tool registered again with another
// schema is listed with it, while the tools whose schema value did not
// change (and are not compiled again) are listed as before.
func TestListFollowsAChangedSchema(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	changed := make(chan struct{}, 8)
	cs := connect(t, f, mcp.Options{}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	list := func() map[string]string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tt := range res.Tools {
			b, _ := json.Marshal(tt.InputSchema)
			out[tt.Name] = string(b)
		}
		return out
	}
	type args struct {
		Q string `json:"q" jsonschema:"first wording"`
	}
	mk := func(desc string) tool.Tool {
		tl := tool.Must(tool.New("lookup", "Looks up.", func(context.Context, args, tool.Invocation) (tool.Result, error) {
			return tool.Text("ok"), nil
		}))
		tl.Parameters.Properties["q"].Description = desc
		return tl
	}
	awaitListSubscription(t, f.reg, changed)
	if err := f.reg.Register(mk("first wording")); err != nil {
		t.Fatal(err)
	}
	<-changed
	before := list()
	f.reg.Unregister("lookup")
	<-changed
	if err := f.reg.Register(mk("second wording")); err != nil {
		t.Fatal(err)
	}
	<-changed
	after := list()
	if !strings.Contains(after["lookup"], "second wording") || strings.Contains(after["lookup"], "first wording") {
		t.Errorf("the changed schema is not listed: %s", after["lookup"])
	}
	for name, s := range before {
		if name != "lookup" && after[name] != s {
			t.Errorf("%s changed though its schema did not:\nbefore %s\nafter  %s", name, s, after[name])
		}
	}
}
