package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/termsafe"
)

type auditCmd struct {
	List   auditListCmd   `cmd:"" default:"withargs" help:"List audit records, oldest first (the default)."`
	Verify auditVerifyCmd `cmd:"" help:"Check that no audit record was edited, removed, inserted or reordered (against a saved head with --head)."`
	Head   auditHeadCmd   `cmd:"" help:"Print the chain's head (SEQ:HASH); save it elsewhere to check the log against it later with verify --head."`
}

type auditListCmd struct {
	Tool    string   `help:"Only calls of this tool." placeholder:"TOOL"`
	Since   duration `help:"Only calls made in the last DURATION: 90s, 30m, 2h, 7d." placeholder:"DURATION"`
	Session string   `help:"Only calls of this session key." placeholder:"KEY"`
	Call    string   `help:"Only the records of this call id." placeholder:"ID"`
	Limit   int      `help:"Only the newest N records (default: all)." placeholder:"N"`
	JSON    bool     `name:"json" help:"Print a JSON array of the records."`
}

// duration is a time.Duration that also takes days ("7d").
type duration time.Duration

// UnmarshalText reads a Go duration (90s, 2h30m) or a number of days (7d).
func (d *duration) UnmarshalText(b []byte) error {
	s := string(b)
	var v time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return fmt.Errorf("%q is not a duration: use e.g. 90s, 30m, 2h or 7d", s)
		}
		v = time.Duration(n * float64(24*time.Hour))
	} else {
		var err error
		if v, err = time.ParseDuration(s); err != nil {
			return fmt.Errorf("%q is not a duration: use e.g. 90s, 30m, 2h or 7d", s)
		}
	}
	if v <= 0 {
		return fmt.Errorf("%q: the duration must be positive", s)
	}
	*d = duration(v)
	return nil
}

// withLog runs fn on the audit log of the run's store.
func withLog(e *env, fn func(ctx context.Context, l *auditlog.Log) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Reading the log runs no tools: there is no workspace to keep state
	// out of. Records killed processes left in the spool are moved into the
	// log as it opens.
	tb, err := e.root(stateRoot, "")
	if err != nil {
		return err
	}
	l := tb.AuditLog()
	return fn(ctx, l)
}

func (c *auditListCmd) Run(e *env) error {
	if c.Limit < 0 {
		return errors.New("--limit must not be negative")
	}
	f := auditlog.Filter{Tool: c.Tool, Session: c.Session, CallID: c.Call, Limit: c.Limit}
	if c.Since > 0 {
		f.Since = time.Now().Add(-time.Duration(c.Since))
	}
	return withLog(e, func(ctx context.Context, l *auditlog.Log) error {
		rs, err := l.List(ctx, f)
		if err != nil {
			return err
		}
		if c.JSON {
			if rs == nil {
				rs = []audit.Record{}
			}
			return writeJSON(e.stdout, rs)
		}
		return printAudit(e, rs)
	})
}

// printAudit prints records as a table for people.
func printAudit(e *env, rs []audit.Record) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No audit records match.")
		return err
	}
	col := colorsFor(e.stdout)
	rows := [][]string{{"TIME", "CALL ID", "TOOL", "DECISION", "ERROR", "DURATION"}}
	for _, r := range rs {
		decision := r.Decision()
		if decision == "" {
			decision = "-"
		}
		if r.DryRun {
			decision += " (dry run)"
		}
		errText := "-"
		if r.IsError {
			errText = r.ErrorClass
			if errText == "" {
				errText = "error"
			}
		}
		// The call id and the tool name are the caller's: a cell shows
		// them on one line, escapes visible.
		row := []string{
			r.Time.Local().Format("2006-01-02 15:04:05"), termsafe.Line(r.CallID), termsafe.Line(r.Tool), termsafe.Line(decision), termsafe.Line(errText), roundDuration(r.Duration).String(),
		}
		if r.Kind != "" { // not a call: what recovery found, its note last (not padded)
			row = []string{row[0], "(" + r.Kind + ")", "-", "-", "-", termsafe.Line(r.Note)}
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for n, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			if i == len(row)-1 {
				line.WriteString(cell)
				break
			}
			fmt.Fprintf(&line, "%-*s  ", widths[i], cell)
		}
		text := line.String()
		switch {
		case n == 0:
			text = col.bold(text)
		case rs[n-1].IsError || rs[n-1].Decision() == "deny":
			text = col.yellow(text)
		}
		b.WriteString(text + "\n")
	}
	_, err := fmt.Fprint(e.stdout, b.String())
	return err
}

// roundDuration keeps a duration readable: whole milliseconds from a
// millisecond on, whole microseconds below.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

type auditVerifyCmd struct {
	Head string `help:"A head saved earlier (SEQ:HASH, from toolbelt audit head): the log must still hold that record unchanged, so records removed from the end or a rewritten log are found." placeholder:"SEQ:HASH"`
}

func (c *auditVerifyCmd) Run(e *env) error {
	var saved *auditlog.Head
	if c.Head != "" {
		h, err := auditlog.ParseHead(c.Head)
		if err != nil {
			return fmt.Errorf("--head: %w", err)
		}
		saved = &h
	}
	return withLog(e, func(ctx context.Context, l *auditlog.Log) error {
		var (
			sum auditlog.Summary
			err error
		)
		if saved != nil {
			sum, err = l.VerifyHead(ctx, *saved)
		} else {
			sum, err = l.Verify(ctx)
		}
		var ce *auditlog.ChainError
		switch {
		case errors.As(err, &ce):
			fmt.Fprintf(e.stdout, "Chain broken at record %d: %s.\n", ce.Seq, ce.Problem)
			return exitCode(exitToolError)
		case errors.Is(err, auditlog.ErrKeyNeeded):
			fmt.Fprintf(e.stdout, "Cannot verify: %v.\n", err)
			return exitCode(exitToolError)
		case err != nil:
			return err
		case sum.Records == 0:
			_, err := fmt.Fprintln(e.stdout, "0 records, chain intact")
			return err
		}
		noun := "records"
		if sum.Records == 1 {
			noun = "record"
		}
		against := ""
		if saved != nil {
			against = fmt.Sprintf(", and it holds the saved head's record %d unchanged", saved.Seq)
		}
		if _, err = fmt.Fprintf(e.stdout, "%d %s, chain intact (head %d:%s)%s\n", sum.Records, noun, sum.Records, sum.Head, against); err != nil {
			return err
		}
		return printDuplicates(e, sum.Duplicates)
	})
}

// printDuplicates reports records that repeat an earlier one — a call
// recorded twice — and fails the check when there are any.
func printDuplicates(e *env, ds []auditlog.Duplicate) error {
	if len(ds) == 0 {
		return nil
	}
	noun := "records repeat"
	if len(ds) == 1 {
		noun = "record repeats"
	}
	fmt.Fprintf(e.stdout, "But %d %s an earlier one (a call recorded twice):\n", len(ds), noun)
	for _, d := range ds {
		fmt.Fprintf(e.stdout, "  %s\n", termsafe.Line(d.String()))
	}
	return exitCode(exitToolError)
}

type auditHeadCmd struct {
	JSON bool `name:"json" help:"Print {\"seq\":N,\"hash\":\"…\"}."`
}

func (c *auditHeadCmd) Run(e *env) error {
	return withLog(e, func(ctx context.Context, l *auditlog.Log) error {
		h, err := l.Head(ctx)
		if err != nil {
			return err
		}
		if c.JSON {
			return writeJSON(e.stdout, h)
		}
		if h.Seq == 0 {
			_, err := fmt.Fprintln(e.stdout, "0 records: the log is empty, there is no head yet")
			return err
		}
		_, err = fmt.Fprintln(e.stdout, h)
		return err
	})
}
