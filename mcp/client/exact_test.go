package client

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// floats returns a copy of v (a tool's field decoded into an any) with
// every json.Number as the float64 the SDK's decoder gives for it, and
// counts the numbers it converted.
func floats(t *testing.T, v any, n *int) any {
	switch x := v.(type) {
	case json.Number:
		*n++
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			t.Fatalf("number %q: %v", x, err)
		}
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = floats(t, e, n)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = floats(t, e, n)
		}
		return out
	}
	return v
}

// TestExactListingIsTheSDKs: the tools a sync lists (numbers decoded as
// json.Number, for schema.RoundTripForm) are the SDK's ListTools' tools
// once their numbers are float64 again — on the corpus and on numbers in
// every field that holds JSON — and every number the SDK decodes is a
// json.Number in them.
func TestExactListingIsTheSDKs(t *testing.T) {
	pages := append(corpusPages(t),
		`{"tools":[{"name":"numbers","description":"n","inputSchema":{"type":"object","properties":{"a":{"type":"number","minimum":1.0,"maximum":1e3,"default":12345678901234567890,"enum":[0.1,-0,2.50]}}},`+
			`"outputSchema":{"type":"object","properties":{"b":{"type":"integer","maximum":7}}},"_meta":{"n":3.25,"l":[1,{"m":2}]}}]}`)
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			want, got := listBothWays(t, ctx, version, pages)
			numbers := 0
			for i := range got {
				g := *got[i]
				g.InputSchema = floats(t, g.InputSchema, &numbers)
				g.OutputSchema = floats(t, g.OutputSchema, &numbers)
				if g.Meta != nil {
					g.Meta = floats(t, map[string]any(g.Meta), &numbers).(map[string]any)
				}
				if !reflect.DeepEqual(&g, want[i]) {
					gb, _ := json.Marshal(&g)
					wb, _ := json.Marshal(want[i])
					t.Errorf("tool %d:\n got %s\nwant %s", i, gb, wb)
				}
			}
			if numbers < 100 {
				t.Errorf("only %d numbers decoded as json.Number", numbers)
			}
		})
	}
}

// TestLazySchemasListAsBuilt: an imported tool's parameters are the
// same whether its list was decoded exactly (a sync) or by the SDK, and
// whether they were converted at once or lazily, so its calls are
// validated as before; and the schema a tool list compiles for it — the
// generic form lazy parameters keep — gives for every dialect the bytes
// FromSchema builds from the parameters, which is what was listed before.
// Most corpus schemas are lazy.
func TestLazySchemasListAsBuilt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sdkTools, got := listBothWays(t, ctx, "2025-06-18", corpusPages(t))
	lazyCount := 0
	for i, tl := range got {
		params, lazy, err := parameters(tl.InputSchema)
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		made := tool.Tool{Parameters: params, LazyParameters: lazy}
		before, err := schema.ToSchema(sdkTools[i].InputSchema) // as imports converted it before
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		if !reflect.DeepEqual(made.Params(), before) {
			t.Errorf("%s: the parameters differ from the SDK's list's", tl.Name)
		}
		doc, isLazy := made.ParamsDoc()
		if !isLazy {
			continue
		}
		lazyCount++
		built, err := schema.FromSchema(before)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range schema.Dialects() {
			a, _ := d.Compile(doc)
			b, _ := d.Compile(built)
			ab, aerr := schema.Encode(a)
			bb, berr := schema.Encode(b)
			if string(ab) != string(bb) || (aerr == nil) != (berr == nil) {
				t.Errorf("%s, %s: listed as\n%s\nbuilt, it lists as\n%s", tl.Name, d.Name(), ab, bb)
			}
		}
	}
	if lazyCount < len(got)*3/4 {
		t.Errorf("%d of %d schemas lazy", lazyCount, len(got))
	}
}

// listBothWays lists pages with the SDK's ListTools and with a sync's
// exact listing, from two fake servers answering the same.
func listBothWays(t *testing.T, ctx context.Context, version string, pages []string) (sdkTools, exact []*mcp.Tool) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	connect := func(tr mcp.Transport) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Logger: quiet, Capabilities: &mcp.ClientCapabilities{}})
		sess, err := c.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sess.Close() })
		return sess
	}
	for tl, err := range connect(fakeServer(t, version, pages)).Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		sdkTools = append(sdkTools, tl)
	}
	lt := &listingTransport{Transport: fakeServer(t, version, pages)}
	exact, err := listToolsAs(ctx, connect(lt), lt.conn, quiet, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(exact) != len(sdkTools) {
		t.Fatalf("%d tools, the SDK lists %d", len(exact), len(sdkTools))
	}
	return sdkTools, exact
}
