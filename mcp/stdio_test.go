package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
)

// FuzzLineConn feeds arbitrary bytes to the stdio connection, answering
// every request it passes on as a server would: the connection must end,
// and everything it writes must be one JSON object a line.
func FuzzLineConn(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		"{not json\n\xff\xfe\n[1,2]\n\n\r\n",
		`{"jsonrpc":"2.0","id":"a","method":"x"}` + "\n" + `{"jsonrpc":"2.0","id":"a","method":"x"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"id":null}`,
		strings.Repeat("x", 300) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := &syncbuf.Buffer{}
		c := newLineConn(bytes.NewReader(data), out, 256, slog.New(slog.DiscardHandler))
		defer c.Close()
		ctx := context.Background()
		for {
			msg, err := c.Read(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				if err := c.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
					t.Fatalf("Write: %v", err)
				}
			}
		}
		for line := range strings.Lines(out.String()) {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil || v["jsonrpc"] != "2.0" {
				t.Fatalf("wrote %q", line)
			}
		}
	})
}
