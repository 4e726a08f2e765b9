package console

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/jobs"
)

// Window is how far back the Numbers page looks: calls per minute over
// the last hour.
const Window = time.Hour

// Numbers are the figures of the Numbers page, from the audit log's
// records of the last Window and the job queue.
type Numbers struct {
	// Since and Until bound the records counted.
	Since, Until time.Time
	// PerMinute counts the calls that started in each minute of the
	// window, oldest first.
	PerMinute []int
	// Calls, Denials and Errors count the calls of the window: denied (by
	// policy, by a person, or for want of one), and ended in an error
	// otherwise.
	Calls, Denials, Errors int
	// Tools are the figures per tool, the most called first.
	Tools []ToolNumbers
	// JobsInFlight counts the jobs pending or processing, up to
	// MaxInFlight; JobsMore says there are more.
	JobsInFlight int
	JobsMore     bool
}

// ToolNumbers are one tool's figures over the window.
type ToolNumbers struct {
	Tool                   string
	Calls, Denials, Errors int
	// P50 and P99 are the median and 99th percentile of its calls'
	// durations (nearest rank).
	P50, P99 time.Duration
}

// MaxInFlight bounds the jobs counted in flight.
const MaxInFlight = 1000

// ReadNumbers computes the Numbers at now from the audit log (its records
// of the last Window, read through the log's time index) and the job
// queue (nil: no jobs counted).
func ReadNumbers(ctx context.Context, log *auditlog.Log, q *jobs.Queue, now time.Time) (Numbers, error) {
	since := now.Add(-Window)
	records, err := log.List(ctx, auditlog.Filter{Since: since})
	if err != nil {
		return Numbers{}, err
	}
	n := numbersOf(records, since, now)
	if q != nil {
		for _, status := range []string{jobs.StatusPending, jobs.StatusProcessing} {
			list, err := q.List(ctx, jobs.Filter{Status: status, Limit: MaxInFlight + 1})
			if err != nil {
				return Numbers{}, fmt.Errorf("counting the jobs in flight: %w", err)
			}
			n.JobsInFlight += len(list)
		}
		n.JobsMore = n.JobsInFlight > MaxInFlight
		n.JobsInFlight = min(n.JobsInFlight, MaxInFlight)
	}
	return n, nil
}

func (c *Console) loadNumbers(r *http.Request, _ User) (any, error) {
	return ReadNumbers(r.Context(), c.opts.Audit, c.opts.Jobs, time.Now())
}

// numbersOf sums up the call records made in [since, until) in one pass.
func numbersOf(records []audit.Record, since, until time.Time) Numbers {
	n := Numbers{Since: since, Until: until, PerMinute: make([]int, int(until.Sub(since)/time.Minute))}
	type acc struct {
		ToolNumbers
		durations []time.Duration
	}
	byTool := map[string]*acc{}
	for _, r := range records {
		if r.Kind != "" || r.Time.Before(since) || !r.Time.Before(until) {
			continue
		}
		a := byTool[r.Tool]
		if a == nil {
			a = &acc{ToolNumbers: ToolNumbers{Tool: r.Tool}}
			byTool[r.Tool] = a
		}
		if m := int(r.Time.Sub(since) / time.Minute); m < len(n.PerMinute) {
			n.PerMinute[m]++
		}
		n.Calls++
		a.Calls++
		switch {
		case denied(r):
			n.Denials++
			a.Denials++
		case r.IsError:
			n.Errors++
			a.Errors++
		}
		a.durations = append(a.durations, r.Duration)
	}
	for _, a := range byTool {
		slices.Sort(a.durations)
		a.P50, a.P99 = percentile(a.durations, 50), percentile(a.durations, 99)
		n.Tools = append(n.Tools, a.ToolNumbers)
	}
	slices.SortFunc(n.Tools, func(a, b ToolNumbers) int { return cmp.Or(b.Calls-a.Calls, cmp.Compare(a.Tool, b.Tool)) })
	return n
}

// denied reports whether a call was refused: by a policy layer or a
// person, or because nobody could approve it (in time).
func denied(r audit.Record) bool {
	switch r.Decision() {
	case "deny", "unconfirmed", "timeout":
		return true
	}
	return false
}

// percentile is the p-th percentile of sorted durations by nearest rank;
// 0 for none.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ⌈p/100 · n⌉
	return sorted[max(rank, 1)-1]
}

// CallsChart is the calls-per-minute chart of n: a bar per minute.
func (n Numbers) CallsChart() Chart {
	labels := make([]string, len(n.PerMinute))
	values := make([]float64, len(n.PerMinute))
	for i, c := range n.PerMinute {
		labels[i] = n.Since.Add(time.Duration(i) * time.Minute).Local().Format("15:04")
		values[i] = float64(c)
	}
	return Chart{
		Title:  "Calls per minute",
		Desc:   fmt.Sprintf("%d calls from %s to %s, one bar per minute; the busiest minute had %d.", n.Calls, n.Since.Local().Format("15:04"), n.Until.Local().Format("15:04"), slices.Max(append([]int{0}, n.PerMinute...))),
		Width:  480,
		Labels: labels, Values: values,
	}
}

// DurationChart is the p99 durations of the tools as bars, in
// milliseconds, the most called tool first.
func (n Numbers) DurationChart() Chart {
	c := Chart{Title: "p99 duration per tool", Desc: "The 99th percentile of each tool's call durations in milliseconds, the most called tool first."}
	for _, t := range n.Tools {
		c.Labels = append(c.Labels, t.Tool+" ("+strconv.FormatFloat(float64(t.P99)/float64(time.Millisecond), 'f', 1, 64)+" ms)")
		c.Values = append(c.Values, float64(t.P99)/float64(time.Millisecond))
	}
	return c
}
