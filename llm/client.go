package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolbelt/toolbelt/internal/retry"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/provider"
)

// Client streams model responses from one provider.
type Client interface {
	// Provider describes the provider and its quirks.
	Provider() Provider
	// Model is the model requests go to by default.
	Model() string
	// Target is the tool-definition format and schema dialect requests
	// take (for provider.Exporter).
	Target() provider.Target
	// Stream sends req and streams the response to on (which may be nil).
	// The returned message is complete on success; on failure it holds
	// what arrived (without tool calls) and says why in ErrorMessage.
	Stream(ctx context.Context, req Request, on func(Event)) (Message, error)
}

// Options configure a client.
type Options struct {
	// BaseURL overrides the provider's endpoint: for OpenAI-style servers
	// http://host:port/v1, for Anthropic and Gemini http://host:port (the
	// value each official SDK takes).
	BaseURL string
	// APIKey overrides the key from the provider's environment variables.
	APIKey string
	// Headers are added to every request.
	Headers map[string]string
	// HTTP is the HTTP client (default: one without a timeout; streams
	// end with their context).
	HTTP *http.Client
	// Retry is the retry policy (default: DefaultRetry).
	Retry *Retry
	// MaxTokens is the default bound on a response (default 8192).
	MaxTokens int
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Price, when set, makes each response's usage carry its cost.
	Price *Price
	// IdleTimeout ends a response stream that sends nothing for this long
	// (default 5 minutes; models may think a while before the first byte).
	IdleTimeout time.Duration
}

// Retry is when and how often a failed request is sent again: on 429,
// 5xx, overload and connection errors, before any of the response
// arrived, after a delay of Base·2ⁿ with full jitter (at most Max), or as
// long as the server's Retry-After says when that is at most MaxWait.
type Retry struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
	MaxWait  time.Duration
}

// DefaultRetry is the default retry policy.
var DefaultRetry = Retry{Attempts: 4, Base: 500 * time.Millisecond, Max: 20 * time.Second, MaxWait: 60 * time.Second}

// New returns a client for spec, "PROVIDER/MODEL" (anthropic/claude-sonnet-4-5,
// openai/gpt-4o, openai-responses/gpt-5.1, google/gemini-2.5-pro,
// ollama/llama3.2, mistral/…).
func New(spec string, opts Options) (Client, error) {
	name, model, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok || name == "" || model == "" {
		return nil, fmt.Errorf("model %q: write it as PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5 (providers: %s)", spec, strings.Join(ProviderNames(), ", "))
	}
	p, ok := LookupProvider(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q in model %q: use one of %s", name, spec, strings.Join(ProviderNames(), ", "))
	}
	return NewClient(p, model, opts)
}

// NewClient returns a client for a provider (one of Providers, or one
// configured by hand) and model.
func NewClient(p Provider, model string, opts Options) (Client, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key := opts.APIKey
	for _, v := range p.KeyEnv {
		if key == "" {
			key = getenv(v)
		}
	}
	if key == "" && p.KeyRequired && opts.BaseURL == "" {
		return nil, fmt.Errorf("provider %s needs an API key: set %s", p.Name, strings.Join(p.KeyEnv, " or "))
	}
	base := strings.TrimRight(cmpOr(opts.BaseURL, p.BaseURL), "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("base URL %q: give an http:// or https:// URL", base)
	}
	target, err := provider.ParseTarget(p.Target())
	if err != nil {
		return nil, err
	}
	c := &client{p: p, model: model, key: key, base: base, headers: opts.Headers, http: opts.HTTP, retry: DefaultRetry, maxTokens: cmpInt(opts.MaxTokens, 8192), target: target}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if opts.Retry != nil {
		c.retry = *opts.Retry
	}
	c.price = opts.Price
	c.oauth = p.API == APIAnthropic && (p.Quirks.OAuth || strings.HasPrefix(key, oauthKeyPrefix))
	c.idle = opts.IdleTimeout
	if c.idle <= 0 {
		c.idle = 5 * time.Minute
	}
	switch p.API {
	case APIAnthropic:
		c.wire = anthropicWire{}
	case APIOpenAIChat:
		c.wire = chatWire{}
	case APIOpenAIResponses:
		c.wire = responsesWire{}
	case APIGemini:
		c.wire = geminiWire{}
	default:
		return nil, fmt.Errorf("provider %s: unknown API %d", p.Name, p.API)
	}
	return c, nil
}

func cmpInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// wire is one API's wire format.
type wire interface {
	// request returns the request's URL path (after the base URL), its
	// headers and its body, encoded (see object).
	request(c *client, req Request) (path string, hdr http.Header, body []byte, err error)
	// read reads the response stream into a; it returns nil once the
	// provider said the response is complete, and the stop reason.
	read(s *sseReader, a *assembler) (stop string, err error)
	// apiError reads an error body: its code and message.
	apiError(body []byte) (code, msg string)
}

type client struct {
	p         Provider
	model     string
	key       string
	base      string
	headers   map[string]string
	http      *http.Client
	retry     Retry
	maxTokens int
	target    provider.Target
	wire      wire
	price     *Price
	idle      time.Duration
	// oauth: an Anthropic OAuth session (see Quirks.OAuth).
	oauth bool
	// tools is the last tool list as it went on the wire.
	tools wireTools
	// chatMsgs are the last Chat Completions request's messages, encoded.
	chatMsgs encodedList[chatMessage]
	// anthropicMsgs are the last Messages request's messages, encoded.
	anthropicMsgs encodedList[anthropicMessage]
	// lastSize is the length of the last request's body.
	lastSize atomic.Int64
	// spare is the buffer of a request body nothing reads any more, for
	// the next request's (see requestBody).
	spare atomic.Pointer[[]byte]
}

// buffer returns an empty buffer for a request's body: the spare one, or
// one the size of the last body and room for a turn's messages.
func (c *client) buffer() []byte {
	if b := c.spare.Swap(nil); b != nil {
		return (*b)[:0]
	}
	return make([]byte, 0, int(c.lastSize.Load())+8<<10)
}

// requestBody is a request's body, whose buffer goes back to its client
// (spare) once nothing reads it: the client is done with the request, and
// the transport has closed every reader of it that it was given (a
// transport may close one after RoundTrip returned). A turn of the agent
// loop allocated a body as long as the conversation, 40% of what it
// allocated (see bench/HISTORY.md, "The agent loop's messages, encoded
// once").
type requestBody struct {
	c    *client
	b    []byte
	refs atomic.Int32
}

func newRequestBody(c *client, b []byte) *requestBody {
	r := &requestBody{c: c, b: b}
	r.refs.Store(1) // the client's, until done
	return r
}

// done says the client is done with the body.
func (r *requestBody) done() {
	if r.refs.Add(-1) == 0 {
		r.c.spare.Store(&r.b)
	}
}

// reader returns a reader of the body, which holds it until closed.
func (r *requestBody) reader() io.ReadCloser {
	r.refs.Add(1)
	return &bodyReader{r: bytes.NewReader(r.b), body: r}
}

// bodyReader reads a request's body. A transport may read a body after
// closing it, from another goroutine (HTTP/2 does, golang/go#71782):
// reads and the close take mu, so the buffer goes back to the client only
// after the last read has returned, and a read after the close reads
// nothing.
type bodyReader struct {
	mu     sync.Mutex
	r      *bytes.Reader
	body   *requestBody
	closed bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, fs.ErrClosed
	}
	return r.r.Read(p)
}

func (r *bodyReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.body.done()
	}
	return nil
}

// field is a request body's field: a value already encoded, one to
// encode (v), or one that encodes itself into the body (write).
type field struct {
	name  string
	value []byte
	v     any
	write func(*bytes.Buffer) error
}

// object encodes a request body: head (a struct of the request's small
// fields) and then fields, in order. Values already encoded — the tool
// list, encoded once per tool set — go into every request as they are,
// without being parsed or copied again; those to encode are encoded into
// the body itself, and those that write themselves (the messages, see
// encodedList) write into it. Fields without a value are left out. The
// order keeps a conversation's requests byte-identical up to the messages,
// which come last, so providers' prefix caches hit. The body is written
// into buf (an empty buffer: see client.buffer).
//
// Why not json.Marshal of one struct or map: encoding/json compacts and
// re-validates every json.RawMessage it writes, and the standard tools'
// declarations are 24 KB or more, sent every turn: that was 14–15% of the
// agent loop's CPU (encoding/json.appendCompact in bench/loop's profiles,
// 2026-11-30), and is 1.7% with this (see bench/HISTORY.md, "The agent
// loop").
func object(buf []byte, head any, fields ...field) ([]byte, error) {
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	n := len(h)
	for _, f := range fields {
		n += len(f.name) + len(f.value) + 4
	}
	b := bytes.NewBuffer(buf)
	b.Grow(n)
	b.Write(h[:len(h)-1])
	enc := json.NewEncoder(b)
	for _, f := range fields {
		if len(f.value) == 0 && f.v == nil && f.write == nil {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(f.name)
		b.WriteString(`":`)
		if f.write != nil {
			if err := f.write(b); err != nil {
				return nil, err
			}
			continue
		}
		if f.v == nil {
			b.Write(f.value)
			continue
		}
		if err := enc.Encode(f.v); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodedList keeps the messages of a client's last request, each as it
// went on the wire: a conversation's next request starts with the same
// messages, whose encoding is copied instead of made again, and only the
// messages after them are encoded. same says whether two messages encode
// alike; it must compare every field of T.
//
// Why: the transcript grows by a turn's messages at every turn, and
// encoding all of it again (each tool result's text escaped anew) was
// the largest part of building a Chat Completions request (see
// bench/HISTORY.md, "The agent loop's messages, encoded once").
type encodedList[T any] struct {
	mu   sync.Mutex
	msgs []T
	// enc is msgs encoded, comma-separated, without brackets; ends[i] is
	// its length up to the end of msgs[i].
	enc  []byte
	ends []int
}

// write writes msgs as a JSON array to b, as json.Encoder writes it.
func (l *encodedList[T]) write(b *bytes.Buffer, msgs []T, same func(a, b *T) bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := 0
	for k < len(msgs) && k < len(l.msgs) && same(&msgs[k], &l.msgs[k]) {
		k++
	}
	l.msgs = append(l.msgs[:k], msgs[k:]...)
	l.ends = l.ends[:k]
	l.enc = l.enc[:0]
	if k > 0 {
		l.enc = l.enc[:l.ends[k-1]]
	}
	for i := k; i < len(msgs); i++ {
		m, err := json.Marshal(&msgs[i])
		if err != nil {
			l.msgs, l.ends, l.enc = l.msgs[:0], l.ends[:0], l.enc[:0]
			return err
		}
		if i > 0 {
			l.enc = append(l.enc, ',')
		}
		l.enc = append(l.enc, m...)
		l.ends = append(l.ends, len(l.enc))
	}
	b.WriteByte('[')
	b.Write(l.enc)
	b.WriteByte(']')
	return nil
}

// hasTools says whether a request offers tools.
func hasTools(tools json.RawMessage) bool { return len(tools) > 0 && string(tools) != "[]" }

// wireTools keeps the last tool list a client was given and what it made
// of it for the wire (Anthropic's: renamed for OAuth sessions, its last
// tool marked for the prompt cache): the requests of a conversation carry
// the same list, which is worked on once.
type wireTools struct {
	mu   sync.Mutex
	in   []byte
	list wireList
}

// wireList is a tool list as it goes on the wire.
type wireList struct {
	out []byte
	// names are the names tools go out as, where they differ from their
	// own; back maps them back.
	names, back map[string]string
}

// get returns what build makes of tools, made again only when tools are
// not the last ones.
func (w *wireTools) get(tools []byte, build func([]byte) wireList) wireList {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.in == nil || !bytes.Equal(w.in, tools) {
		w.list = build(tools)
		w.in = bytes.Clone(tools) // a caller may reuse its buffer
	}
	return w.list
}

func (c *client) Provider() Provider      { return c.p }
func (c *client) Model() string           { return c.model }
func (c *client) Target() provider.Target { return c.target }

func (c *client) Stream(ctx context.Context, req Request, on func(Event)) (Message, error) {
	if req.Model == "" {
		req.Model = c.model
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = c.maxTokens
	}
	a := newAssembler(c.p.Name, req.Model, on)
	a.price = c.price
	if c.oauth {
		l := c.tools.get(req.Tools, c.anthropicTools)
		req.wireNames, a.names = l.names, l.back
	}
	fail := func(err error) (Message, error) {
		if ctx.Err() != nil {
			err = abortError{err}
		}
		return a.finish("", err), err
	}
	path, hdr, b, err := c.wire.request(c, req)
	if err != nil {
		return fail(fmt.Errorf("encoding the request: %w", err))
	}
	c.lastSize.Store(int64(len(b)))
	body := newRequestBody(c, b)
	defer body.done()
	for attempt := 1; ; attempt++ {
		// A stream that goes quiet for too long is given up, by cancelling
		// the request; the caller's context stays as it was.
		rctx, cancel := context.WithCancel(ctx)
		watch := time.AfterFunc(c.idle, cancel)
		resp, err := c.post(rctx, c.base+path, hdr, body)
		if err != nil {
			fired := !watch.Stop()
			cancel()
			if fired && ctx.Err() == nil {
				err = fmt.Errorf("%s: no response for %s", c.p.Name, c.idle)
			}
			return fail(err)
		}
		sse := newSSE(idleReader{resp.Body, watch, c.idle})
		stop, err := c.wire.read(sse, a)
		sse.release()
		fired := !watch.Stop()
		resp.Body.Close()
		cancel()
		if err != nil && fired && ctx.Err() == nil {
			err = fmt.Errorf("%s: the response stream sent nothing for %s; gave up", c.p.Name, c.idle)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil // finish reports an incomplete stream
		}
		if err == nil && !a.done {
			err = ErrIncomplete
		}
		if err == nil {
			return a.finish(stop, nil), nil
		}
		// An overload reported inside the stream, before anything of the
		// response arrived, is retried like a 529.
		var ae *APIError
		if errors.As(err, &ae) && streamRetryable(ae.Code) && len(a.msg.Content) == 0 && attempt < c.retry.Attempts && ctx.Err() == nil {
			t := time.NewTimer(retry.Backoff(c.retry.Base, c.retry.Max, attempt))
			select {
			case <-ctx.Done():
				t.Stop()
				return fail(ctx.Err())
			case <-t.C:
			}
			continue
		}
		return fail(err)
	}
}

// idleReader restarts the idle timer on every read that returns data.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.timer.Reset(r.idle)
	}
	return n, err
}

// streamRetryable says whether an error event inside a stream may succeed
// when the request is sent again.
func streamRetryable(code string) bool {
	switch code {
	case "overloaded_error", "api_error", "rate_limit_error", "server_error", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "INTERNAL":
		return true
	}
	return false
}

// APIError is an error response from a provider.
type APIError struct {
	Provider string
	// Status is the HTTP status; 0 for an error event inside a stream.
	Status  int
	Code    string
	Message string
	// Attempts is how many times the request was sent.
	Attempts int
	// Overflow says the request did not fit the model's context window.
	Overflow bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Provider)
	if e.Overflow {
		b.WriteString("the conversation is too long for the model's context window: ")
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d ", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, "%s: ", e.Code)
	}
	b.WriteString(cmpOr(e.Message, http.StatusText(e.Status)))
	if e.Attempts > 1 {
		b.WriteString(afterAttempts(e.Attempts))
	}
	return b.String()
}

// afterAttempts says how many times a request was sent: " (after 1 attempt)",
// " (after 3 attempts)".
func afterAttempts(attempts int) string {
	if attempts == 1 {
		return " (after 1 attempt)"
	}
	return fmt.Sprintf(" (after %d attempts)", attempts)
}

// Is makes errors.Is(err, ErrContextOverflow) hold for overflows.
func (e *APIError) Is(target error) bool { return target == ErrContextOverflow && e.Overflow }

// ErrContextOverflow is what errors.Is finds for a request that did not fit
// the model's context window.
var ErrContextOverflow = errors.New("context window exceeded")

// post sends a request, retrying as c.retry says.
func (c *client) post(ctx context.Context, url string, hdr http.Header, body *requestBody) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return nil, err
		}
		req.Body, req.ContentLength = body.reader(), int64(len(body.b))
		req.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
		req.Header = hdr.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		resp, err := c.http.Do(req)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if attempt >= c.retry.Attempts {
				return nil, fmt.Errorf("%s: %w%s", c.p.Name, err, afterAttempts(attempt))
			}
		case resp.StatusCode/100 == 2:
			return resp, nil
		default:
			raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			e := c.apiError(resp.StatusCode, raw)
			e.Attempts = attempt
			if e.Overflow || !retryable(resp.StatusCode, e.Code) || attempt >= c.retry.Attempts {
				return nil, e
			}
			if after, ok := retry.After(resp.Header, time.Now()); ok {
				if after > c.retry.MaxWait {
					e.Message += fmt.Sprintf(" (the provider asks to wait %s before retrying)", after.Round(time.Second))
					return nil, e
				}
				wait = after
			}
		}
		if wait == 0 {
			wait = retry.Backoff(c.retry.Base, c.retry.Max, attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// apiError reads an error response.
func (c *client) apiError(status int, raw []byte) *APIError {
	code, msg := c.wire.apiError(raw)
	if msg == "" {
		msg = textclip.Clip(strings.TrimSpace(string(raw)), 500)
	}
	e := &APIError{Provider: c.p.Name, Status: status, Code: code, Message: msg}
	e.Overflow = c.p.overflow(status, code, msg)
	return e
}

// retryable says whether a status (and error code) may succeed later.
func retryable(status int, code string) bool {
	if code == "insufficient_quota" || code == "billing_hard_limit_reached" {
		return false
	}
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status == 529 || status >= 500
}
