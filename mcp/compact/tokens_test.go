package compact

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/content/tokens"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// toolsList encodes tools as an MCP server answers tools/list: each tool's
// name, title, description, input schema compiled for Anthropic's dialect
// and annotations from its metadata, as {"tools":[…]}.
func toolsList(tb testing.TB, tools []tool.Tool) string {
	tb.Helper()
	res := sdk.ListToolsResult{Tools: make([]*sdk.Tool, 0, len(tools))}
	for _, t := range tools {
		doc, err := schema.FromSchema(t.Parameters)
		if err != nil {
			tb.Fatalf("%s: %v", t.Name, err)
		}
		compiled, _ := schema.Anthropic.Compile(doc)
		m := t.Meta.WithDefaults()
		destructive, openWorld := m.Destructive, m.OpenWorld
		res.Tools = append(res.Tools, &sdk.Tool{
			Name:        t.Name,
			Title:       t.DisplayLabel(),
			Description: t.Description,
			InputSchema: compiled,
			Annotations: &sdk.ToolAnnotations{
				Title:           t.DisplayLabel(),
				ReadOnlyHint:    m.ReadOnly,
				DestructiveHint: &destructive,
				IdempotentHint:  m.Idempotent,
				OpenWorldHint:   &openWorld,
			},
		})
	}
	b, err := json.Marshal(res)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// listings measures tools/list for the core tools and every corpus tool,
// in full and in compact mode.
type listings struct {
	tools             int
	fullBytes, fullTk int
	compBytes, compTk int
}

func measureListings(tb testing.TB) listings {
	tb.Helper()
	r := fullRunner(tb)
	all := offered(tb, r)
	full, comp := toolsList(tb, all), toolsList(tb, New(r, Options{}).Tools())
	return listings{
		tools:     len(all),
		fullBytes: len(full), fullTk: tokens.O200k(full),
		compBytes: len(comp), compTk: tokens.O200k(comp),
	}
}

func (l listings) saved() float64 { return 1 - float64(l.compTk)/float64(l.fullTk) }

// TestCompactListSaves95Percent requires compact mode's tools/list to take
// at least 95% fewer o200k tokens than the full list of the core tools and
// the corpus.
func TestCompactListSaves95Percent(t *testing.T) {
	t.Parallel()
	l := measureListings(t)
	t.Logf("tools/list for %d tools: full %d tokens (%d bytes); compact %d tokens (%d bytes); %.1f%% fewer tokens",
		l.tools, l.fullTk, l.fullBytes, l.compTk, l.compBytes, 100*l.saved())
	if l.tools < 150 {
		t.Errorf("only %d tools measured; the core tools and the corpus have more", l.tools)
	}
	if l.saved() < 0.95 {
		t.Errorf("compact mode saves %.1f%% of the tokens; want at least 95%%", 100*l.saved())
	}
}

// BenchmarkListTokens reports the tokens of tools/list, full and compact,
// as metrics.
func BenchmarkListTokens(b *testing.B) {
	var l listings
	for b.Loop() {
		l = measureListings(b)
	}
	b.ReportMetric(float64(l.fullTk), "full-tokens")
	b.ReportMetric(float64(l.compTk), "compact-tokens")
	b.ReportMetric(100*l.saved(), "%saved")
}
