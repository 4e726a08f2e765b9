package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/provider"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// DialectSchema is a tool as one provider's request takes it, as
// toolbelt schema export --provider writes it.
type DialectSchema struct {
	// Target is the provider target's name ("openai-strict", …).
	Target string
	// JSON is the tool's definition for the request, indented.
	JSON string
	// Changes says what compiling the schema for the target changed, one
	// line per change; Fallback why strict mode is off.
	Changes  string
	Fallback string
}

// ToolSchemas resolves the registered tool id for tc and writes it for
// every named provider target, with exp (whose cache follows the
// registry). Unavailable says why the tool could not be resolved (its
// schemas are then unknown).
func ToolSchemas(reg *registry.Registry, exp *provider.Exporter, tc *tool.Context, id string) (t tool.Tool, schemas []DialectSchema, unavailable string, err error) {
	t, ok := reg.Resolve(id, tc, func(_ string, err error) { unavailable = err.Error() })
	if !ok {
		return t, nil, unavailable, nil
	}
	for _, name := range provider.TargetNames() {
		if strings.HasPrefix(name, "compat:") {
			continue // a pattern, not a target
		}
		target, err := provider.ParseTarget(name)
		if err != nil {
			return t, nil, "", err
		}
		out, err := exp.Export([]tool.Tool{t}, target)
		if err != nil {
			return t, nil, "", fmt.Errorf("writing %s for %s: %w", t.Name, name, err)
		}
		var b bytes.Buffer
		if err := json.Indent(&b, out.Tools, "", "  "); err != nil {
			return t, nil, "", err
		}
		var changes strings.Builder
		for _, r := range out.Reports {
			changes.WriteString(r.String())
		}
		schemas = append(schemas, DialectSchema{Target: name, JSON: b.String(), Changes: changes.String(), Fallback: out.Fallback})
	}
	return t, schemas, "", nil
}

// errNoTools is the error of the pages that show tools when the root
// opened none.
var errNoTools = errors.New("this server opened no tools (its root keeps state only)")

func (c *Console) loadTools(*http.Request, User) (any, error) {
	if c.opts.Registry == nil {
		return nil, errNoTools
	}
	return c.opts.Registry.List(), nil
}

// toolView is a tool's page: its schema per provider, and the policy's
// verdict for the caller the form describes (the owner on no channel
// before it is filled).
type toolView struct {
	Meta        tool.Meta
	Schemas     []DialectSchema
	Unavailable string
	Caller      tool.Identity
	Policy      policy.Result
}

func (c *Console) loadTool(r *http.Request, _ User) (any, error) {
	reg := c.opts.Registry
	if reg == nil {
		return nil, errNoTools
	}
	id, ok := reg.Lookup(r.PathValue("name"))
	if !ok {
		return nil, fmt.Errorf("no tool is named %q: %w", r.PathValue("name"), ErrNotFound)
	}
	meta, _ := reg.Meta(id)
	q := r.URL.Query()
	v := toolView{Meta: meta, Caller: tool.Identity{AgentID: q.Get("agent"), Channel: q.Get("channel"), Principal: q.Get("principal"), SessionKey: q.Get("session"), Owner: q.Get("notowner") == ""}}
	v.Policy = c.opts.Policy.Decide(policy.Request{Meta: meta, Caller: v.Caller})
	var err error
	_, v.Schemas, v.Unavailable, err = ToolSchemas(reg, provider.NewExporter(reg), c.opts.Context, id)
	return v, err
}
