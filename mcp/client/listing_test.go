package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeServer answers initialize and tools/list on a pipe with the given
// pages of tools/list results (each a JSON object; "nextCursor" is added to
// all but the last), so a test can give a client lists the SDK's own server
// would refuse to make.
func fakeServer(t *testing.T, version string, pages []string) mcp.Transport {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	t.Cleanup(func() { _ = sw.Close(); _ = sr.Close() })
	go func() {
		in := bufio.NewReader(sr)
		for {
			line, err := in.ReadBytes('\n')
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Cursor string `json:"cursor"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &req) != nil || req.ID == nil {
				continue // a notification
			}
			result := `{}`
			switch req.Method {
			case "initialize":
				result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1"}}`, version)
			case "tools/list":
				i := 0
				if req.Params.Cursor != "" {
					fmt.Sscanf(req.Params.Cursor, "page%d", &i)
				}
				result = pages[i]
				if i+1 < len(pages) {
					result = strings.TrimSuffix(strings.TrimSpace(result), "}") + fmt.Sprintf(`,"nextCursor":"page%d"}`, i+1)
				}
			}
			if _, err := fmt.Fprintf(sw, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result); err != nil {
				return
			}
		}
	}()
	return &mcp.IOTransport{Reader: cr, Writer: cw}
}

// corpusPages returns the tools/list answers of the corpus.
func corpusPages(t *testing.T) []string {
	t.Helper()
	var pages []string
	for _, dir := range []string{"../../testdata/mcp-tools", "../../schema/testdata/corpus"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no corpus in %s", dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var page struct {
				Tools json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(b, &page); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			pages = append(pages, `{"tools":`+string(page.Tools)+`}`)
		}
	}
	return pages
}

// TestListToolsAsTheSDK: the tools Toolbelt decodes from a stdio server's
// tools/list answers are exactly the ones the SDK's ListTools returns —
// the same values, the same tools left out (null ones, invalid x-mcp-header
// annotations at any depth, however their name is spelled in the JSON), and
// an error where the SDK gives one — on the corpus and on odd lists, with
// the protocol versions before and after the one that caches lists. The
// SDK itself then decodes no tools: they were all taken from its answers.
func TestListToolsAsTheSDK(t *testing.T) {
	tool := func(name, schema string) string {
		return fmt.Sprintf(`{"name":%q,"description":"A tool.","inputSchema":%s}`, name, schema)
	}
	header := func(typ, h string) string {
		return fmt.Sprintf(`{"type":"object","properties":{"p":{"type":%s,"x-mcp-header":%s}}}`, typ, h)
	}
	deep := strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001)
	cases := []struct {
		name    string
		pages   []string
		wantErr bool
	}{
		{"corpus", corpusPages(t), false},
		{"odd", []string{
			`{"tools":[null,` + tool("plain", `{"type":"object"}`) + `]}`,
			`{"tools":null}`,
			`{"ttlMs":60000,"tools":[` + strings.Join([]string{
				tool("header_ok", header(`"string"`, `"Region"`)),
				tool("header_on_object", header(`"object"`, `"O"`)),
				tool("header_not_string", header(`"string"`, `5`)),
				tool("header_empty", header(`"string"`, `""`)),
				tool("header_bad_char", header(`"integer"`, `"Bad Header"`)),
				tool("header_type_list", header(`["string","null"]`, `"T"`)),
				tool("header_escaped", `{"type":"object","properties":{"p":{"type":"object","x\u002dmcp-header":"E"}}}`),
				tool("header_other_case", `{"type":"object","properties":{"p":{"type":"object","X-MCP-Header":"E"}}}`),
				tool("header_twice", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"boolean","x-mcp-header":"dup"}}}`),
				tool("header_nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"i":{"type":"object","x-mcp-header":"N"}}}}}`),
				tool("header_nested_ok", `{"type":"object","properties":{"o":{"type":"object","properties":{"i":{"type":"boolean","x-mcp-header":"N"}}}}}`),
				tool("not_an_object", `{"type":"string"}`),
				tool("no_schema", `null`),
				`{"NAME":"upper","inputSchema":{"type":"object"}}`,
				`{"name":"escapes","description":"\u003cescaped\u003e","inputSchema":{"type":"object","properties":{"p":{"type":"string","x-mcp-header":"Esc"}}}}`,
			}, ",") + `]}`,
		}, false},
		{"wrong type", []string{`{"tools":[{"name":5,"inputSchema":{"type":"object"}}]}`}, true},
		{"tools not a list", []string{`{"tools":{"name":"x"}}`}, true},
		{"too deep", []string{`{"tools":[` + tool("deep", `{"type":"object","properties":{"p":`+deep+`}}`) + `]}`}, true},
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	connect := func(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Logger: quiet, Capabilities: &mcp.ClientCapabilities{}})
		sess, err := c.Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sess.Close() })
		return sess
	}
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		for _, tc := range cases {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var want []*mcp.Tool
				var wantErr error
				for tl, err := range connect(t, fakeServer(t, version, tc.pages)).Tools(ctx, nil) {
					if err != nil {
						wantErr = err
						break
					}
					want = append(want, tl)
				}
				if (wantErr != nil) != tc.wantErr {
					t.Fatalf("the SDK's ListTools: error %v, want an error: %v", wantErr, tc.wantErr)
				}

				lt := &listingTransport{Transport: fakeServer(t, version, tc.pages)}
				sess := connect(t, lt)
				if got := sess.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("protocol %s, want %s", got, version)
				}
				got, err := listTools(ctx, sess, lt.conn, quiet)
				if (err != nil) != tc.wantErr {
					t.Fatalf("listTools: error %v; the SDK's: %v", err, wantErr)
				}
				if tc.wantErr {
					return
				}
				if len(got) != len(want) {
					t.Errorf("%d tools, the SDK lists %d", len(got), len(want))
				}
				for i := range min(len(got), len(want)) {
					if !reflect.DeepEqual(got[i], want[i]) {
						g, _ := json.Marshal(got[i])
						w, _ := json.Marshal(want[i])
						t.Errorf("tool %d:\n got %s\nwant %s", i, g, w)
					}
				}

				// Listed again, the SDK sees every answer without its tools
				// (and so never caches a list).
				lt.conn.begin()
				var fromSDK int
				for _, err := range sess.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					fromSDK++
				}
				pages, err := lt.conn.end()
				lists := 0 // answers with a list of tools; the others are left to the SDK
				for _, p := range tc.pages {
					if !strings.Contains(p, `"tools":null`) {
						lists++
					}
				}
				if err != nil || fromSDK != 0 || len(pages) != lists {
					t.Errorf("the SDK decoded %d tools itself; %d answers' tools taken of %d (%v)", fromSDK, len(pages), lists, err)
				}
			})
		}
	}
}
