package client_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/tool"
)

// everythingVersion is the version of @modelcontextprotocol/server-everything
// the test is written against; .ci/run installs it.
const everythingVersion = "2026.8.31"

// everythingEnv names the path of the package's mcp-server-everything bin.
const everythingEnv = "TOOLBELT_TEST_EVERYTHING"

// everythingCorpus is the server's tool list, as recorded for the corpus.
const everythingCorpus = "../../testdata/mcp-tools/everything.json"

// everything returns the configuration that runs the reference server over
// stdio with node, or skips the test when node or the package is missing.
func everything(t *testing.T) config.MCPServer {
	t.Helper()
	install := fmt.Sprintf("npm install --prefix DIR @modelcontextprotocol/server-everything@%s, then set %s=DIR/node_modules/.bin/mcp-server-everything (.ci/run does this)", everythingVersion, everythingEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed, so the reference MCP server cannot run: install Node.js, then %s", install)
	}
	bin := os.Getenv(everythingEnv)
	if bin == "" {
		t.Skipf("%s is not set: %s", everythingEnv, install)
	}
	script, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Skipf("%s=%s: %v: %s", everythingEnv, bin, err, install)
	}
	var pkg struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(script), "..", "package.json")); err == nil && json.Unmarshal(b, &pkg) == nil && pkg.Version != everythingVersion {
		t.Logf("server-everything is version %s; the test is written for %s", pkg.Version, everythingVersion)
	}
	return config.MCPServer{Command: node, Args: []string{script, "stdio"}}
}

// corpusTool is a tool as the corpus records it.
type corpusTool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	InputSchema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"inputSchema"`
	Annotations *struct {
		ReadOnlyHint    bool  `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
		IdempotentHint  bool  `json:"idempotentHint"`
		OpenWorldHint   *bool `json:"openWorldHint"`
	} `json:"annotations"`
}

// TestEverything imports the reference MCP server, which no one here wrote,
// checks its tools against the corpus, and calls several through the
// pipeline.
func TestEverything(t *testing.T) {
	t.Parallel()
	srv := everything(t)
	m, reg := start(t, map[string]config.MCPServer{"everything": srv}, client.Options{})
	if st := m.Status()[0]; st.State != client.StateReady || len(st.Skipped) != 0 {
		t.Fatalf("status %+v", st)
	}

	t.Run("corpus", func(t *testing.T) {
		b, err := os.ReadFile(everythingCorpus)
		if err != nil {
			t.Fatalf("the corpus is not here: %v", err)
		}
		var corpus struct{ Tools []corpusTool }
		if err := json.Unmarshal(b, &corpus); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, ct := range corpus.Tools {
			want = append(want, "everything__"+ct.Name)
		}
		// The server offers these only to clients that declare
		// elicitation (form mode; url mode), which Toolbelt's client always
		// does (declining the requests unless mcpServers.<name>.elicitation
		// is on); the corpus was listed by a client that did not.
		want = append(want, "everything__trigger-elicitation-request", "everything__trigger-url-elicitation")
		slices.Sort(want)
		if got := ids(reg.List()); !slices.Equal(got, want) {
			t.Errorf("imported %v\nthe corpus has %v", got, want)
		}
		for _, ct := range corpus.Tools {
			id := "everything__" + ct.Name
			got, ok := reg.Meta(id)
			if !ok {
				continue
			}
			a := ct.Annotations
			want := tool.Meta{
				ID: id, Label: ct.Title, Description: ct.Description, Section: "mcp", Groups: []string{"mcp:everything"}, Source: tool.SourceMCP,
				ReadOnly: a.ReadOnlyHint, Idempotent: a.IdempotentHint || a.ReadOnlyHint,
				Destructive: !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint),
				OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint, Risk: tool.RiskMedium,
			}
			want.ExternalContent = want.OpenWorld
			if a.ReadOnlyHint {
				want.Risk = tool.RiskLow
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s\n got %+v\nwant %+v", id, got, want)
			}
			resolved, ok := reg.Resolve(id, nil, nil)
			if !ok {
				t.Errorf("%s does not resolve", id)
				continue
			}
			var params []string
			if resolved.Params() != nil {
				params = slices.Sorted(func(yield func(string) bool) {
					for k := range resolved.Params().Properties {
						if !yield(k) {
							return
						}
					}
				})
			}
			var wantParams []string
			for k := range ct.InputSchema.Properties {
				wantParams = append(wantParams, k)
			}
			slices.Sort(wantParams)
			if !slices.Equal(params, wantParams) {
				t.Errorf("%s parameters %v, corpus %v", id, params, wantParams)
			}
		}
	})

	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, invoke.WithConfirmer(invoke.AutoApprove))
	for _, tc := range []struct {
		name, args string
		isError    bool
		want       string
		check      func(t *testing.T, msg tool.ResultMessage)
	}{
		{name: "everything__echo", args: `{"message":"hello from toolbelt"}`, want: "Echo: hello from toolbelt"},
		{name: "everything__get-sum", args: `{"a":2,"b":40}`, want: "42"},
		{name: "everything__get-sum", args: `{"a":"two","b":40}`, isError: true, want: "a"}, // refused by Toolbelt against the imported schema
		{name: "everything__get-tiny-image", args: `{}`, check: func(t *testing.T, msg tool.ResultMessage) {
			i := slices.IndexFunc(msg.Content, func(c tool.Content) bool { return c.Type == tool.ImageContent })
			if i < 0 || msg.Content[i].MIMEType != "image/png" || len(msg.Content[i].Data) < 100 {
				t.Errorf("no PNG image in %+v", msg.Content)
			}
		}},
		{name: "everything__get-structured-content", args: `{"location":"New York"}`, want: "temperature", check: func(t *testing.T, msg tool.ResultMessage) {
			d, ok := msg.Details.(map[string]any)
			if !ok || d["temperature"] == nil || d["conditions"] == nil || d["humidity"] == nil {
				t.Errorf("structured content not in details: %#v", msg.Details)
			}
		}},
		{name: "everything__get-resource-links", args: `{"count":2}`, want: "[resource link: demo://resource/"},
	} {
		msg := run(t, r, tc.name, tc.args)
		if got := text(msg.Content); msg.IsError != tc.isError || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: isError %v, %q does not contain %q", tc.name, tc.args, msg.IsError, got, tc.want)
		}
		if tc.check != nil {
			tc.check(t, msg)
		}
	}

	t.Run("progress", func(t *testing.T) {
		var mu sync.Mutex
		var updates []string
		msg := run(t, r, "everything__trigger-long-running-operation", `{"duration":2,"steps":4}`, invoke.OnUpdate(func(u tool.Result) {
			mu.Lock()
			updates = append(updates, text(u.Content))
			mu.Unlock()
		}))
		if msg.IsError || !strings.Contains(text(msg.Content), "Long running operation completed") {
			t.Fatalf("result: %+v", msg)
		}
		mu.Lock()
		defer mu.Unlock()
		// The last notification may arrive after the result, which
		// supersedes it; the earlier ones arrive while the call runs.
		if len(updates) == 0 {
			t.Fatal("no progress reached the call")
		}
		for i, u := range updates {
			if u != fmt.Sprintf("progress %d/4", i+1) {
				t.Errorf("update %d is %q", i, u)
			}
		}
	})
}
