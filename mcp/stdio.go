package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/internal/randid"
)

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// In and Out are the client's channel (default os.Stdin and os.Stdout).
	In  io.Reader
	Out io.Writer
	// MaxLineBytes bounds one message, a line of JSON (default 4 MiB). A
	// longer line is skipped and answered with an error; the session goes on.
	MaxLineBytes int
	// Grace is how long calls in flight have to finish once ctx is
	// cancelled (default 10s); then they are cancelled.
	Grace time.Duration
}

// Defaults of StdioOptions.
const (
	DefaultMaxLineBytes = 4 << 20
	DefaultGrace        = 10 * time.Second
)

// ServeStdio serves one client over a byte stream — stdin and stdout by
// default — until the client's input ends or ctx is cancelled.
//
// The stream is read line by line and each line checked before the SDK
// sees it: a line that is not valid UTF-8, not JSON, not a JSON-RPC
// message, or longer than the limit is answered with a JSON-RPC error
// (-32700 parse error, or -32600 invalid request) and the session goes on.
// When the input ends, every request read so far is still answered before
// ServeStdio returns; when ctx is cancelled, no more requests are read and
// those in flight have the grace period to finish.
func (s *Server) ServeStdio(ctx context.Context, o StdioOptions) error {
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	conn := newLineConn(o.In, o.Out, o.MaxLineBytes, s.opts.Logger)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		conn.drain()
		t := time.NewTimer(o.Grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			s.opts.Logger.Warn("calls still running after the grace period are cancelled", "grace", o.Grace)
			cancel()
		}
	}()
	err := s.sdk.Run(runCtx, transportFunc(func(context.Context) (sdk.Connection, error) { return conn, nil }))
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return err
}

// transportFunc is a Transport that returns a ready connection.
type transportFunc func(context.Context) (sdk.Connection, error)

func (f transportFunc) Connect(ctx context.Context) (sdk.Connection, error) { return f(ctx) }

// lineConn is a newline-delimited JSON-RPC connection that checks every
// line before the SDK sees it, answers bad ones itself, and delays the end
// of input until every request read has been answered.
type lineConn struct {
	id  string
	log *slog.Logger
	in  io.Reader

	wmu sync.Mutex // serializes writes to out
	out io.Writer

	incoming chan jsonrpc.Message // from the read loop; closed when input ends
	drainReq chan struct{}        // closed to stop taking new messages
	drainOne sync.Once
	closed   chan struct{}
	closeOne sync.Once

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // the client's requests not yet answered: true when the end of input waits for the answer (see awaited)
	outgoing map[jsonrpc.ID]bool // our requests the client has not answered
	ended    bool                // no more input will be taken
	madeUp   []jsonrpc.Message   // responses to our requests, made up once the input ended
	wake     chan struct{}       // nudges Read when the state above changes
}

func newLineConn(in io.Reader, out io.Writer, maxLine int, log *slog.Logger) *lineConn {
	c := &lineConn{
		id: randid.New("stdio-", 8), log: log, in: in, out: out,
		incoming: make(chan jsonrpc.Message), drainReq: make(chan struct{}), closed: make(chan struct{}),
		pending: map[jsonrpc.ID]bool{}, outgoing: map[jsonrpc.ID]bool{}, wake: make(chan struct{}, 1),
	}
	go c.readLoop(maxLine)
	return c
}

// SessionID names the stdio session, so that its calls can be told apart
// from another process's in the audit log.
func (c *lineConn) SessionID() string { return c.id }

// readLoop reads lines, answers the bad ones, and hands the good ones to
// Read.
func (c *lineConn) readLoop(maxLine int) {
	defer close(c.incoming)
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, tooLong, err := readLine(br, maxLine)
		if tooLong {
			c.reject(nil, jsonrpc.CodeParseError, fmt.Sprintf("message longer than %d bytes: it was skipped (the limit is mcp.maxMessageBytes)", maxLine))
		} else if msg := c.check(line); msg != nil {
			select {
			case c.incoming <- msg:
			case <-c.drainReq:
				c.forget(msg)
				return
			case <-c.closed:
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.log.Warn("reading the MCP client's input", "err", err)
			}
			return
		}
	}
}

// readLine reads one line without its end. A line longer than max is read
// to its end and dropped: tooLong is set and line is nil.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // the line end does not count
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > max {
			return nil, true, err
		}
		return line, false, err
	}
}

// check returns the message a line holds, or answers it with an error and
// returns nil. Blank lines are skipped.
func (c *lineConn) check(line []byte) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if !utf8.Valid(line) {
		c.reject(lineID(line), jsonrpc.CodeParseError, fmt.Sprintf("message is not valid UTF-8 (first bad byte at offset %d)", firstInvalid(line)))
		return nil
	}
	if !json.Valid(line) {
		c.reject(nil, jsonrpc.CodeParseError, "message is not valid JSON: "+jsonError(line))
		return nil
	}
	if line[0] == '[' {
		c.reject(nil, jsonrpc.CodeInvalidRequest, batchRefused("line"))
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.reject(lineID(line), jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message: "+err.Error())
		return nil
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		m.Params = liftTask(m.Method, m.Params)
		if !m.IsCall() {
			break
		}
		c.mu.Lock()
		_, dup := c.pending[m.ID]
		if !dup {
			c.pending[m.ID] = awaited(m.Method)
		}
		c.mu.Unlock()
		if dup {
			c.reject(lineID(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("request id %v is already in use by a request in flight", m.ID.Raw()))
			return nil
		}
	case *jsonrpc.Response:
		c.mu.Lock()
		delete(c.outgoing, m.ID)
		c.mu.Unlock()
	}
	return msg
}

// forget drops a request that was read but will not be handled.
func (c *lineConn) forget(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
		c.nudge()
	}
}

// lineID returns the id of a request that could be read as JSON, as
// encoded JSON, or nil.
func lineID(line []byte) json.RawMessage {
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return nil
	}
	switch probe.ID.(type) {
	case string, float64:
		b, _ := json.Marshal(probe.ID)
		return b
	}
	return nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// jsonError says what is wrong with text that is not JSON.
func jsonError(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err.Error()
	}
	return "unexpected data"
}

// reject answers a bad message with a JSON-RPC error; id is the JSON of the
// request's id, or nil for null.
func (c *lineConn) reject(id json.RawMessage, code int64, msg string) {
	c.log.Warn("rejected a message from the MCP client", "code", code, "reason", msg)
	out := rpcError(id, code, msg)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.out.Write(append(out, '\n'))
}

// rpcError is a JSON-RPC error response to the request id (encoded JSON;
// nil means null).
func rpcError(id json.RawMessage, code int64, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	if err != nil { // an id that is not JSON: answer as to none
		return rpcError(nil, code, msg)
	}
	return out
}

// Read returns the next message. Once the input has ended it returns
// io.EOF — but only when every request read has been answered (but
// subscription streams: see awaited), so that the SDK does not cancel
// calls in flight.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		c.mu.Lock()
		if len(c.madeUp) > 0 {
			msg := c.madeUp[0]
			c.madeUp = c.madeUp[1:]
			c.mu.Unlock()
			return msg, nil
		}
		if c.ended && !c.awaiting() {
			c.mu.Unlock()
			return nil, io.EOF
		}
		incoming, drain := c.incoming, c.drainReq
		if c.ended {
			incoming, drain = nil, nil // now only answers are awaited
		}
		c.mu.Unlock()
		select {
		case msg, ok := <-incoming:
			if ok {
				return msg, nil
			}
			c.end()
		case <-drain:
			c.end()
		case <-c.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		}
	}
}

// awaited says whether the end of input waits for the answer to a request
// of method: every request's but a subscriptions/listen stream's, which
// lasts until the session ends and so is ended with it.
func awaited(method string) bool { return method != "subscriptions/listen" }

// awaiting says whether a request the end of input waits for is still
// unanswered; c.mu is held.
func (c *lineConn) awaiting() bool {
	for _, a := range c.pending {
		if a {
			return true
		}
	}
	return false
}

// end marks the input as ended: requests we sent the client can no longer
// be answered, so they get made-up error responses.
func (c *lineConn) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended = true
	for id := range c.outgoing {
		c.madeUp = append(c.madeUp, closedInput(id))
	}
	clear(c.outgoing)
}

func closedInput(id jsonrpc.ID) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the MCP client closed its input, so it cannot answer"}}
}

// drain stops taking new messages; requests in flight are still answered.
func (c *lineConn) drain() { c.drainOne.Do(func() { close(c.drainReq) }) }

func (c *lineConn) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Write sends a message. A response settles the client's request; a request
// of ours made after the input ended is answered at once with an error.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	if r, ok := msg.(*jsonrpc.Response); ok {
		data, _ = encodeResponse(r)
	}
	if data == nil {
		encoded, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return fmt.Errorf("encoding a message: %w", err)
		}
		data = append(encoded, '\n')
	}
	c.wmu.Lock()
	_, err := c.out.Write(data)
	c.wmu.Unlock()
	c.mu.Lock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		delete(c.pending, m.ID)
	case *jsonrpc.Request:
		if m.IsCall() {
			if c.ended {
				c.madeUp = append(c.madeUp, closedInput(m.ID))
			} else {
				c.outgoing[m.ID] = true
			}
		}
	}
	c.mu.Unlock()
	c.nudge()
	return err
}

// Close ends the connection; a Read waiting for input returns.
func (c *lineConn) Close() error {
	c.closeOne.Do(func() { close(c.closed) })
	return nil
}
