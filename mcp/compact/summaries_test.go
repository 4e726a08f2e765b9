package compact

import (
	"context"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestSummariesPrecedence: the line that lists a tool in tool_search's
// answers and in the listing is the configured summary (Options.Summaries),
// else the tool's own Meta.Summary (metadata.json, an imported server's
// summaries), else the first sentence of its description; a blank summary
// is ignored, and a long or multi-line one is put on one line and cut.
func TestSummariesPrecedence(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	add := func(name, summary string) {
		t.Helper()
		err := reg.Register(tool.Tool{
			Name: name, Description: "Counts the " + name + " of a text. Long details follow here.",
			Meta: tool.Meta{Summary: summary},
			Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
				return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: "0"}}}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	add("words", "Own summary of words.")
	add("lines", "Own summary of lines.")
	add("chars", "")
	add("bytes", "  ")
	add("runes", "Counts runes,\n  one\tper code point.")
	long := strings.Repeat("very ", 40) + "long"
	add("spaces", long)
	c := New(invoke.New(reg, workspace(t)), Options{Summaries: map[string]string{
		"words": "Configured: count the words.",
		"bytes": "",
		"chars": "   ",
	}})
	want := map[string]string{
		"words":  "Configured: count the words.",      // configuration beats the tool's own
		"lines":  "Own summary of lines.",             // the tool's own beats its description
		"chars":  "Counts the chars of a text.",       // a blank configured one is ignored
		"bytes":  "Counts the bytes of a text.",       // so is a blank own one
		"runes":  "Counts runes, one per code point.", // on one line
		"spaces": clip(long),
	}
	listing := c.Listing()
	for name, line := range want {
		if !strings.Contains(listing, "\n- "+name+": "+line+"\n") && !strings.HasSuffix(listing, "\n- "+name+": "+line) {
			t.Errorf("the listing does not list %s as %q:\n%s", name, line, listing)
		}
		hits := c.Index().Search(name, 20)
		found := false
		for _, h := range hits {
			if h.Name == name {
				found = true
				if h.Line != line {
					t.Errorf("tool_search lists %s as %q, want %q", name, h.Line, line)
				}
			}
		}
		if !found {
			t.Errorf("tool_search %q did not find it: %+v", name, hits)
		}
	}
	if got := clip(long); !strings.HasSuffix(got, "…") || len([]rune(got)) > MaxLineChars {
		t.Errorf("a long summary is not cut: %q", got)
	}
	// tool_search's own answer shows the configured line.
	search := c.Tools()[0]
	res, err := search.Execute(context.Background(), tool.Call{ID: "c1", Name: SearchName, Arguments: []byte(`{"query":"words"}`)}, &tool.Context{}, nil)
	if err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "words — Configured: count the words.") {
		t.Errorf("tool_search answers %+v, %v", res, err)
	}
}
