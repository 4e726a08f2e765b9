// Package compact is compact mode for large tool sets: instead of every
// tool's full schema, an MCP server offers three tools — tool_search (a
// query in plain words, or a regular expression, to the best matching tools,
// one line each), tool_describe (a name to the full description, schema and
// risk) and tool_call (a name and arguments, run through the invoke
// pipeline). A model then pays for the schemas of the few tools it uses,
// not for all of them in every request.
//
//	c := compact.New(runner, compact.Options{})
//	for _, t := range c.Tools() { small.Register(t) } // serve these three
//	reg.Watch(c.Refresh)                             // keep the index current
//
// tool_call never runs a tool by itself: it hands the call to the runner,
// so normalization, validation against the tool's full schema, policy,
// confirmation, hooks, timeouts, truncation and audit all apply, and the
// result comes back unchanged. A program may register a [Summarizer] for a
// tool; tool_call then returns the summary and a handle to the full result,
// which the result_read tool reads.
package compact

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Runner runs calls through the pipeline and says which tools it offers and
// for which tool context. [*invoke.Runner] is one.
type Runner interface {
	// Run runs one call through the pipeline.
	Run(ctx context.Context, call tool.Call, opts ...invoke.CallOption) tool.ResultMessage
	// Tools returns the tools the runner offers, resolved.
	Tools(onError registry.ErrorFunc) []tool.Tool
	// Context returns the tool context calls run for; its Outputs keeps
	// full results for result_read.
	Context() *tool.Context
}

var _ Runner = (*invoke.Runner)(nil)

// Summarizer turns a tool's result into a short summary for the model: an
// image generator's URL and size, a data tool's key figures. res is the
// result as the pipeline returned it (its text may have been cut, the full
// text kept; its details carry the pipeline's notes). ok false returns the
// result as it is.
type Summarizer func(res tool.Result) (summary string, ok bool)

// Options configure compact mode.
type Options struct {
	// OnError receives the tools the runner could not resolve when the
	// index is built, and why; they are left out of the search.
	OnError registry.ErrorFunc
	// Logger logs summarizers that fail (default slog.Default()).
	Logger *slog.Logger
	// Summaries are the lines that list tools, by tool name (toolbelt.yaml's
	// tools.summaries): they beat a tool's own Meta.Summary, which beats the
	// first sentence of its description. A blank one is ignored.
	Summaries map[string]string
}

// Names of the three tools.
const (
	SearchName   = "tool_search"
	DescribeName = "tool_describe"
	CallName     = "tool_call"
)

// Compact is compact mode over one runner's tools. It is safe for concurrent
// use.
type Compact struct {
	runner Runner
	opts   Options
	index  atomic.Pointer[Index]
	tools  []tool.Tool

	refreshing sync.Mutex // one Refresh at a time, so the last stored is the newest

	mu          sync.RWMutex
	summarizers map[string]Summarizer
}

// New returns compact mode over the tools runner offers, and indexes them.
func New(runner Runner, opts Options) *Compact {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &Compact{runner: runner, opts: opts, summarizers: map[string]Summarizer{}}
	c.tools = []tool.Tool{c.searchTool(), c.describeTool(), c.callTool()}
	c.Refresh()
	return c
}

// Tools returns tool_search, tool_describe and tool_call, ready to register.
func (c *Compact) Tools() []tool.Tool { return append([]tool.Tool(nil), c.tools...) }

// Refresh indexes the tools the runner offers now. Call it when they
// change (see registry.Registry.Watch); searches keep using the previous
// index until the new one is ready.
func (c *Compact) Refresh() {
	c.refreshing.Lock()
	defer c.refreshing.Unlock()
	var offered []tool.Tool
	for _, t := range c.runner.Tools(c.opts.OnError) {
		if isCompactName(t.Name) {
			continue
		}
		if s := c.opts.Summaries[t.Name]; strings.TrimSpace(s) != "" {
			t.Meta.Summary = s
		}
		offered = append(offered, t)
	}
	c.index.Store(NewIndex(offered))
}

// Index returns the current index.
func (c *Compact) Index() *Index { return c.index.Load() }

// Search returns at most limit tools for a natural-language query, best
// first.
func (c *Compact) Search(query string, limit int) []Hit { return c.Index().Search(query, limit) }

// Summarize registers fn as the summarizer of the results of the tool
// registered as toolName; a nil fn removes it.
func (c *Compact) Summarize(toolName string, fn Summarizer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fn == nil {
		delete(c.summarizers, toolName)
		return
	}
	c.summarizers[toolName] = fn
}

func (c *Compact) summarizer(toolName string) Summarizer {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.summarizers[toolName]
}

// Enabled reports whether compact mode is on: when asked for (compactFlag),
// or by itself when there are more than above tools. above ≤ 0 never turns
// it on by itself.
func Enabled(count int, compactFlag bool, above int) bool {
	return compactFlag || above > 0 && count > above
}

func isCompactName(name string) bool {
	return name == SearchName || name == DescribeName || name == CallName
}

// Listing is the seeds' form of compact mode for a system prompt: how to
// use the three tools, then each tool of the index by name with its
// one-line summary (see [Summary]).
func (c *Compact) Listing() string {
	ix := c.Index()
	var b strings.Builder
	b.WriteString("Tools: you have these tools, but not their parameters. Call one with tool_call (name, arguments); " +
		"when you are not sure of its parameters, read them first with tool_describe (name); tool_search (query) finds tools by what they do.\n")
	for i, t := range ix.tools {
		fmt.Fprintf(&b, "- %s: %s\n", t.Name, ix.lines[i])
	}
	return strings.TrimRight(b.String(), "\n")
}
