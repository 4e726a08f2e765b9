package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/console"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// appendRecords writes records to the root's audit log.
func appendRecords(t testing.TB, log interface {
	Append(context.Context, audit.Record) error
}, records ...audit.Record) {
	t.Helper()
	for _, r := range records {
		if err := log.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadNumbers(t *testing.T) {
	t.Parallel()
	tb := openRoot(t, pageYAML, waitingTool())
	now := time.Now()
	var records []audit.Record
	for i := 1; i <= 100; i++ { // read: 1 ms … 100 ms, 30 minutes ago
		records = append(records, audit.Record{Time: now.Add(-30 * time.Minute), CallID: fmt.Sprint("r", i), Tool: "read", Duration: time.Duration(i) * time.Millisecond})
	}
	for i, ms := range []int{30, 10, 20} { // glob: p50 20 ms, p99 30 ms by nearest rank
		records = append(records, audit.Record{Time: now.Add(-10 * time.Minute), CallID: fmt.Sprint("g", i), Tool: "glob", Duration: time.Duration(ms) * time.Millisecond})
	}
	deny := []audit.Verdict{{Layer: "global", Decision: "deny", Rule: "deny: exec"}}
	for i := range 3 { // exec: denied, 5 minutes ago
		records = append(records, audit.Record{Time: now.Add(-5 * time.Minute), CallID: fmt.Sprint("x", i), Tool: "exec", Verdicts: deny, IsError: true, ErrorClass: "denied"})
	}
	records = append(records,
		audit.Record{Time: now.Add(-5 * time.Minute), CallID: "w1", Tool: "write", Verdicts: []audit.Verdict{{Layer: "global", Decision: "ask"}}, Confirmation: &audit.Confirmation{Answer: "none"}, IsError: true},
		audit.Record{Time: now.Add(-time.Minute), CallID: "f1", Tool: "web_fetch", IsError: true, ErrorClass: "tool"},
		audit.Record{Time: now.Add(-2 * time.Hour), CallID: "old", Tool: "read"},               // before the window
		audit.Record{Time: now.Add(-time.Minute), Kind: audit.KindRecovery, Note: "recovered"}, // not a call
	)
	appendRecords(t, tb.AuditLog(), records...)
	if res := runCall(t, &served{tb: tb}, "job1", "render_video", `{"title":"x"}`); res.IsError {
		t.Fatalf("the async call failed: %s", res.Content[0].Text)
	}
	waitLogged(t, tb, "job1")

	// Read at the time the last call was logged: less than a minute after
	// now, so the reads are still in the minute 30 minutes before.
	n, err := console.ReadNumbers(context.Background(), tb.AuditLog(), tb.Jobs(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// 100 reads, 3 globs, 3 exec, 1 write, 1 web_fetch, and the async call itself.
	if n.Calls != 109 || n.Denials != 4 || n.Errors != 1 {
		t.Errorf("calls %d, denials %d, errors %d; want 109, 4, 1", n.Calls, n.Denials, n.Errors)
	}
	if n.JobsInFlight != 1 || n.JobsMore {
		t.Errorf("jobs in flight: %d (more: %v), want 1", n.JobsInFlight, n.JobsMore)
	}
	if len(n.PerMinute) != 60 {
		t.Fatalf("%d minutes, want 60", len(n.PerMinute))
	}
	if got := n.PerMinute[29]; got != 100 {
		t.Errorf("minute 29 has %d calls, want the 100 reads (per minute: %v)", got, n.PerMinute)
	}
	read := n.Tools[0]
	if read.Tool != "read" || read.Calls != 100 || read.P50 != 50*time.Millisecond || read.P99 != 99*time.Millisecond {
		t.Errorf("read: %+v; want 100 calls, p50 50ms, p99 99ms, first", read)
	}
	byTool := map[string]console.ToolNumbers{}
	for _, tn := range n.Tools {
		byTool[tn.Tool] = tn
	}
	if e := byTool["exec"]; e.Denials != 3 || e.Errors != 0 {
		t.Errorf("exec: %+v; want 3 denials, no errors", e)
	}
	if g := byTool["glob"]; g.P50 != 20*time.Millisecond || g.P99 != 30*time.Millisecond {
		t.Errorf("glob: %+v; want p50 20ms, p99 30ms", g)
	}
	if w := byTool["web_fetch"]; w.Errors != 1 {
		t.Errorf("web_fetch: %+v; want 1 error", w)
	}
}

func TestChartsSayWhatTheyShow(t *testing.T) {
	t.Parallel()
	c := console.Chart{Title: "Calls <per> minute", Desc: "Three minutes.", Width: 300, Height: 100, Labels: []string{"a", "b", "c"}, Values: []float64{1, 4, 2}}
	bars := string(c.Bars())
	for _, want := range []string{
		`role="img"`, `<title id="chart-calls-per-minute-t">Calls &lt;per&gt; minute</title>`, `<desc id="chart-calls-per-minute-d">Three minutes.</desc>`,
		`<rect x="0" y="64.75" width="99" height="21.25"><title>a: 1</title></rect>`,
		`<rect x="100" y="1" width="99" height="85"><title>b: 4</title></rect>`,
		`<title>c: 2</title>`,
		// Few bars: each one's label under it.
		`<text class="axis" x="50" y="97" text-anchor="middle">a</text>`, `<text class="axis" x="250" y="97" text-anchor="middle">c</text>`,
	} {
		if !strings.Contains(bars, want) {
			t.Errorf("bars lack %s:\n%s", want, bars)
		}
	}
	// Many bars: the first and last labels, the peak between them; a
	// label too long for its bar is cut.
	many := console.Chart{Title: "Many", Width: 300, Height: 100, Values: make([]float64, 12)}
	for i := range many.Values {
		many.Labels, many.Values[i] = append(many.Labels, fmt.Sprintf("10:%02d", i)), float64(i%5)
	}
	for _, want := range []string{
		`<text class="axis" x="0" y="97" text-anchor="start">10:00</text>`,
		`<text class="axis" x="150" y="97" text-anchor="middle">peak 4</text>`,
		`<text class="axis" x="300" y="97" text-anchor="end">10:11</text>`,
	} {
		if got := string(many.Bars()); !strings.Contains(got, want) {
			t.Errorf("many bars lack %s:\n%s", want, got)
		}
	}
	long := string(console.Chart{Title: "Long", Width: 100, Labels: []string{"read (0.3 ms)", "b"}, Values: []float64{1, 2}}.Bars())
	if !strings.Contains(long, `>read (…</text>`) {
		t.Errorf("a long label is not cut to its bar:\n%s", long)
	}
	line := string(c.Sparkline())
	if want := `points="0,74.5 150,1 300,50"`; !strings.Contains(line, want) {
		t.Errorf("sparkline lacks %s:\n%s", want, line)
	}
	empty := string(console.Chart{Title: "Nothing"}.Bars())
	if strings.Contains(empty, "<rect") || !strings.HasSuffix(empty, "</svg>") {
		t.Errorf("an empty chart: %s", empty)
	}
}

// BenchmarkReadNumbers reads the Numbers of an hour with 10,000 calls in
// the audit log (of 20 tools, with arguments and verdicts, as the
// pipeline writes them).
func BenchmarkReadNumbers(b *testing.B) {
	st := storetest.Open(b, filepath.Join(b.TempDir(), store.DefaultFile))
	log := auditlog.New(st)
	w := log.Writer(auditlog.WriterOptions{})
	if err := w.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	var wg sync.WaitGroup
	for g := range 50 {
		wg.Go(func() {
			for i := range 200 {
				r := audit.Record{
					Time: now.Add(-time.Duration(g*200+i) * 350 * time.Millisecond), CallID: fmt.Sprint("c", g, "-", i), Tool: fmt.Sprint("tool", i%20),
					Arguments: json.RawMessage(`{"path":"notes/today.md","content":"a line of text"}`), Verdicts: []audit.Verdict{{Layer: "global", Decision: "allow", Rule: "allow: group:fs"}},
					Duration: time.Duration(i) * time.Millisecond, Channel: "cli", Owner: true,
				}
				if err := w.Append(context.Background(), r); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Stop(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n, err := console.ReadNumbers(context.Background(), log, nil, now.Add(time.Second))
		if err != nil || n.Calls != 10_000 {
			b.Fatal(n.Calls, err)
		}
	}
}
