package cron

import (
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNext walks schedules forward from a start and checks the instants
// they run at, in UTC, across time zones and daylight-saving changes.
func TestNext(t *testing.T) {
	t.Parallel()
	at := func(s string) *time.Time { v, _ := time.Parse(time.RFC3339, s); return &v }
	for _, tt := range []struct {
		name  string
		s     tool.Schedule
		from  string
		want  []string
		never bool
	}{
		{"weekdays at 9:30 in UTC", tool.Schedule{Kind: "cron", Expr: "30 9 * * 1-5"}, "2026-11-27T10:00:00Z",
			[]string{"2026-11-30T09:30:00Z", "2026-12-01T09:30:00Z"}, false},
		{"9:00 in Tokyo", tool.Schedule{Kind: "cron", Expr: "0 9 * * *", TZ: "Asia/Tokyo"}, "2026-11-25T00:00:00Z",
			[]string{"2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z"}, false},
		{"8:00 in New York keeps the wall clock over the fall change", tool.Schedule{Kind: "cron", Expr: "0 8 * * *", TZ: "America/New_York"}, "2026-10-31T13:00:00Z",
			[]string{"2026-11-01T13:00:00Z", "2026-11-02T13:00:00Z"}, false},
		{"8:00 in Berlin keeps the wall clock over the spring change", tool.Schedule{Kind: "cron", Expr: "0 8 * * *", TZ: "Europe/Berlin"}, "2026-03-28T08:00:00Z",
			[]string{"2026-03-29T06:00:00Z", "2026-03-30T06:00:00Z"}, false},
		{"2:30 in Berlin, skipped by the spring change, runs after the gap", tool.Schedule{Kind: "cron", Expr: "30 2 * * *", TZ: "Europe/Berlin"}, "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}, false},
		{"2:30 in Berlin, repeated by the fall change, runs once", tool.Schedule{Kind: "cron", Expr: "30 2 * * *", TZ: "Europe/Berlin"}, "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}, false},
		{"hourly runs in both repeated hours", tool.Schedule{Kind: "cron", Expr: "0 * * * *", TZ: "Europe/Berlin"}, "2026-10-24T23:30:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}, false},
		{"descriptor", tool.Schedule{Kind: "cron", Expr: "@daily", TZ: "UTC"}, "2026-11-25T23:59:59Z",
			[]string{"2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z"}, false},
		{"every counts from its anchor", tool.Schedule{Kind: "every", Every: "15m", Anchor: mustTime(t, "2026-01-01T00:05:00Z")}, "2026-01-01T01:00:00Z",
			[]string{"2026-01-01T01:05:00Z", "2026-01-01T01:20:00Z", "2026-01-01T01:35:00Z"}, false},
		{"every before its anchor runs at the anchor", tool.Schedule{Kind: "every", Every: "1h", Anchor: mustTime(t, "2026-01-01T00:00:00Z")}, "2025-12-31T00:00:00Z",
			[]string{"2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"}, false},
		{"at runs once", tool.Schedule{Kind: "at", At: at("2026-12-24T17:00:00Z")}, "2026-12-01T00:00:00Z",
			[]string{"2026-12-24T17:00:00Z"}, true},
		{"at in the past never runs", tool.Schedule{Kind: "at", At: at("2026-01-01T00:00:00Z")}, "2026-12-01T00:00:00Z", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := Check(&tt.s); err != nil {
				t.Fatal(err)
			}
			cur := mustTime(t, tt.from)
			for i, w := range tt.want {
				next, ok, err := Next(tt.s, cur)
				if err != nil || !ok {
					t.Fatalf("run %d: %v %v", i, ok, err)
				}
				if got := next.UTC().Format(time.RFC3339); got != w {
					t.Fatalf("run %d: got %s, want %s", i, got, w)
				}
				cur = next
			}
			if _, ok, _ := Next(tt.s, cur); ok == tt.never {
				t.Fatalf("after the last expected run: another run %v, want %v", ok, !tt.never)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		s    tool.Schedule
		want string
	}{
		{"no kind", tool.Schedule{}, "needs a kind"},
		{"unknown kind", tool.Schedule{Kind: "weekly"}, `unknown schedule kind "weekly"`},
		{"four fields", tool.Schedule{Kind: "cron", Expr: "0 9 * *"}, "has 4 fields"},
		{"six fields", tool.Schedule{Kind: "cron", Expr: "0 0 9 * * *"}, "has 6 fields"},
		{"out of range", tool.Schedule{Kind: "cron", Expr: "61 9 * * *"}, `expr "61 9 * * *": `},
		{"bad word", tool.Schedule{Kind: "cron", Expr: "0 9 * * MON-FRY"}, "day-of-week"},
		{"zone in expr", tool.Schedule{Kind: "cron", Expr: "CRON_TZ=Asia/Tokyo 0 9 * * *"}, "give the zone in tz"},
		{"unknown zone", tool.Schedule{Kind: "cron", Expr: "0 9 * * *", TZ: "Mars/Olympus"}, `unknown time zone "Mars/Olympus"`},
		{"local zone", tool.Schedule{Kind: "cron", Expr: "0 9 * * *", TZ: "Local"}, "depends on the machine"},
		{"no expr", tool.Schedule{Kind: "cron"}, "needs expr"},
		{"no such date", tool.Schedule{Kind: "cron", Expr: "0 9 30 2 *"}, "matches no date"},
		{"every as expr", tool.Schedule{Kind: "cron", Expr: "@every 5m"}, "use kind every"},
		{"cron with every", tool.Schedule{Kind: "cron", Expr: "0 9 * * *", Every: "1h"}, "not every or at"},
		{"bad every", tool.Schedule{Kind: "every", Every: "5 minutes"}, `every "5 minutes" is not a duration`},
		{"short every", tool.Schedule{Kind: "every", Every: "10ms"}, "shorter than 1s"},
		{"no every", tool.Schedule{Kind: "every"}, "needs every"},
		{"no at", tool.Schedule{Kind: "at"}, "needs at"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Check(&tt.s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// FuzzNext: whatever the expression and zone, Check does not panic, and a
// schedule it accepts runs strictly after the instant asked about.
func FuzzNext(f *testing.F) {
	for _, s := range []string{"30 9 * * 1-5", "*/15 * * * *", "@daily", "0 0 29 2 *", "0 25 * * *", "a b c d e", "0 2 * * SUN"} {
		f.Add(s, "Europe/Berlin", int64(1774746000))
	}
	f.Fuzz(func(t *testing.T, expr, tz string, unix int64) {
		s := tool.Schedule{Kind: tool.ScheduleCron, Expr: expr, TZ: tz}
		if Check(&s) != nil {
			return
		}
		after := time.Unix(unix%(1<<34), 0)
		next, ok, err := Next(s, after)
		if err != nil || !ok {
			t.Fatalf("%q in %q: %v %v", expr, tz, ok, err)
		}
		if !next.After(after) {
			t.Fatalf("%q in %q after %v: %v is not later", expr, tz, after, next)
		}
	})
}
