package dir

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/tool"
)

// An interactive handler (metadata "interactive": true) asks the caller's
// side while it runs: it writes a request line on standard error —
//
//	{"elicit": {"message": "…", "requestedSchema": {"type": "object", "properties": {…}}}}
//	{"sample": {"messages": [{"role": "user", "text": "…"}], "maxTokens": 100}}
//
// — and reads the answer as the next line of its standard input, which
// stays open (the call's request is its first line): a reply
// {"action": "accept", "content": {…}} (or "decline", "cancel"), a
// completion {"role": "assistant", "text": "…", "model": "…"}, or
// {"error": "…"} saying why there is none (the configuration forbids it,
// nobody can answer here, the request was malformed).

// requestLine is a request line of an interactive handler.
type requestLine struct {
	Elicit *interact.Form   `json:"elicit"`
	Sample *interact.Prompt `json:"sample"`
}

// parseRequest reads a request line.
func parseRequest(line string) (requestLine, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, `{"elicit"`) && !strings.HasPrefix(line, `{"sample"`) {
		return requestLine{}, false
	}
	var r requestLine
	if err := json.Unmarshal([]byte(line), &r); err != nil || (r.Elicit == nil) == (r.Sample == nil) {
		return requestLine{}, false
	}
	return r, true
}

// conversation is the standard input of an interactive handler's run: its
// request, then the answers to its requests.
type conversation struct {
	in, out *os.File // the handler's end, and ours
	client  interact.Client
}

// converse opens the handler's standard input, writing the request in as
// its first line; client answers its requests (nil: none is answered).
func converse(in []byte, client interact.Client) (*conversation, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c := &conversation{in: r, out: w, client: client}
	// A request bigger than the pipe's buffer is written while the handler
	// reads it.
	go func() { _, _ = w.Write(append(in, '\n')) }()
	return c, nil
}

// answer answers one request line of the handler with a line on its
// standard input.
func (c *conversation) answer(ctx context.Context, req requestLine) {
	var reply any
	var err error
	switch {
	case c.client == nil:
		err = fmt.Errorf("%w: this tool was not given a way to ask (it runs outside a front door that answers)", interact.ErrUnsupported)
	case req.Elicit != nil:
		reply, err = c.client.Elicit(ctx, *req.Elicit)
	default:
		reply, err = c.client.Sample(ctx, *req.Sample)
	}
	if err != nil {
		reply = map[string]string{"error": err.Error()}
	}
	b, _ := json.Marshal(reply)
	// A handler that asks and does not read its answers must not hold the
	// call (whose end waits for this line of its standard error) once the
	// pipe is full: the answer is dropped after a while, or at the call's end.
	deadline := time.Now().Add(answerWithin)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.out.SetWriteDeadline(deadline)
	_, _ = c.out.Write(append(b, '\n'))
}

// answerWithin is how long an answer waits for a handler that does not
// read its standard input.
const answerWithin = 30 * time.Second

// close ends the conversation once the handler has exited.
func (c *conversation) close() {
	_ = c.in.Close()
	_ = c.out.Close()
}

// clientOf is the Client that answers the requests of calls in tc.
func clientOf(tc *tool.Context) interact.Client {
	c, _ := interact.Service.Get(tc)
	return c
}
