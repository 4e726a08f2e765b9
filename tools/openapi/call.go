package openapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/tool"
)

// caller sends one API's requests: to its base URL, with its credentials,
// reaching private addresses only for the API's own host, its token
// endpoint and the hosts of tools.web_fetch.allowHosts.
type caller struct {
	base   *url.URL
	client *http.Client
	auth   config.OpenAPIAuth
	// key is the API key or bearer token, read from the environment.
	key string
}

// client makes the caller of api: its base URL (configured, else the
// document's first server) and its credentials from the environment.
func (o Options) client(api config.OpenAPI, doc *Document, docURL string) (*caller, error) {
	raw := api.BaseURL
	if raw == "" {
		raw = doc.Server(docURL)
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("no base URL: the document names no http(s) server (%q); set baseURL", raw)
	}
	c := &caller{base: base, auth: api.Auth}
	allow := append([]string{base.Host}, o.AllowHosts...)
	switch api.Auth.Type {
	case config.AuthAPIKey, config.AuthBearer:
		if c.key, err = o.secret("value", api.Auth.Value); err != nil {
			return nil, err
		}
	case config.AuthOAuth2:
		tu, err := url.Parse(api.Auth.TokenURL)
		if err != nil {
			return nil, fmt.Errorf("auth.tokenURL: %w", err)
		}
		allow = append(allow, tu.Host)
	}
	g, err := netguard.New(netguard.Options{Name: "openapi", AllowHosts: allow, Setting: allowSetting})
	if err != nil {
		return nil, err
	}
	c.client = guardedClient(g, o.RootCAs)
	if api.Auth.Type == config.AuthOAuth2 {
		c.client, err = o.oauth(api.Auth, c.client)
	}
	return c, err
}

// oauth returns a client that sends base's requests with a token of the
// client-credentials flow, fetched through base, cached and renewed.
func (o Options) oauth(a config.OpenAPIAuth, base *http.Client) (*http.Client, error) {
	id, err := o.secret("clientID", a.ClientID)
	if err != nil {
		return nil, err
	}
	sec, err := o.secret("clientSecret", a.ClientSecret)
	if err != nil {
		return nil, err
	}
	cc := clientcredentials.Config{ClientID: id, ClientSecret: sec, TokenURL: a.TokenURL, Scopes: a.Scopes}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	return &http.Client{
		Transport:     &oauth2.Transport{Source: cc.TokenSource(ctx), Base: base.Transport},
		CheckRedirect: base.CheckRedirect,
		Timeout:       base.Timeout,
	}, nil
}

// secret expands the ${NAME} references of the auth field's value.
func (o Options) secret(field, v string) (string, error) {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	s, missing := config.ExpandEnv(v, lookup)
	if len(missing) > 0 {
		return "", fmt.Errorf("auth.%s reads $%s, which is not set", field, missing[0])
	}
	return s, nil
}

// call is one operation's tool.
type call struct {
	*caller
	op     Operation
	inputs map[string]input
	media  string // of the request body
}

// execute sends the request the arguments describe and returns the
// response: its body as text (an image as an image), an error result for
// an HTTP error status.
func (c *call) execute(ctx context.Context, tc tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
	args := map[string]any{}
	if len(tc.Arguments) > 0 {
		dec := json.NewDecoder(bytes.NewReader(tc.Arguments))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return tool.Result{}, tool.InputErrorf("the arguments are not a JSON object: %v", err)
		}
	}
	req, err := c.request(ctx, args)
	if err != nil {
		return tool.Result{}, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return tool.Result{}, fmt.Errorf("%s %s: %w", c.op.Method, c.op.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return tool.Result{}, fmt.Errorf("reading the response of %s %s: %w", c.op.Method, c.op.Path, err)
	}
	return c.response(resp, body), nil
}

// request builds the HTTP request of the arguments.
func (c *call) request(ctx context.Context, args map[string]any) (*http.Request, error) {
	path := c.op.Path
	query := url.Values{}
	header := http.Header{}
	var body io.Reader
	for key, v := range args {
		in, ok := c.inputs[key]
		if !ok {
			continue // the schema check has said what is unknown
		}
		switch in.in {
		case "path":
			path = strings.ReplaceAll(path, "{"+in.name+"}", url.PathEscape(scalar(v)))
		case "query":
			if list, ok := v.([]any); ok && in.explode {
				for _, e := range list {
					query.Add(in.name, scalar(e))
				}
			} else {
				query.Set(in.name, scalar(v))
			}
		case "header":
			header.Set(in.name, scalar(v))
		case "cookie":
			header.Add("Cookie", (&http.Cookie{Name: in.name, Value: scalar(v)}).String())
		case bodyKey:
			b, err := c.encodeBody(v)
			if err != nil {
				return nil, err
			}
			body = bytes.NewReader(b)
			header.Set("Content-Type", c.media)
		}
	}
	if strings.Contains(path, "{") {
		return nil, tool.InputErrorf("%s %s needs every path parameter: %s is missing", c.op.Method, c.op.Path, path[strings.Index(path, "{"):])
	}
	u := c.base.JoinPath(path)
	u.RawQuery = mergeQuery(c.base.Query(), query).Encode()
	c.authorize(header, u)
	req, err := http.NewRequestWithContext(ctx, c.op.Method, u.String(), body)
	if err != nil {
		return nil, tool.InputErrorf("cannot request %s %s: %v", c.op.Method, c.op.Path, err)
	}
	header.Set("Accept", "application/json, */*;q=0.8")
	req.Header = header
	return req, nil
}

// encodeBody encodes the body argument in the operation's media type.
func (c *call) encodeBody(v any) ([]byte, error) {
	if s, ok := v.(string); ok && strings.HasPrefix(c.media, "text/") {
		return []byte(s), nil
	}
	return json.Marshal(v)
}

// authorize adds the API key or bearer token.
func (c *caller) authorize(h http.Header, u *url.URL) {
	switch c.auth.Type {
	case config.AuthBearer:
		h.Set("Authorization", "Bearer "+c.key)
	case config.AuthAPIKey:
		if c.auth.In == "query" {
			q := u.Query()
			q.Set(c.auth.Name, c.key)
			u.RawQuery = q.Encode()
		} else {
			h.Set(c.auth.Name, c.key)
		}
	}
}

// mergeQuery adds b's values to a's.
func mergeQuery(a, b url.Values) url.Values {
	for k, vs := range b {
		a[k] = append(a[k], vs...)
	}
	return a
}

// scalar renders a parameter's value: strings as they are, other scalars
// as JSON writes them, arrays comma-separated, objects as JSON.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = scalar(e)
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// response turns an HTTP response into a result: an image as an image,
// anything else as text; a status of 400 or more is an error result that
// says the status. Details hold the request (never its credentials), the
// status and the content type.
func (c *call) response(resp *http.Response, body []byte) tool.Result {
	ct := resp.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	cut := len(body) > maxBytes
	if cut {
		body = body[:maxBytes]
	}
	var res tool.Result
	switch {
	case resp.StatusCode < 400 && strings.HasPrefix(media, "image/") && !cut:
		res = tool.Image(fmt.Sprintf("HTTP %s, %s", resp.Status, media), body, media)
	case len(body) == 0:
		res = tool.Textf("HTTP %s (no body)", resp.Status)
	case !utf8.Valid(body) && !cut:
		res = tool.Textf("HTTP %s: %d bytes of %s, binary, not shown", resp.Status, len(body), cmp.Or(media, "an unnamed type"))
	case resp.StatusCode >= 400:
		res = tool.Textf("HTTP %s\n%s", resp.Status, body)
	default:
		res = tool.Text(string(body))
	}
	if cut {
		res.Content[0].Text += fmt.Sprintf("\n[the response was cut at %d bytes]", maxBytes)
	}
	res.IsError = resp.StatusCode >= 400
	res.Details = map[string]any{"method": c.op.Method, "path": c.op.Path, "status": resp.StatusCode, "contentType": media, "cut": cut}
	return res
}
