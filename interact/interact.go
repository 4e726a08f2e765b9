// Package interact lets a tool, while its call runs, ask the side that
// made the call for input — a form the person fills in (elicitation) — or
// for a model's completion (sampling).
//
// Who answers is the front door's business, as for ask_user: the MCP
// server asks its connected client when the client declared the
// capability; the CLI and the agent loop ask the person at the terminal
// and the configured model provider. The front door sets a [Client] on the
// tool context ([Service]); a tool's factory reads it when the tool is
// registered for that context. Every Client set there is wrapped by
// [Govern]: the configuration's [Rules] (toolRequests in toolbelt.yaml)
// can forbid either kind of request, and every request is recorded in the
// audit record of the call that made it (what was asked, never the
// answer's values).
package interact

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/tool"
)

// Form asks the person for input: a message and the fields wanted, as a
// flat JSON Schema object (MCP's form-mode elicitation: properties of
// type string, number, integer or boolean, enums, defaults). In url mode
// (MCP's url-mode elicitation) it has no fields: the person is sent to
// URL to do something there (sign in, pay, consent) out of band, and
// says whether they did; nothing they enter there passes through
// Toolbelt.
type Form struct {
	Message string         `json:"message"`
	Schema  map[string]any `json:"requestedSchema"`
	// Mode is ModeForm (the default when empty) or ModeURL.
	Mode string `json:"mode,omitempty"`
	// URL is where a url-mode request sends the person (http or https).
	URL string `json:"url,omitempty"`
	// ID identifies a url-mode request (MCP's elicitationId).
	ID string `json:"elicitationId,omitempty"`
	// Completed, when set, is closed once whoever made a url-mode request
	// says the person completed it there (MCP's
	// notifications/elicitation/complete): nobody needs to wait for the
	// person to say so.
	Completed <-chan struct{} `json:"-"`
}

// The modes of a Form.
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// Reply is the person's answer to a Form.
type Reply struct {
	// Action is "accept" (Content holds the fields), "decline" or
	// "cancel".
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	// By says who answered ("mcp client claude-code", "terminal").
	By string `json:"by,omitempty"`
}

// The actions of a Reply.
const (
	Accept  = "accept"
	Decline = "decline"
	Cancel  = "cancel"
)

// Message is one message of a Prompt.
type Message struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	Text string `json:"text"`
}

// Prompt asks for a model's completion (MCP's sampling/createMessage).
type Prompt struct {
	Messages     []Message `json:"messages"`
	SystemPrompt string    `json:"systemPrompt,omitempty"`
	// MaxTokens bounds the completion (required by MCP; 0 is taken as
	// DefaultMaxTokens).
	MaxTokens     int      `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

// DefaultMaxTokens bounds a completion whose Prompt names no bound.
const DefaultMaxTokens = 1024

// Completion is a model's answer to a Prompt.
type Completion struct {
	Role       string `json:"role"`
	Text       string `json:"text"`
	Model      string `json:"model,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// By says who answered ("mcp client claude-code", "provider openai").
	By string `json:"by,omitempty"`
}

// Client answers a tool's requests. Both methods return when the answer
// comes, or when ctx ends (with ctx's error).
type Client interface {
	Elicit(ctx context.Context, f Form) (Reply, error)
	Sample(ctx context.Context, p Prompt) (Completion, error)
}

// Service is the key of the Client a tool context carries.
var Service = tool.NewService[Client]()

// ErrUnsupported matches the error of a Client that cannot make a kind of
// request here (an MCP client without the capability and no fallback, a
// CLI run without a terminal or without a model); its message says why.
var ErrUnsupported = errors.New("nobody can answer this request here")

// ErrHandedOver matches the error of a Client that handed the request to
// a client that answers it when it makes the call again (an MCP client on
// a protocol that has servers ask in rounds): this run of the call ends
// without the answer, and its result is not used.
var ErrHandedOver = errors.New("the request was handed to the client, which makes the call again with the answer")

// ErrForbidden matches the error of a request the configuration forbids
// (toolRequests in toolbelt.yaml).
var ErrForbidden = errors.New("forbidden by toolRequests in toolbelt.yaml")

// Kinds of request, as rules and audit records name them.
const (
	KindElicitation = "elicitation"
	KindSampling    = "sampling"
)

// Rules say which requests tools may make: each is "allow" (the default
// when empty) or "deny".
type Rules struct {
	Elicitation string
	Sampling    string
}

// allows reports whether the rules allow kind.
func (r Rules) allows(kind string) bool {
	v := r.Elicitation
	if kind == KindSampling {
		v = r.Sampling
	}
	return v != "deny"
}

// Govern returns c under rules: a request they forbid fails with
// ErrForbidden without reaching c, and every request — forbidden,
// answered or failed — is recorded in the audit record of the call whose
// context it is made in (see WithRecorder). A nil c answers every request
// with ErrUnsupported.
func Govern(c Client, rules Rules) Client { return &governed{c: c, rules: rules} }

type governed struct {
	c     Client
	rules Rules
}

func (g *governed) Elicit(ctx context.Context, f Form) (r Reply, err error) {
	rec := audit.Request{Kind: KindElicitation, Message: audit.RedactText(cut(f.Message)), Fields: fields(f.Schema)}
	if f.Mode == ModeURL {
		// The address's host only: its path and query may carry tokens.
		rec.Mode = ModeURL
		if u, err := url.Parse(f.URL); err == nil {
			rec.Host = u.Hostname()
		}
	}
	err = g.request(ctx, rec, checkForm(f), "input", func(rec *audit.Request) error {
		r, err = g.c.Elicit(ctx, f)
		rec.Outcome, rec.By = r.Action, r.By
		if err != nil && f.Mode == ModeURL && f.URL != "" {
			err = &urlHidden{err, strings.ReplaceAll(err.Error(), f.URL, "the address at "+rec.Host)}
		}
		return err
	})
	return r, err
}

// urlHidden is an error whose text names a url-mode request's address by
// its host only, as the audit record does.
type urlHidden struct {
	err  error
	text string
}

func (e *urlHidden) Error() string { return e.text }
func (e *urlHidden) Unwrap() error { return e.err }

func (g *governed) Sample(ctx context.Context, p Prompt) (c Completion, err error) {
	rec := audit.Request{Kind: KindSampling, MaxTokens: p.MaxTokens}
	if n := len(p.Messages); n > 0 {
		rec.Message = audit.RedactText(cut(p.Messages[n-1].Text))
	}
	err = g.request(ctx, rec, checkPrompt(p), "a completion", func(rec *audit.Request) error {
		c, err = g.c.Sample(ctx, p)
		rec.Outcome, rec.By, rec.Model = "completed", c.By, c.Model
		return err
	})
	return c, err
}

// request governs one request for what (input, a completion) and records
// it: invalid (the request's own problem) or a kind the rules deny fails
// without reaching the client, as does a request no client can answer;
// otherwise ask makes it and fills in who answered and how. The record's
// outcome says how it ended.
func (g *governed) request(ctx context.Context, rec audit.Request, invalid error, what string, ask func(*audit.Request) error) error {
	err := invalid
	switch {
	case err != nil:
		rec.Outcome, rec.Reason = "invalid", err.Error()
	case !g.rules.allows(rec.Kind):
		rec.Outcome, rec.Reason = "denied", "toolRequests."+rec.Kind+" is deny"
		err = fmt.Errorf("asking for %s: %w (toolRequests.%s: deny)", what, ErrForbidden, rec.Kind)
	case g.c == nil:
		err = fmt.Errorf("%w: no front door answers requests for %s", ErrUnsupported, what)
		rec.Outcome, rec.Reason = "unsupported", err.Error()
	default:
		err = ask(&rec)
		switch {
		case errors.Is(err, ErrHandedOver):
			rec.Outcome, rec.By, rec.Model = "handed-over", "", ""
		case errors.Is(err, ErrUnsupported):
			rec.Outcome, rec.Reason, rec.By, rec.Model = "unsupported", err.Error(), "", ""
		case err != nil:
			rec.Outcome, rec.Reason, rec.By, rec.Model = "failed", err.Error(), "", ""
		}
	}
	Record(ctx, rec)
	return err
}

// checkForm refuses a form a person could not fill in: no message, or a
// schema that is not an object of properties.
func checkForm(f Form) error {
	if strings.TrimSpace(f.Message) == "" {
		return errors.New("a request for input needs a message saying what is asked")
	}
	switch f.Mode {
	case "", ModeForm:
	case ModeURL:
		return checkURL(f)
	default:
		return fmt.Errorf("a request for input has mode %q: use form or url", f.Mode)
	}
	if f.Schema == nil {
		return nil
	}
	if t, _ := f.Schema["type"].(string); t != "object" {
		return fmt.Errorf(`a request for input's schema must be {"type": "object", "properties": {…}}, not type %q`, f.Schema["type"])
	}
	if p, ok := f.Schema["properties"]; ok {
		if _, ok := p.(map[string]any); !ok {
			return errors.New(`a request for input's schema has "properties" that is not an object`)
		}
	}
	return nil
}

// checkURL refuses a url-mode request a person should not be sent to:
// an address that is not an absolute http or https URL, or one with a
// user name or password in it; or one that also asks for fields.
func checkURL(f Form) error {
	u, err := url.Parse(f.URL)
	switch {
	case f.URL == "":
		return errors.New("a url-mode request for input needs the url the person is sent to")
	case err != nil:
		return fmt.Errorf("a url-mode request's url does not parse: %v", err)
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return fmt.Errorf("a url-mode request's url must be an absolute http or https address, not %s://%s…", u.Scheme, u.Host)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("a url-mode request's url is plain http to %s: a person is sent there to sign in or pay, so use https (plain http only to this machine's loopback)", u.Hostname())
	case u.User != nil:
		return errors.New("a url-mode request's url holds a user name or password: refused")
	case f.Schema != nil:
		return errors.New("a url-mode request asks for no fields: leave out its schema")
	}
	return nil
}

// loopback says whether host is this machine's loopback.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkPrompt refuses a prompt without messages, or with a role other than
// user or assistant.
func checkPrompt(p Prompt) error {
	if len(p.Messages) == 0 {
		return errors.New("a request for a completion needs at least one message")
	}
	for i, m := range p.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("message %d of a request for a completion has role %q: use user or assistant", i, m.Role)
		}
	}
	if p.MaxTokens < 0 || p.MaxTokens > MaxSampleTokens {
		return fmt.Errorf("maxTokens is %d: give a number from 1 to %d, or leave it out", p.MaxTokens, MaxSampleTokens)
	}
	return nil
}

// MaxSampleTokens is the most tokens one request for a completion may ask
// for: a tool or an imported server spends the caller's model, and a
// request must not spend it without bound.
const MaxSampleTokens = 8192

// fields returns the names of a form's fields, sorted.
func fields(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// cut bounds what an audit record keeps of a message.
func cut(s string) string { return content.Head(s, 500, "…") }

type recorderKey struct{}

// WithRecorder returns ctx carrying where the call whose context it is
// records its requests (the pipeline keeps them for the call's audit
// record).
func WithRecorder(ctx context.Context, record func(audit.Request)) context.Context {
	return context.WithValue(ctx, recorderKey{}, record)
}

// Record records r in the audit record of the call whose context ctx is;
// a request made outside the pipeline has none, and it is dropped.
func Record(ctx context.Context, r audit.Request) {
	if record, _ := ctx.Value(recorderKey{}).(func(audit.Request)); record != nil {
		record(r)
	}
}
