package compact

import (
	"os"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"regexp"
	"strings"
	"testing"
)

// docTranscript is a text block of docs/compact.md that shows one call of
// the three tools: its first line is the call, then an empty line, then
// what the model receives.
var docTranscript = regexp.MustCompile("(?ms)^```text\n(tool_search|tool_describe|tool_call) (\\{[^\n]*\\})( *\\(isError[^\n]*\\))?\n\n(.*?)\n```")

// TestDocTranscripts runs the calls docs/compact.md shows over the built-in
// tools and the corpus, as they are set up here, and checks that each
// answer is the one the page shows, so the page cannot drift. The result
// summaries run with the image generator and the data tool of
// TestSummarizers, under the call ids the page shows.
func TestDocTranscripts(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/compact.md")
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, fullRunner(t))
	extra, sums, _ := summarizerTools(t)
	summarized := serve(t, invoke.New(coreRegistry(t, extra...), workspace(t)))
	for name, fn := range sums {
		summarized.c.Summarize(name, fn)
	}
	ran := 0
	for _, m := range docTranscript.FindAllStringSubmatch(string(raw), -1) {
		name, args, isError, want := m[1], m[2], m[3] != "", m[4]
		on, id := s, "call_doc"
		switch {
		case strings.Contains(args, `"image_generate"`):
			on, id = summarized, "call_10"
		case strings.Contains(args, `"callId":"call_10/`):
			on, id = summarized, "call_11"
		case strings.Contains(args, `"sales_report"`):
			on, id = summarized, "call_12"
		}
		msg := on.run(t, id, name, args)
		if got := text(msg); got != want || msg.IsError != isError {
			t.Errorf("docs/compact.md shows %s %s (isError %v) answering:\n%s\nit answers (isError %v):\n%s", name, args, isError, want, msg.IsError, got)
		}
		ran++
	}
	if ran < 10 {
		t.Errorf("only %d transcripts of docs/compact.md ran; the pattern no longer finds them", ran)
	}
}

// TestListingAsThePageShows: the system prompt's listing of the agent
// loop's compact mode starts as docs/compact.md shows it, and names every
// tool the runner offers, with its one-line description.
func TestListingAsThePageShows(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/compact.md")
	if err != nil {
		t.Fatal(err)
	}
	shown := regexp.MustCompile("(?ms)^```text\n(Tools: .*?)\n…\n```").FindStringSubmatch(string(raw))
	if shown == nil {
		t.Fatal("docs/compact.md no longer shows the listing")
	}
	r := fullRunner(t)
	listing := New(r, Options{}).Listing()
	if !strings.HasPrefix(listing, shown[1]+"\n") {
		t.Errorf("the listing starts:\n%s\ndocs/compact.md shows:\n%s", textclip.Clip(listing, 600), shown[1])
	}
	for _, tl := range offered(t, r) {
		if line := "\n- " + tl.Name + ": " + OneLine(tl.Description); !strings.Contains(listing, line) {
			t.Errorf("the listing lacks %q", line)
		}
	}
}
