package compact

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/automation"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
	agentlist "github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// corpusDir holds real MCP servers' tools/list answers, kept in the
// repository's testdata so that a fresh clone runs the corpus tests.
var corpusDir = filepath.Join("..", "..", "testdata", "mcp-tools")

// corpusFile is one server's tools/list answer in the corpus.
type corpusFile struct {
	Server string `json:"server"`
	Tools  []struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations *struct {
			Title           string `json:"title"`
			ReadOnlyHint    bool   `json:"readOnlyHint"`
			DestructiveHint *bool  `json:"destructiveHint"`
			IdempotentHint  bool   `json:"idempotentHint"`
			OpenWorldHint   *bool  `json:"openWorldHint"`
		} `json:"annotations"`
	} `json:"tools"`
}

// corpusTools returns every tool of the corpus as the MCP client imports
// it: named <server>__<tool>, with its schema and its annotations as
// metadata. Calling one fails: no server is connected. A missing corpus
// fails the test.
func corpusTools(tb testing.TB) []tool.Tool {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus files in %s: the repository's testdata is incomplete", corpusDir)
	}
	var out []tool.Tool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var file corpusFile
		if err := json.Unmarshal(b, &file); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, ct := range file.Tools {
			var params jsonschema.Schema
			if err := json.Unmarshal(ct.InputSchema, &params); err != nil {
				tb.Fatalf("%s/%s: %v", file.Server, ct.Name, err)
			}
			// No annotations: destructive and open-world, as MCP says.
			meta := tool.Meta{Destructive: true, OpenWorld: true, Source: tool.SourceMCP, Section: "mcp", Groups: []string{"mcp:" + file.Server}}
			label := ct.Title
			if a := ct.Annotations; a != nil {
				label = cmp.Or(label, a.Title)
				meta.ReadOnly, meta.Idempotent = a.ReadOnlyHint, a.IdempotentHint
				if a.DestructiveHint != nil {
					meta.Destructive = *a.DestructiveHint
				}
				if a.OpenWorldHint != nil {
					meta.OpenWorld = *a.OpenWorldHint
				}
			}
			server := file.Server
			out = append(out, tool.Tool{
				Name:        server + ServerSeparator + ct.Name,
				Label:       label,
				Description: ct.Description,
				Parameters:  &params,
				Meta:        meta,
				Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
					return tool.Result{}, fmt.Errorf("MCP server %q is not connected", server)
				},
			})
		}
	}
	return out
}

// workspace returns a tool context for a temp workspace with a file bridge.
func workspace(tb testing.TB) *tool.Context {
	tb.Helper()
	dir := tb.TempDir()
	b, err := fsbridge.OpenLocal(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = b.Close() })
	// A search provider is configured (never called), so every core tool
	// resolves: web_search is unavailable without one.
	cfg := tool.Config{"web_search": map[string]any{"searxng": map[string]any{"baseUrl": "http://127.0.0.1:9"}}}
	// A store outside the workspace indexes its memory: memory_search is
	// unavailable without one.
	dsn := filepath.Join(tb.TempDir(), "toolbelt.db")
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	// A job queue on it: job_status and job_cancel are unavailable
	// without one.
	q, err := jobs.Open(context.Background(), dsn, jobs.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = q.Stop(context.Background()) })
	// An agent is configured and the store holds the sessions: the session
	// tools and agents_list are unavailable without them.
	agents := []tool.AgentInfo{{ID: "main", Name: "Main", Description: "The agent of these tests."}}
	// The store keeps schedules: cron is unavailable without them; the job
	// tools need a job queue.
	tc := &tool.Context{
		Identity: tool.Identity{Workspace: dir},
		FSRoot:   dir,
		FS:       b,
		Config:   cfg,
		Jobs:     q,
	}
	memory.IndexService.Set(tc, st.Memory())
	agentlist.ListService.Set(tc, agents)
	sessions.StoreService.Set(tc, st.Sessions().ForTools())
	cron.SchedulerService.Set(tc, automation.New(st.Schedules(dir), automation.Options{}))
	return tc
}

// coreRegistry returns the built-in tools' registry, with extra tools added.
func coreRegistry(tb testing.TB, extra ...tool.Tool) *registry.Registry {
	tb.Helper()
	reg, closer := tools.Core()
	tb.Cleanup(func() { _ = closer.Close() })
	for _, t := range extra {
		if err := reg.Register(t); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// fullRunner returns a runner over the core tools and the whole corpus, on
// a temp workspace.
func fullRunner(tb testing.TB, opts ...invoke.Option) *invoke.Runner {
	tb.Helper()
	return invoke.New(coreRegistry(tb, corpusTools(tb)...), workspace(tb), opts...)
}

// offered returns the tools r offers, failing the test on any that cannot
// be resolved.
func offered(tb testing.TB, r *invoke.Runner) []tool.Tool {
	tb.Helper()
	return r.Tools(func(id string, err error) {
		if !errors.As(err, new(*tool.NotHere)) { // tools that do not apply here (canvas, ask_user) are not failures
			tb.Fatalf("tool %s unavailable: %v", id, err)
		}
	})
}

// text joins the text blocks of a result message.
func text(m tool.ResultMessage) string {
	var parts []string
	for _, c := range m.Content {
		if c.Type == tool.TextContent {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
