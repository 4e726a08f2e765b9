package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeEnds joins a reader and a writer into what a transport reads and
// writes.
type pipeEnds struct {
	io.Reader
	io.Writer
}

func (pipeEnds) Close() error { return nil }

// readAll reads messages until the connection fails; it returns them and
// whether the stream ended cleanly (io.EOF) rather than with an error.
func readAll(t *testing.T, c mcp.Connection) ([]jsonrpc.Message, bool, error) {
	t.Helper()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var msgs []jsonrpc.Message
	for {
		msg, err := c.Read(ctx)
		if err != nil {
			return msgs, errors.Is(err, io.EOF), err
		}
		msgs = append(msgs, msg)
	}
}

// TestLineConnReadsAsTheSDK feeds Toolbelt's stdio connection and the
// SDK's the same streams from a server: they read the same messages and
// end the same way (at the end of the input, or with an error), and write
// the same bytes.
func TestLineConnReadsAsTheSDK(t *testing.T) {
	req := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}`
	note := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	resp := `{"jsonrpc":"2.0","id":"a","result":{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}}`
	tricky := `{"jsonrpc":"2.0","id":2,"result":{"text":"braces } ] { [ and \"quotes\\\" and \\n in a string"}}`
	big := `{"jsonrpc":"2.0","id":3,"result":{"text":"` + strings.Repeat(`{[\"x\"]} `, 30000) + `"}}`
	cases := []struct{ name, stream string }{
		{"lines", req + "\n" + note + "\n" + resp + "\n"},
		{"crlf", req + "\r\n" + note + "\r\n"},
		{"blank lines", "\n\n" + req + "\n\n  \n" + note + "\n"},
		{"over lines", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\"a\": [1,\n 2]}\n}\n" + note + "\n"},
		{"batch", "[" + note + "," + req + "]\n" + resp + "\n"},
		{"escapes and braces in strings", tricky + "\n" + big + "\n"},
		{"no last newline", req + "\n" + note},
		{"cut short", req + "\n" + `{"jsonrpc":"2.0","id":1,"res`},
		{"not json", req + "\nhello\n" + note + "\n"},
		{"empty batch", "[]\n" + note + "\n"},
		{"not a message", `{"jsonrpc":"2.0"}` + "\n"},
		{"two on a line", req + note + "\n"},
		{"carriage return between", req + "\r" + note + "\n"},
		{"space after", req + " \n" + note + "\n"},
		{"backslash last in a string", `{"jsonrpc":"2.0","id":5,"result":{"p":"C:\\"}}` + "\n" + note + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sdk, err := (&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(tc.stream)), Writer: nopWriter{}}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want, wantEOF, wantErr := readAll(t, sdk)
			got, gotEOF, gotErr := readAll(t, newLineConn(pipeEnds{strings.NewReader(tc.stream), io.Discard}, mcp.DefaultMaxLineLength))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read %d messages %v, the SDK %d %v", len(got), got, len(want), want)
			}
			if gotEOF != wantEOF {
				t.Errorf("ended with %v, the SDK with %v", gotErr, wantErr)
			}
		})
	}

	t.Run("too long", func(t *testing.T) {
		stream := req + "\n" + big + "\n" + note + "\n"
		sdk, _ := (&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(stream)), Writer: nopWriter{}, MaxLineLength: 1000}).Connect(context.Background())
		want, _, wantErr := readAll(t, sdk)
		got, _, gotErr := readAll(t, newLineConn(pipeEnds{strings.NewReader(stream), io.Discard}, 1000))
		if len(got) != 1 || len(want) != 1 || gotErr == nil || gotErr.Error() != wantErr.Error() {
			t.Errorf("read %d messages, then %v; the SDK %d, then %v", len(got), gotErr, len(want), wantErr)
		}
	})

	t.Run("writes", func(t *testing.T) {
		id, _ := jsonrpc.MakeID(int64(4))
		msgs := []jsonrpc.Message{
			&jsonrpc.Request{ID: id, Method: "tools/list", Params: []byte(`{"cursor":"x<y>"}`)},
			&jsonrpc.Request{Method: "notifications/initialized"},
			&jsonrpc.Response{ID: id, Result: []byte(`{}`)},
		}
		var ours, theirs bytes.Buffer
		sdk, _ := (&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader("")), Writer: nopWriter{&theirs}}).Connect(context.Background())
		c := newLineConn(pipeEnds{strings.NewReader(""), &ours}, mcp.DefaultMaxLineLength)
		defer sdk.Close()
		defer c.Close()
		for _, m := range msgs {
			if err := c.Write(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if err := sdk.Write(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
		if ours.String() != theirs.String() {
			t.Errorf("wrote\n%s\nthe SDK\n%s", ours.String(), theirs.String())
		}
	})

	t.Run("close ends a read", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		c := newLineConn(pipeEnds{r, io.Discard}, mcp.DefaultMaxLineLength)
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(context.Background())
			done <- err
		}()
		_ = c.Close()
		select {
		case err := <-done:
			if !errors.Is(err, io.EOF) {
				t.Errorf("read after close: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not end the read")
		}
	})
}

// nopWriter is a WriteCloser over a buffer, or over nothing.
type nopWriter struct{ b *bytes.Buffer }

func (w nopWriter) Write(p []byte) (int, error) {
	if w.b != nil {
		return w.b.Write(p)
	}
	return len(p), nil
}

func (nopWriter) Close() error { return nil }
