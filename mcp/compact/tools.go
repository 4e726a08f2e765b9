package compact

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// Search limits of tool_search.
const (
	DefaultLimit = 5
	MaxLimit     = 20
)

const searchDescription = "Find the tools for a task. Only three tools are listed here, to save context; many more can be " +
	"found with this one and run with tool_call. Describe what you want to do in a few words (\"open an issue on GitHub\", " +
	"\"screenshot of the page\", \"find files by name\") and get the best matching tools, one line each. Then call " +
	"tool_describe for a tool's parameters and tool_call to run it. With regex: true, query is a regular expression " +
	"matched against tool names and descriptions, case-insensitive (\"^github__\" lists one server's tools)."

type searchArgs struct {
	Query string `json:"query" jsonschema:"What you want to do, in a few words; or a regular expression when regex is true." minLength:"1" maxLength:"1000"`
	Limit int    `json:"limit,omitempty" jsonschema:"How many tools to return, best first." minimum:"1" maximum:"20" default:"5"`
	Regex bool   `json:"regex,omitempty" jsonschema:"Match query as a regular expression (RE2 syntax, case-insensitive) against tool names and descriptions."`
}

func (c *Compact) searchTool() tool.Tool {
	t := tool.Must(tool.New(SearchName, searchDescription, func(_ context.Context, in searchArgs, _ tool.Invocation) (tool.Result, error) {
		return c.search(in)
	}))
	t.Label = "Search Tools"
	t.Meta = tool.Meta{ReadOnly: true, Source: tool.SourceCore}
	return t
}

func (c *Compact) search(in searchArgs) (tool.Result, error) {
	ix := c.Index()
	limit := min(cmp.Or(in.Limit, DefaultLimit), MaxLimit)
	var hits []Hit
	if in.Regex {
		var err error
		if hits, err = ix.Regex(in.Query, limit); err != nil {
			return tool.Result{}, tool.InputErrorf("%v. Fix the pattern, or search in plain words with regex: false.", err)
		}
	} else {
		hits = ix.Search(in.Query, limit)
	}
	details := map[string]any{"query": in.Query, "regex": in.Regex, "hits": hits, "tools": ix.Len()}
	if len(hits) == 0 {
		res := tool.Text(noMatch(ix, in))
		res.Details = details
		return res, nil
	}
	var b strings.Builder
	if in.Regex {
		fmt.Fprintf(&b, "Tools matching /%s/, names first:\n", in.Query)
	} else {
		fmt.Fprintf(&b, "Tools for %q, best first:\n", in.Query)
	}
	for _, h := range hits {
		b.WriteString(h.Name)
		if h.Line != "" {
			b.WriteString(" — ")
			b.WriteString(h.Line)
		}
		b.WriteByte('\n')
	}
	b.WriteString("tool_describe shows a tool's parameters; tool_call runs it.")
	res := tool.Text(b.String())
	res.Details = details
	return res, nil
}

// noMatch is tool_search's answer when nothing matches: how to broaden the
// search, and which groups of tools there are.
func noMatch(ix *Index, in searchArgs) string {
	if ix.Len() == 0 {
		return "No tools are available here."
	}
	var b strings.Builder
	if in.Regex {
		fmt.Fprintf(&b, "No tool name or description matches the pattern %q. Try a shorter pattern or alternatives (\"screenshot|snapshot\"), or search in plain words with regex: false.", in.Query)
	} else {
		fmt.Fprintf(&b, "No tool matches %q. Try fewer or more general words: what the tool acts on (\"file\", \"issue\", \"page\") or what it does (\"create\", \"list\", \"delete\"); or regex: true with a pattern such as \"screenshot|snapshot\".", in.Query)
	}
	fmt.Fprintf(&b, "\nThe %s here are in these groups: %s. regex: true with \"^SERVER__\" lists an imported server's tools.", count(ix.Len(), "tool"), strings.Join(groups(ix.tools), ", "))
	return b.String()
}

// count says how many things there are: "1 tool", "3 tools".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// groups names the groups of tools, in the tools' order, with how many
// tools each has: an imported tool's server, or else its catalog section.
func groups(tools []tool.Tool) []string {
	counts := map[string]int{}
	var order []string
	for _, t := range tools {
		// An imported server's group is shown as its prefix, so that it is
		// not counted with a section of the same name (a server "memory"
		// beside the memory tools).
		g, _, ok := strings.Cut(t.Name, ServerSeparator)
		if ok {
			g += ServerSeparator
		} else {
			g = cmp.Or(t.Meta.Section, "other")
		}
		if counts[g] == 0 {
			order = append(order, g)
		}
		counts[g]++
	}
	out := make([]string, len(order))
	for i, g := range order {
		out[i] = fmt.Sprintf("%s (%d)", g, counts[g])
	}
	return out
}

const describeDescription = "Show a tool's full description, its parameters as JSON Schema and its risk, so you can call it " +
	"with tool_call. Give the name exactly as tool_search returned it."

type describeArgs struct {
	Name string `json:"name" jsonschema:"The tool's name, as tool_search returned it." minLength:"1" maxLength:"200"`
}

func (c *Compact) describeTool() tool.Tool {
	t := tool.Must(tool.New(DescribeName, describeDescription, func(_ context.Context, in describeArgs, _ tool.Invocation) (tool.Result, error) {
		return c.describe(in.Name)
	}))
	t.Label = "Describe Tool"
	t.Meta = tool.Meta{ReadOnly: true, Source: tool.SourceCore}
	return t
}

func (c *Compact) describe(name string) (tool.Result, error) {
	ix := c.Index()
	t, ok := ix.Tool(name)
	if !ok {
		return tool.Result{}, unknownTool(ix, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", t.Name, t.DisplayLabel())
	fmt.Fprintf(&b, "Risk: %s.\n\n", riskLine(t.Meta))
	b.WriteString(strings.TrimSpace(t.Description))
	fmt.Fprintf(&b, "\n\nParameters (JSON Schema):\n%s\n\n", schemaJSON(t.Params()))
	fmt.Fprintf(&b, `Run it with tool_call {"name": %q, "arguments": {…}}.`, t.Name)
	res := tool.Text(b.String())
	res.Details = map[string]any{"name": t.Name, "meta": t.Meta}
	return res, nil
}

// unknownTool is the error for a name no tool has: it names the closest.
func unknownTool(ix *Index, name string) error {
	closest := ix.Closest(name, 3)
	if len(closest) == 0 {
		return tool.InputErrorf("No tool is named %q. Use tool_search to find one.", name)
	}
	return tool.InputErrorf("No tool is named %q. The closest names are %s. Use one exactly as written, or tool_search to find others.", name, quoteList(closest))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// riskLine says how much harm a call can do and why: "medium (changes
// things; destructive; reaches outside the workspace)".
func riskLine(m tool.Meta) string {
	m = m.WithDefaults()
	var traits []string
	if m.ReadOnly {
		traits = append(traits, "read-only")
	} else {
		traits = append(traits, "changes things")
		if m.Destructive {
			traits = append(traits, "may delete or overwrite data")
		}
		if m.Idempotent {
			traits = append(traits, "idempotent")
		}
	}
	if m.OpenWorld {
		traits = append(traits, "reaches outside the workspace")
	}
	if m.RequiresConfirmation {
		traits = append(traits, "asks a person before it runs")
	}
	if m.OwnerOnly {
		traits = append(traits, "owner only")
	}
	return fmt.Sprintf("%s (%s)", m.Risk, strings.Join(traits, "; "))
}

const callDescription = "Run a tool that tool_search found, with its arguments as tool_describe shows them. The tool's " +
	"own result comes back as it is, errors included; if an error says the arguments are wrong, fix them and call again. " +
	"When a result tells you to call another tool (such as result_read to read a full result), call it through tool_call too."

// callTimeout lets the pipeline's own limits govern a call run through
// tool_call: the outer call must not end before the inner one does.
const callTimeout = invoke.DefaultMaxTimeout

func (c *Compact) callTool() tool.Tool {
	return tool.Tool{
		Name:        CallName,
		Label:       "Call Tool",
		Description: callDescription,
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"name": {Type: "string", Description: "The tool's name, as tool_search returned it.", MinLength: new(1), MaxLength: new(200)},
				"arguments": {Type: "object", Description: "The tool's arguments: an object that fits the parameters tool_describe shows ({} when it takes none).",
					AdditionalProperties: &jsonschema.Schema{}},
			},
			Required:             []string{"name"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
		// Each call tool_call makes is governed as the named tool's own —
		// its risk, confirmation, policy and timeout — so tool_call itself
		// asks nothing and lets that call take as long as it may.
		Meta:    tool.Meta{Risk: tool.RiskLow, Destructive: true, OpenWorld: true, Timeout: callTimeout, Source: tool.SourceCore},
		Execute: c.call,
	}
}

func (c *Compact) call(ctx context.Context, call tool.Call, _ *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(call.Arguments, &in); err != nil {
		return tool.Result{}, tool.InputErrorf("The arguments of tool_call must be an object {\"name\": …, \"arguments\": {…}}: %v.", err)
	}
	name := strings.TrimSpace(in.Name)
	if isCompactName(name) {
		return tool.Result{}, tool.InputErrorf("%s is not run through tool_call: call it directly.", name)
	}
	args := in.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	id := innerCallID(call.ID, name)
	msg := c.runner.Run(ctx, tool.Call{ID: id, Name: name, Arguments: args}, invoke.OnUpdate(update))
	res := tool.Result{Content: msg.Content, Details: msg.Details, IsError: msg.IsError}
	if !res.IsError {
		if fn := c.summarizer(msg.ToolName); fn != nil {
			res = c.summarize(ctx, fn, id, res)
		}
	}
	return res, nil
}

// innerCallID derives the id of the call tool_call makes from its own, so
// the full outputs the pipeline keeps for it have a stable handle.
func innerCallID(outer, name string) string {
	if outer == "" {
		outer = randid.New("compact_", 8)
	}
	return outer + "/" + name
}

// schemaJSON renders a parameter schema as compact JSON; a tool without
// parameters takes an empty object.
func schemaJSON(s *jsonschema.Schema) string {
	if s == nil {
		return `{"type":"object","properties":{}}`
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Sprintf(`{"type":"object"} (the full schema could not be encoded: %v)`, err)
	}
	return string(b)
}
