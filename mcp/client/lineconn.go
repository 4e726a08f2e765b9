package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
	"github.com/toolbelt/toolbelt/internal/jsonscan"
)

// lineConn is the connection to a stdio server: JSON-RPC messages, one a
// line, as the MCP specification frames them. The SDK's IOTransport reads
// each message with encoding/json's decoder, then tries to decode it as a
// batch (reading it whole a second time before failing on a message that
// is not one), then decodes it: for a 1,000-tool list that was three passes
// over 2 MB on one goroutine before Toolbelt saw it. lineConn finds the
// end of a line and decodes the message once. Like the SDK's transport it
// accepts a message spread over several lines (which the specification
// forbids), blank lines, CRLF line ends, batches from the server (their
// messages are read in order; a batch's requests are answered one
// response a line, not in a batch), and it bounds a message to
// mcp.DefaultMaxLineLength bytes. TestLineConnReadsAsTheSDK feeds both the
// same streams.
type lineConn struct {
	rwc       io.ReadWriteCloser // closing it stops the process
	incoming  chan frame
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error
	writeMu   sync.Mutex
	queue     []jsonrpc.Message // the rest of a batch; only Read uses it
}

// frame is one message as read, or why reading ended.
type frame struct {
	data []byte
	err  error
}

// errFrameTooLarge is a message longer than the limit.
var errFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

// lineTransport connects to a stdio server's pipes.
type lineTransport struct{ rwc io.ReadWriteCloser }

func (t lineTransport) Connect(context.Context) (mcp.Connection, error) {
	return newLineConn(t.rwc, mcp.DefaultMaxLineLength), nil
}

func newLineConn(rwc io.ReadWriteCloser, limit int) *lineConn {
	c := &lineConn{rwc: rwc, incoming: make(chan frame), closed: make(chan struct{})}
	go c.readFrames(limit)
	return c
}

// readFrames reads messages until the input ends or the connection is
// closed. It leaks while a read of the input blocks after Close, as the
// SDK's does; closing the process's pipes ends it.
func (c *lineConn) readFrames(limit int) {
	send := func(f frame) bool {
		select {
		case c.incoming <- f:
			return true
		case <-c.closed:
			return false
		}
	}
	r := bufio.NewReaderSize(c.rwc, 64<<10)
	var buf []byte // what was read and not sent yet; not shared with a sent frame
	for {
		// Send every whole message buf holds. (buf is scanned once a
		// whole line is in, not at every bufferful of a long line.)
		for {
			msg := bytes.TrimLeft(buf, " \t\r\n")
			if len(msg) == 0 {
				buf = buf[:0]
				break
			}
			end := valueEnd(msg)
			if end < 0 {
				buf = msg // it goes on on the next line
				break
			}
			rest := msg[end:]
			if len(rest) > 0 && rest[0] != '\n' && rest[0] != '\r' {
				send(frame{err: errTrailingData})
				return
			}
			if !send(frame{data: msg[:end:end]}) {
				return
			}
			buf = bytes.Clone(rest)
		}
		chunk, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) && len(buf)+len(chunk) <= limit {
			buf = append(buf, chunk...)
			chunk, err = r.ReadSlice('\n')
		}
		if len(buf)+len(chunk) > limit {
			send(frame{err: errFrameTooLarge})
			return
		}
		buf = append(buf, chunk...)
		if err == nil {
			continue
		}
		// The input ended: what is left must be whole messages.
		for {
			msg := bytes.TrimLeft(buf, " \t\r\n")
			if len(msg) == 0 {
				break
			}
			end := valueEnd(msg)
			if end < 0 {
				err = io.ErrUnexpectedEOF
				break
			}
			if rest := msg[end:]; len(rest) > 0 && rest[0] != '\n' && rest[0] != '\r' {
				err = errTrailingData
				break
			}
			if !send(frame{data: msg[:end:end]}) {
				return
			}
			buf = msg[end:]
		}
		send(frame{err: err})
		return
	}
}

// errTrailingData is a message followed on its line by something else.
var errTrailingData = errors.New("invalid trailing data at the end of stream")

// valueEnd returns where the JSON object or array b starts with ends, or -1
// when its end has not been read yet. For anything else (which is no
// message) it returns the end of the line, for the decoder to refuse.
func valueEnd(b []byte) int {
	if b[0] != '{' && b[0] != '[' {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return i
		}
		return len(b)
	}
	depth := 0
	for i, c := range jsonscan.Brackets(b) {
		if c == '{' || c == '[' {
			depth++
		} else if depth--; depth == 0 {
			return i + 1
		}
	}
	return -1
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var f frame
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if f.err != nil {
		return nil, f.err
	}
	if f.data[0] != '[' {
		if resp, ok := decodeResponse(f.data); ok {
			return resp, nil
		}
		return jsonrpc.DecodeMessage(f.data)
	}
	var raws []json.RawMessage
	if err := segjson.Unmarshal(f.data, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = msg
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.rwc.Write(data)
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.rwc.Close()
		close(c.closed)
	})
	return c.closeErr
}

func (c *lineConn) SessionID() string { return "" }
