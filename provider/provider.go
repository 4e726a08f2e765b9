// Package provider writes a resolved tool list in the form each model
// provider's API takes in a request's "tools": OpenAI Chat Completions and
// Responses, Anthropic, Gemini. Each tool's parameter schema is compiled
// into the provider's dialect (see [schema.Dialect]) and cached; the output
// is deterministic, byte for byte, so providers' prompt caches keep hitting.
//
//	ex := provider.NewExporter(reg)
//	target, _ := provider.ParseTarget("gemini")
//	out, err := ex.Export(reg.ResolveAll(tc, nil), target)
//	// out.Tools is {"functionDeclarations":[…]}
package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// API is a provider's wire format for tool definitions.
type API int

// The wire formats.
const (
	// OpenAIChat is Chat Completions:
	// {"type":"function","function":{"name","description","parameters","strict"?}}.
	OpenAIChat API = iota
	// OpenAIResponses is the Responses API:
	// {"type":"function","name","description","parameters","strict"}.
	OpenAIResponses
	// Anthropic is the Messages API: {"name","description","input_schema"}.
	Anthropic
	// Gemini is generateContent: one tool
	// {"functionDeclarations":[{"name","description","parameters"|"parametersJsonSchema"}]}.
	Gemini
)

// Target is where a tool list goes: a wire format and the schema dialect
// its parameters are compiled to.
type Target struct {
	// Name is the target's name, as ParseTarget takes it.
	Name string
	// API is the wire format.
	API API
	// Dialect is the schema dialect.
	Dialect schema.Dialect
}

// targets are the named targets; compat:… is made on demand.
var targets = []Target{
	{"openai", OpenAIChat, schema.OpenAI},
	{"openai-strict", OpenAIChat, schema.OpenAIStrict},
	{"openai-responses", OpenAIResponses, schema.OpenAI},
	{"openai-responses-strict", OpenAIResponses, schema.OpenAIStrict},
	{"anthropic", Anthropic, schema.Anthropic},
	{"gemini", Gemini, schema.Gemini},
	{"gemini-json", Gemini, schema.GeminiJSON},
	{"xai", OpenAIChat, schema.XAI},
}

// TargetNames lists the names ParseTarget takes.
func TargetNames() []string {
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	return append(names, "compat:KEYWORD,…")
}

// ParseTarget returns the target with this name: "openai", "openai-strict"
// (Chat Completions), "openai-responses", "openai-responses-strict",
// "anthropic", "gemini" (parameters), "gemini-json" (parametersJsonSchema),
// "xai", or "compat:kw1,kw2" (Chat Completions for an OpenAI-compatible
// server, without those keywords).
func ParseTarget(name string) (Target, error) {
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, "compat") {
		d, err := schema.ParseDialect(name)
		if err != nil {
			return Target{}, err
		}
		return Target{Name: d.Name(), API: OpenAIChat, Dialect: d}, nil
	}
	for _, t := range targets {
		if t.Name == name {
			return t, nil
		}
	}
	return Target{}, fmt.Errorf("unknown provider %q: use one of %s", name, strings.Join(TargetNames(), ", "))
}

// Versioned is what changes when tools are registered or removed: a
// registry ([registry.Registry.Version]).
type Versioned interface {
	Version() uint64
}

// Exporter writes tool lists for targets. It caches each tool's compiled
// schema per dialect, keyed by the tool's name and parameter schema, and
// drops the cache when the source's version changes (a tool registered,
// re-registered or removed). It is safe for concurrent use.
type Exporter struct {
	source Versioned // nil: only the schema pointer invalidates

	mu      sync.Mutex
	version uint64
	cache   map[cacheKey]*compiled
	// lists is the last export for each target: the same tools with the
	// same compiled schemas again get its bytes, encoded once.
	lists map[string]*exported
	// compiles counts compilations, for tests of the cache.
	compiles int
}

// exported is a tool list as it was last exported for a target.
type exported struct {
	names, descriptions []string
	compiled            []*compiled
	out                 Export
}

// same reports whether tools, compiled as cs, are the list's.
func (l *exported) same(tools []tool.Tool, cs []*compiled) bool {
	if len(tools) != len(l.names) {
		return false
	}
	for i, t := range tools {
		if t.Name != l.names[i] || t.Description != l.descriptions[i] || cs[i] != l.compiled[i] {
			return false
		}
	}
	return true
}

type cacheKey struct {
	tool, dialect string
}

// compiled is one tool's schema compiled for one dialect.
type compiled struct {
	params any // the schema it was compiled from (tool.Tool.ParamsKey)
	schema json.RawMessage
	report schema.Report
	empty  bool // the compiled object has no properties
}

// NewExporter returns an exporter whose cache follows source (a
// *registry.Registry; nil when tools are not registered anywhere).
func NewExporter(source Versioned) *Exporter {
	return &Exporter{source: source, cache: map[cacheKey]*compiled{}, lists: map[string]*exported{}}
}

// Export is a tool list ready for a provider's request.
type Export struct {
	// Target is the target's name.
	Target string `json:"target"`
	// Tools is the JSON for the request's "tools": an array, or for
	// Gemini one tool object {"functionDeclarations":[…]}.
	Tools json.RawMessage `json:"tools"`
	// Strict reports whether the tools are sent in strict mode.
	Strict bool `json:"strict"`
	// Fallback says why strict mode was asked for and is off: OpenAI
	// applies it per request, so one tool that cannot be strict turns it
	// off for all.
	Fallback string `json:"fallback,omitempty"`
	// Reports says, per tool, what compiling its schema changed; paths
	// start at "tools.NAME.parameters".
	Reports []schema.Report `json:"reports"`
}

// Export writes tools for target, in their order. The same tools with the
// same schemas as the last export for target get that export again, its
// bytes encoded once (the Export's slices are shared: do not change them).
func (e *Exporter) Export(tools []tool.Tool, target Target) (Export, error) {
	out := Export{Target: target.Name, Reports: []schema.Report{}}
	d := target.Dialect
	list, err := e.compileAll(tools, d)
	if err != nil {
		return Export{}, err
	}
	if d.Strict() {
		var why []string
		for i, c := range list {
			for _, ns := range c.report.NotStrict {
				why = append(why, fmt.Sprintf("tool %q: %s", tools[i].Name, ns))
			}
		}
		if len(why) == 0 {
			out.Strict = true
		} else {
			out.Fallback = "strict mode is off for every tool of this request (OpenAI applies it per request), because " + strings.Join(why, "; ")
			if list, err = e.compileAll(tools, schema.OpenAI); err != nil {
				return Export{}, err
			}
		}
	}
	e.mu.Lock()
	last := e.lists[target.Name]
	e.mu.Unlock()
	if last != nil && last.same(tools, list) {
		return last.out, nil
	}
	for i, c := range list {
		out.Reports = append(out.Reports, c.report.Prefixed("tools."+tools[i].Name+".parameters"))
	}
	out.Tools, err = schema.Encode(wire(tools, list, target, out.Strict))
	if err != nil {
		return Export{}, err
	}
	l := &exported{names: make([]string, len(tools)), descriptions: make([]string, len(tools)), compiled: list, out: out}
	for i, t := range tools {
		l.names[i], l.descriptions[i] = t.Name, t.Description
	}
	e.mu.Lock()
	e.lists[target.Name] = l
	e.mu.Unlock()
	return out, nil
}

// wire builds the provider's JSON structure.
func wire(tools []tool.Tool, list []*compiled, target Target, strict bool) any {
	var flag *bool
	if target.Dialect.Strict() {
		flag = &strict
	}
	switch target.API {
	case OpenAIResponses:
		out := make([]responsesTool, len(tools))
		for i, t := range tools {
			// Responses defaults to strict: say false when it is off.
			out[i] = responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: list[i].schema, Strict: strict}
		}
		return out
	case Anthropic:
		out := make([]anthropicTool, len(tools))
		for i, t := range tools {
			out[i] = anthropicTool{Name: t.Name, Description: t.Description, InputSchema: list[i].schema}
		}
		return out
	case Gemini:
		out := geminiTool{FunctionDeclarations: make([]geminiFunction, len(tools))}
		for i, t := range tools {
			f := geminiFunction{Name: t.Name, Description: t.Description}
			switch {
			case list[i].empty: // a function without parameters omits them
			case target.Dialect.Name() == schema.GeminiJSON.Name():
				f.ParametersJSONSchema = list[i].schema
			default:
				f.Parameters = list[i].schema
			}
			out.FunctionDeclarations[i] = f
		}
		return out
	}
	out := make([]chatTool, len(tools))
	for i, t := range tools {
		out[i] = chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: list[i].schema, Strict: flag}}
	}
	return out
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type geminiTool struct {
	FunctionDeclarations []geminiFunction `json:"functionDeclarations"`
}

type geminiFunction struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// compileAll returns each tool's schema compiled for d, from the cache
// when it holds the tool's current schema.
func (e *Exporter) compileAll(tools []tool.Tool, d schema.Dialect) ([]*compiled, error) {
	out := make([]*compiled, len(tools))
	e.mu.Lock()
	if e.source != nil {
		if v := e.source.Version(); v != e.version {
			clear(e.cache)
			e.version = v
		}
	}
	var missing []int
	for i, t := range tools {
		c := e.cache[cacheKey{t.Name, d.Name()}]
		if c != nil && c.params == t.ParamsKey() {
			out[i] = c
		} else {
			missing = append(missing, i)
		}
	}
	e.mu.Unlock()
	for _, i := range missing {
		c, err := compile(tools[i], d)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	if len(missing) > 0 {
		e.mu.Lock()
		for _, i := range missing {
			e.cache[cacheKey{tools[i].Name, d.Name()}] = out[i]
		}
		e.compiles += len(missing)
		e.mu.Unlock()
	}
	return out, nil
}

// compile compiles one tool's schema for d.
func compile(t tool.Tool, d schema.Dialect) (*compiled, error) {
	doc, lazy := t.ParamsDoc()
	if !lazy {
		var err error
		if doc, err = schema.FromSchema(t.Parameters); err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
	}
	out, rep := d.Compile(doc)
	b, err := schema.Encode(out)
	if err != nil {
		return nil, fmt.Errorf("tool %q: encoding its compiled schema: %w", t.Name, err)
	}
	props, _ := out["properties"].(map[string]any)
	return &compiled{params: t.ParamsKey(), schema: b, report: rep, empty: len(props) == 0}, nil
}
