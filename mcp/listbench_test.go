package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// BenchmarkToolsList measures answering tools/list for 1,000 tools named,
// described and with schemas as bench/manytools serves them (cycling
// through the corpus), as an import of its tools lists them: one request
// and its answer's line over stdio, in process (the client only finds the
// end of the line).
func BenchmarkToolsList(b *testing.B) {
	reg := registry.New()
	corpus := corpusTools(b)
	for i := range 1000 {
		c := corpus[i%len(corpus)]
		var params jsonschema.Schema
		if err := json.Unmarshal(c.InputSchema, &params); err != nil {
			b.Fatal(err)
		}
		err := reg.Register(tool.Tool{
			Name:        fmt.Sprintf("%s_%d", c.Name, i),
			Description: c.Description,
			Parameters:  &params,
			Meta:        tool.Meta{OpenWorld: true},
			Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
				return tool.Text("ok"), nil
			},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	srv := New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, Options{Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(srv.Close)
	inW, outR := stdioPipes(b, srv)
	out := bufio.NewReaderSize(outR, 64<<10)
	// answer reads up to the end of the answer to request id, and returns
	// how long its line is.
	answer := func(id int) int {
		head := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,`, id)
		for {
			n, first := 0, true
			var ours bool
			for {
				chunk, err := out.ReadSlice('\n')
				if first {
					ours = bytes.HasPrefix(chunk, head)
					first = false
				}
				n += len(chunk)
				if err == nil {
					break
				}
				if err != bufio.ErrBufferFull {
					b.Fatal(err)
				}
			}
			if ours {
				return n
			}
		}
	}
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	answer(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	id := 1
	b.ReportAllocs()
	for b.Loop() {
		id++
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, id))
		if n := answer(id); n < 1<<20 {
			b.Fatalf("an answer of %d bytes for 1,000 tools", n)
		}
	}
}

// stdioPipes serves srv over stdio on pipes until the test ends, and
// returns the client's ends: what it writes to the server, and what it
// reads from it.
func stdioPipes(tb testing.TB, srv *Server) (*io.PipeWriter, *io.PipeReader) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), StdioOptions{In: inR, Out: outW}) }()
	tb.Cleanup(func() {
		inW.Close()
		outR.Close()
		if err := <-done; err != nil {
			tb.Error(err)
		}
	})
	return inW, outR
}
