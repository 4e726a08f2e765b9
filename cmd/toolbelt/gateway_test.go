package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/tools/gateway"
)

// The gateway tool of toolbelt serve, called over MCP: the owner gets the
// status (version, uptime, listeners, channels, no nodes, running jobs and
// sessions) and the version, reads the configuration with its inline
// secrets masked, and patches it — a patch config check refuses writes
// nothing, a good one is written with the old file as FILE.bak and says
// what needs a restart; a caller who is not the owner is neither offered
// the tool nor can call it.
func TestGatewayTool(t *testing.T) {
	t.Parallel()
	const owner, guest = "owner-token-0123456789abcdef", "guest-token-0123456789abcdef"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	original := `# the team's server
mcp:
  tokens:
    - token: ` + owner + `
      principal: ada
      owner: true
    - token: ` + guest + `
      principal: bob
mcpServers:
  gh:
    url: https://api.example.com/mcp?access_token=tok-in-the-query
    headers:
      Authorization: Bearer ghp-in-a-header
      X-Trace: ${TRACE_ID}
    disabled: true
channels:
  team:
    type: webhook
    url: http://127.0.0.1:1/hooks
    secretEnv: TEAM_SECRET   # whsec_…
    rateLimit: 20
`
	if err := os.WriteFile(cfg, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "TEAM_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "TOOLBELT_CONFIG="+cfg)
	url, _, _ := startServe(t, env, "--workspace", workspaceWith(t))
	// The owner's person approves each patch once, or declines when
	// decline is set; asked holds what they were shown.
	var decline atomic.Bool
	asked := make(chan string, 8)
	approver := sdk.NewClient(&sdk.Implementation{Name: "owner", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked <- req.Params.Message
			if decline.Load() {
				return &sdk.ElicitResult{Action: "decline"}, nil
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, nil
		},
	})
	connect := func(token string) *sdk.ClientSession {
		return connectMCP(t, approver, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withToken{token}}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ada := connect(owner)
	call := func(cs *sdk.ClientSession, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gateway", Arguments: args})
		if err != nil {
			return err.Error(), true
		}
		return textOf(res), res.IsError
	}

	out, isErr := call(ada, map[string]any{"action": "status"})
	var st gateway.Status
	if isErr || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status: %s", out)
	}
	if st.Version == "" || st.Uptime == "" || len(st.Nodes) != 0 || len(st.Channels) != 1 || st.Channels[0].Name != "team" || !st.Channels[0].Receive ||
		!strings.Contains(strings.Join(st.Listeners, " "), "/channels/team") || !strings.Contains(strings.Join(st.Listeners, " "), "/mcp") {
		t.Errorf("status: %+v", st)
	}
	if out, isErr := call(ada, map[string]any{"action": "version"}); isErr || out != st.Version {
		t.Errorf("version: %s, want %s", out, st.Version)
	}

	out, isErr = call(ada, map[string]any{"action": "config.get"})
	if isErr || strings.Contains(out, owner) || strings.Contains(out, guest) || strings.Contains(out, "tok-in-the-query") || strings.Contains(out, "ghp-in-a-header") ||
		!strings.Contains(out, "********") || !strings.Contains(out, "TEAM_SECRET") || !strings.Contains(out, "${TRACE_ID}") {
		t.Errorf("config.get shows a secret, or not the configuration:\n%s", out)
	}

	decline.Store(true)
	out, isErr = call(ada, map[string]any{"action": "config.patch", "patch": map[string]any{"channels": map[string]any{"team": map[string]any{"rateLimit": 1}}}})
	if !isErr || !strings.Contains(out, "Not patched") {
		t.Errorf("a patch the person declined: %s", out)
	}
	select {
	case q := <-asked:
		if !strings.Contains(q, `{"channels":{"team":{"rateLimit":1}}}`) {
			t.Errorf("the person was not shown the patch: %q", q)
		}
	default:
		t.Error("nobody was asked to approve the patch")
	}
	if data, _ := os.ReadFile(cfg); string(data) != original {
		t.Errorf("a declined patch changed the file:\n%s", data)
	}
	decline.Store(false)

	out, isErr = call(ada, map[string]any{"action": "config.patch", "patch": map[string]any{"channels": map[string]any{"team": map[string]any{"type": "smoke-signals"}}}})
	if !isErr || !strings.Contains(out, `channels.team.type is \"smoke-signals\": use one of`) || !strings.Contains(out, "nothing was written") {
		t.Errorf("a bad patch: %s", out)
	}
	if data, _ := os.ReadFile(cfg); string(data) != original {
		t.Errorf("a refused patch changed the file:\n%s", data)
	}
	if _, err := os.Stat(cfg + ".bak"); !os.IsNotExist(err) {
		t.Errorf("a refused patch left a backup (%v)", err)
	}

	out, isErr = call(ada, map[string]any{"action": "config.patch", "patch": map[string]any{"channels": map[string]any{"team": map[string]any{"rateLimit": 5, "allow": []any{"bob"}}}}})
	var p gateway.Patched
	if isErr || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("a good patch: %s", out)
	}
	if strings.Join(p.Changed, ",") != "channels.team.allow,channels.team.rateLimit" || strings.Join(p.Restart, ",") != strings.Join(p.Changed, ",") || p.Backup != cfg+".bak" {
		t.Errorf("a good patch: %+v", p)
	}
	if data, _ := os.ReadFile(p.Backup); string(data) != original {
		t.Errorf("the backup is not the file before the patch:\n%s", data)
	}
	data, _ := os.ReadFile(cfg)
	for _, want := range []string{"rateLimit: 5", "- bob", "# the team's server", "secretEnv: TEAM_SECRET"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the patched file lacks %q:\n%s", want, data)
		}
	}
	if fi, err := os.Stat(p.Backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup of a private configuration: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if fi, err := os.Stat(cfg); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the patched private configuration: %v, %v; want mode 0600", fi.Mode(), err)
	}
	r := runCLIWith(t, env, "", "", "config", "check")
	if r.code != 0 {
		t.Errorf("config check of the patched file: %s%s", r.stdout, r.stderr)
	}

	bob := connect(guest)
	if listsTool(ctx, t, bob, "gateway") {
		t.Error("the gateway tool is offered to a caller who is not the owner")
	}
	if out, isErr := call(bob, map[string]any{"action": "status"}); !isErr {
		t.Errorf("a caller who is not the owner got the status: %s", out)
	}
	if out, isErr := call(bob, map[string]any{"action": "restart"}); !isErr {
		t.Errorf("a caller who is not the owner restarted the server: %s", out)
	}

	// restart: the server stops gracefully and starts again at the same
	// address, in the same process, with the patched file; a new
	// connection sees a later start.
	if out, isErr := call(ada, map[string]any{"action": "restart"}); isErr || !strings.Contains(out, "Restarting") {
		t.Fatalf("restart: %s", out)
	}
	deadline := time.Now().Add(time.Minute) // a guard against hanging, not a timing assertion
	for {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "owner", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withToken{owner}}}, nil)
		if err == nil {
			out, isErr := call(cs, map[string]any{"action": "status"})
			cs.Close()
			var again gateway.Status
			if !isErr && json.Unmarshal([]byte(out), &again) == nil && again.Started.After(st.Started) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not come back after restart (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestConfigPatchAppliedLive: toolbelt serve takes a config.patch of the
// tool policy and of the permission mode for its next calls, without a
// restart, and says so (live); a patch of its listening address is
// written and said to need a restart, and changes nothing now.
func TestConfigPatchAppliedLive(t *testing.T) {
	t.Parallel()
	const owner = "owner-token-0123456789abcdef"
	cfg := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("mcp:\n  tokens:\n    - token: "+owner+"\n      principal: ada\n      owner: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _, _ := startServe(t, append(cliEnvironment(t), "TOOLBELT_CONFIG="+cfg), "--workspace", workspaceWith(t))
	approver := sdk.NewClient(&sdk.Implementation{Name: "owner", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, nil
		},
	})
	cs := connectMCP(t, approver, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withToken{owner}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err.Error(), true
		}
		return textOf(res), res.IsError
	}
	patch := func(p map[string]any) gateway.Patched {
		t.Helper()
		out, isErr := call("gateway", map[string]any{"action": "config.patch", "patch": p})
		var patched gateway.Patched
		if isErr || json.Unmarshal([]byte(out), &patched) != nil {
			t.Fatalf("config.patch %v: %s", p, out)
		}
		return patched
	}
	read := map[string]any{"path": "notes.txt", "limit": 1}
	if out, isErr := call("read", read); isErr {
		t.Fatalf("read before the patch: %s", out)
	}
	p := patch(map[string]any{"tools": map[string]any{"deny": []any{"read"}}})
	if strings.Join(p.Live, ",") != "tools.deny" || len(p.Restart) != 0 {
		t.Errorf("a patch of the policy: live %v, restart %v; want live [tools.deny]", p.Live, p.Restart)
	}
	if out, isErr := call("read", read); !isErr || !strings.Contains(out, "deny read") {
		t.Errorf("read after the policy denies it, without a restart: %s", out)
	}

	p = patch(map[string]any{"mcp": map[string]any{"addr": "127.0.0.1:1"}, "tools": map[string]any{"deny": nil}})
	if strings.Join(p.Restart, ",") != "mcp.addr" || strings.Join(p.Live, ",") != "tools.deny" {
		t.Errorf("a patch of the address and the policy: live %v, restart %v; want live [tools.deny], restart [mcp.addr]", p.Live, p.Restart)
	}
	if out, isErr := call("read", read); isErr {
		t.Errorf("read once the deny is removed: %s", out)
	}
	if data, _ := os.ReadFile(cfg); !strings.Contains(string(data), "addr: 127.0.0.1:1") {
		t.Errorf("the address is not written:\n%s", data)
	}

	// Last: in plan mode the gateway tool, which changes things, is refused.
	p = patch(map[string]any{"mode": "plan"})
	if strings.Join(p.Live, ",") != "mode" || len(p.Restart) != 0 {
		t.Errorf("a patch of the mode: live %v, restart %v", p.Live, p.Restart)
	}
	if out, isErr := call("write", map[string]any{"path": "plan.txt", "content": "x"}); !isErr || !strings.Contains(out, "plan mode") {
		t.Errorf("write in plan mode, without a restart: %s", out)
	}
}
