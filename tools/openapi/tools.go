package openapi

import (
	"cmp"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/importname"
	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// DefaultSeparator joins an API's name and an operation's id.
const DefaultSeparator = "__"

// The limits of one request, the document's fetch included.
const (
	maxBytes = web.DefaultMaxResponseBytes
	timeout  = web.DefaultFetchTimeout
)

// allowSetting is where private hosts are allowed: web_fetch's list,
// which the APIs' documents and redirects are checked against.
const allowSetting = "tools.web_fetch.allowHosts"

// Options say how APIs are imported.
type Options struct {
	// Separator joins the API's name and the operation's id (default "__").
	Separator string
	// Resolve turns a spec file's path into one to open (relative to
	// toolbelt.yaml); nil opens it as written.
	Resolve func(string) string
	// LookupEnv reads the secrets' environment variables (default
	// os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// AllowHosts are the private hosts a spec URL, or an API's redirect,
	// may reach (tools.web_fetch.allowHosts); an API's own host and token
	// endpoint are always reached.
	AllowHosts []string
	// RootCAs verify TLS servers (nil: the system's).
	RootCAs *x509.CertPool
}

// Load reads api's OpenAPI document and returns a tool for each operation
// it includes.
func Load(ctx context.Context, api config.OpenAPI, o Options) ([]tool.Tool, error) {
	data, docURL, err := o.read(ctx, api.Spec)
	if err != nil {
		return nil, fmt.Errorf("openapi %s: reading %s: %w", api.Name, api.Spec, err)
	}
	doc, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("openapi %s: %s: %w", api.Name, api.Spec, err)
	}
	c, err := o.client(api, doc, docURL)
	if err != nil {
		return nil, fmt.Errorf("openapi %s: %w", api.Name, err)
	}
	ops, err := doc.Operations()
	if err != nil {
		return nil, fmt.Errorf("openapi %s: %w", api.Name, err)
	}
	ops = slices.DeleteFunc(ops, func(op Operation) bool { return !included(api.Include, op) })
	ids := make([]string, len(ops))
	for i, op := range ops {
		ids[i] = op.ID
	}
	names := importname.Local(api.Name, cmp.Or(o.Separator, DefaultSeparator), ids)
	tools := make([]tool.Tool, 0, len(ops))
	for _, op := range ops {
		t, err := c.tool(names[op.ID], api.Name, doc, op)
		if err != nil {
			return nil, fmt.Errorf("openapi %s: operation %s: %w", api.Name, op.ID, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// included reports whether the filter keeps op: every operation when it
// names nothing, else those with a named tag or id.
func included(f config.OpenAPIInclude, op Operation) bool {
	if len(f.Tags) == 0 && len(f.OperationIDs) == 0 {
		return true
	}
	return slices.Contains(f.OperationIDs, op.ID) || slices.ContainsFunc(op.Tags, func(t string) bool { return slices.Contains(f.Tags, t) })
}

// read returns the document at spec, a file or an http(s) URL fetched as
// web_fetch fetches, and the URL relative server URLs resolve against.
func (o Options) read(ctx context.Context, spec string) ([]byte, string, error) {
	if !strings.HasPrefix(spec, "http://") && !strings.HasPrefix(spec, "https://") {
		if o.Resolve != nil {
			spec = o.Resolve(spec)
		}
		data, err := os.ReadFile(spec)
		return data, "", err
	}
	u, err := url.Parse(spec)
	if err != nil {
		return nil, "", err
	}
	g, err := netguard.New(netguard.Options{Name: "openapi", AllowHosts: o.AllowHosts, Setting: allowSetting})
	if err != nil {
		return nil, "", err
	}
	if err := g.CheckURL(u); err != nil {
		return nil, "", err
	}
	client := guardedClient(g, o.RootCAs)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, spec, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err == nil && len(data) > maxBytes {
		err = fmt.Errorf("the document is larger than %d bytes", maxBytes)
	}
	return data, resp.Request.URL.String(), err
}

// guardedClient is an HTTP client that reaches only what g allows, on
// every redirect too.
func guardedClient(g *netguard.Guard, rootCAs *x509.CertPool) *http.Client {
	return &http.Client{
		Transport: g.NewTransport(web.DefaultUserAgent, timeout, rootCAs),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > web.DefaultMaxRedirects {
				return fmt.Errorf("more than %d redirects", web.DefaultMaxRedirects)
			}
			return g.CheckURL(req.URL)
		},
		Timeout: timeout,
	}
}

// tool makes the tool of one operation.
func (c *caller) tool(name, apiName string, doc *Document, op Operation) (tool.Tool, error) {
	params, inputs, media, err := doc.parameters(op)
	if err != nil {
		return tool.Tool{}, err
	}
	s, err := schema.ToSchema(params)
	if err != nil {
		return tool.Tool{}, fmt.Errorf("its parameters are not a JSON Schema: %w", err)
	}
	safe := op.Method == http.MethodGet || op.Method == http.MethodHead || op.Method == http.MethodOptions
	m := tool.Meta{
		ID:              name,
		Label:           cmp.Or(op.Summary, tool.LabelFromName(op.ID)),
		Description:     description(op),
		Section:         Section,
		Groups:          []string{Section + ":" + apiName},
		Source:          tool.SourceOpenAPI,
		Risk:            tool.RiskMedium,
		ReadOnly:        safe,
		Destructive:     !safe,
		Idempotent:      safe || op.Method == http.MethodPut || op.Method == http.MethodDelete,
		OpenWorld:       true,
		ExternalContent: true,
		Timeout:         timeout,
	}
	if safe {
		m.Risk = tool.RiskLow
	}
	call := &call{caller: c, op: op, inputs: inputs, media: media}
	return tool.Tool{Name: name, Label: m.Label, Description: m.Description, Parameters: s, Meta: m, Execute: call.execute}, nil
}

// description says what an operation does and which request it sends.
func description(op Operation) string {
	var parts []string
	for _, s := range []string{op.Summary, op.Description} {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	parts = append(parts, fmt.Sprintf("(%s %s)", op.Method, op.Path))
	if op.Deprecated {
		parts = append(parts, "Deprecated.")
	}
	return strings.Join(parts, "\n\n")
}
