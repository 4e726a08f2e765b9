// Package cron holds the tool of the automation section: cron, which keeps
// schedules — cron expressions in a time zone, fixed intervals, one-time
// runs — that deliver a message to an agent session or call a tool. This
// package checks schedules and computes when they run; keeping them and
// running them is the tool context's Scheduler (package automation's).
package cron

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones on machines without a zoneinfo database

	robfig "github.com/robfig/cron/v3"

	"github.com/toolbelt/toolbelt/tool"
)

// MinEvery is the shortest interval an interval schedule may have.
const MinEvery = time.Second

// parser reads standard 5-field expressions and the @hourly, @daily, …
// descriptors.
var parser = robfig.NewParser(robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)

// Check checks a schedule's timing and normalizes it in place (trimmed
// fields, the interval written as Go writes durations, the one-time run in
// UTC). Its errors say what is wrong and what would be right.
func Check(s *tool.Schedule) error {
	s.Expr, s.TZ, s.Every = strings.TrimSpace(s.Expr), strings.TrimSpace(s.TZ), strings.TrimSpace(s.Every)
	switch s.Kind {
	case tool.ScheduleCron:
		if s.Every != "" || s.At != nil {
			return errors.New("a cron schedule takes expr (and tz), not every or at")
		}
		if _, _, err := cronSpec(s.Expr, s.TZ); err != nil {
			return err
		}
	case tool.ScheduleEvery:
		if s.Expr != "" || s.At != nil {
			return errors.New("an every schedule takes every, not expr or at")
		}
		d, err := Every(s.Every)
		if err != nil {
			return err
		}
		s.Every = d.String()
	case tool.ScheduleAt:
		if s.Expr != "" || s.Every != "" {
			return errors.New("an at schedule takes at, not expr or every")
		}
		if s.At == nil || s.At.IsZero() {
			return errors.New("an at schedule needs at: the time to run, in RFC 3339 (2026-12-24T18:00:00+01:00)")
		}
		t := s.At.UTC()
		s.At = &t
	case "":
		return errors.New("the schedule needs a kind: cron (expr, tz), every (an interval) or at (one time)")
	default:
		return fmt.Errorf("unknown schedule kind %q: use cron, every or at", s.Kind)
	}
	return nil
}

// cronSpec parses a cron expression read in time zone tz ("" is UTC).
func cronSpec(expr, tz string) (robfig.Schedule, *time.Location, error) {
	if expr == "" {
		return nil, nil, errors.New(`a cron schedule needs expr: 5 fields, minute hour day-of-month month day-of-week, e.g. "30 9 * * 1-5" (9:30 on weekdays), or @hourly, @daily, @weekly, @monthly`)
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, nil, fmt.Errorf("expr %q names its time zone: give the zone in tz instead and expr without it", expr)
	}
	if strings.HasPrefix(expr, "@every") {
		return nil, nil, fmt.Errorf("expr %q is an interval: use kind every with every %q", expr, strings.TrimSpace(strings.TrimPrefix(expr, "@every")))
	}
	if n := len(strings.Fields(expr)); !strings.HasPrefix(expr, "@") && n != 5 {
		return nil, nil, fmt.Errorf("expr %q has %d fields; a cron expression has 5: minute hour day-of-month month day-of-week, e.g. \"0 8 * * *\" for 8:00 every day", expr, n)
	}
	loc, err := Zone(tz)
	if err != nil {
		return nil, nil, err
	}
	sched, err := parser.Parse(expr)
	if err != nil {
		return nil, nil, fmt.Errorf("expr %q: %v; fields are minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or JAN-DEC) day-of-week (0-6 or SUN-SAT), each *, a number, a range a-b, a list a,b or a step */n", expr, err)
	}
	if sched.Next(time.Now().In(loc)).IsZero() {
		return nil, nil, fmt.Errorf("expr %q matches no date (a day the month does not have, such as February 30?)", expr)
	}
	return sched, loc, nil
}

// Zone loads an IANA time zone; "" is UTC.
func Zone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(tz, "local") {
		return nil, errors.New(`tz "Local" depends on the machine: name the zone, e.g. "Europe/Berlin", "America/New_York" or "UTC"`)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as \"Europe/Berlin\", \"America/New_York\", \"Asia/Tokyo\" or \"UTC\"", tz)
	}
	return loc, nil
}

// Every parses an interval schedule's period: a Go duration of at least
// MinEvery ("90s", "15m", "1h30m", "24h").
func Every(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New(`an every schedule needs every: an interval such as "30s", "15m", "2h" or "24h"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("every %q is not a duration: write it like \"90s\", \"15m\", \"1h30m\" or \"24h\" (units s, m, h)", s)
	}
	if d < MinEvery {
		return 0, fmt.Errorf("every %q is shorter than %v, the shortest interval", s, MinEvery)
	}
	return d, nil
}

// Next returns when schedule s runs next after the instant after, and false
// when it never will (a one-time schedule whose time is past). A cron
// schedule's wall-clock times are read in its zone: a time that a
// daylight-saving change skips runs at the first instant after the gap, and a
// time that a change repeats runs once, at its first occurrence. An interval
// schedule runs at Anchor + n·Every.
func Next(s tool.Schedule, after time.Time) (time.Time, bool, error) {
	switch s.Kind {
	case tool.ScheduleCron:
		sched, loc, err := cronSpec(s.Expr, s.TZ)
		if err != nil {
			return time.Time{}, false, err
		}
		return nextCron(sched, loc, everyHour(s.Expr), after), true, nil
	case tool.ScheduleEvery:
		d, err := Every(s.Every)
		if err != nil {
			return time.Time{}, false, err
		}
		if after.Before(s.Anchor) {
			return s.Anchor, true, nil
		}
		n := after.Sub(s.Anchor)/d + 1
		return s.Anchor.Add(n * d), true, nil
	case tool.ScheduleAt:
		if s.At == nil || !s.At.After(after) {
			return time.Time{}, false, nil
		}
		return *s.At, true, nil
	}
	return time.Time{}, false, fmt.Errorf("unknown schedule kind %q", s.Kind)
}

// nextCron is sched's next time after the instant after, in loc, with
// daylight-saving changes handled as Next says. hourly says the expression
// runs every hour (its hour field is *): in a repeated hour it runs in both,
// as the clock goes round twice.
func nextCron(sched robfig.Schedule, loc *time.Location, hourly bool, after time.Time) time.Time {
	t := sched.Next(after.In(loc))
	if gap, ok := skipped(sched, loc, after, t); ok {
		return gap.UTC()
	}
	// A repeated hour: the same wall-clock time again an hour later is the
	// occurrence already due at its first instant, not a new one.
	prev := t.Add(-time.Hour)
	if _, off1 := prev.Zone(); !hourly && sameClock(prev, t) && !prev.After(after) {
		if _, off2 := t.Zone(); off1 != off2 {
			return nextCron(sched, loc, hourly, t)
		}
	}
	return t.UTC()
}

// everyHour says expression expr runs in every hour.
func everyHour(expr string) bool {
	if expr == "@hourly" {
		return true
	}
	f := strings.Fields(expr)
	return len(f) == 5 && strings.HasPrefix(f[1], "*")
}

func sameClock(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay() && a.Hour() == b.Hour() && a.Minute() == b.Minute()
}

// skipped returns the end of a daylight-saving gap between after and t
// when one of sched's wall-clock times fell into it (the clock jumped over
// it), so that it runs as the gap ends.
func skipped(sched robfig.Schedule, loc *time.Location, after, t time.Time) (time.Time, bool) {
	_, off1 := after.In(loc).Zone()
	_, off2 := t.In(loc).Zone()
	if off2 <= off1 {
		return time.Time{}, false
	}
	// The change: the first instant with the new offset.
	lo, hi := after, t
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if _, off := mid.In(loc).Zone(); off == off1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	change := hi.Truncate(time.Second)
	if _, off := change.In(loc).Zone(); off == off1 {
		change = change.Add(time.Second)
	}
	// Read with the old offset, the wall-clock times the jump skipped run
	// from change for the length of the jump.
	old := time.FixedZone("", off1)
	c := sched.Next(change.Add(-time.Second).In(old))
	if c.Before(change.Add(time.Duration(off2-off1)*time.Second)) && change.After(after) {
		return change, true
	}
	return time.Time{}, false
}
