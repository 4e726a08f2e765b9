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
			r.Time.Local().Format("2006-01-02 15:04:05"), termsafe.Line(r.CallID), termsafe.Line(r.Tool), termsafe.Line(decision), termsafe.Line(errText), audit.Rounded(r.Duration).String(),
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

type auditVerifyCmd struct {
	Head string `help:"A head saved earlier (SEQ:HASH, from toolbelt audit head): the log must still hold that record unchanged, so records removed from the end or a rewritten log are found." placeholder:"SEQ:HASH"`
	JSON bool   `name:"json" help:"Print JSON: {intact, records, head, savedHead, keyed, break: {record, reason}, duplicates, error}."`
}

// verifyReport is what toolbelt audit verify found.
type verifyReport struct {
	// Intact says the chain is intact (duplicates aside); Records is how
	// many records it holds and Head its newest record, when it is.
	Intact  bool           `json:"intact"`
	Records int64          `json:"records"`
	Head    *auditlog.Head `json:"head,omitempty"`
	// SavedHead is the head given with --head.
	SavedHead *auditlog.Head `json:"savedHead,omitempty"`
	// Keyed says the log is an HMAC chain.
	Keyed bool `json:"keyed"`
	// Break is the first record where the chain is broken.
	Break *chainBreak `json:"break,omitempty"`
	// Duplicates are the records that repeat an earlier one.
	Duplicates []auditlog.Duplicate `json:"duplicates"`
	// Error says why the log could not be verified (a keyed log without
	// its key).
	Error string `json:"error,omitempty"`
}

// chainBreak is where a chain is broken and why.
type chainBreak struct {
	Record int64  `json:"record"`
	Reason string `json:"reason"`
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
		r, err := verify(ctx, l, saved)
		if err != nil {
			return err
		}
		if c.JSON {
			err = writeJSON(e.stdout, r)
		} else {
			err = printVerify(e, r)
		}
		if err == nil && (!r.Intact || len(r.Duplicates) > 0) {
			err = exitCode(exitToolError)
		}
		return err
	})
}

// verify checks l (against saved, when given); its error is the
// database's.
func verify(ctx context.Context, l *auditlog.Log, saved *auditlog.Head) (*verifyReport, error) {
	var (
		sum auditlog.Summary
		err error
	)
	if saved != nil {
		sum, err = l.VerifyHead(ctx, *saved)
	} else {
		sum, err = l.Verify(ctx)
	}
	r := &verifyReport{SavedHead: saved, Keyed: l.Keyed(), Duplicates: []auditlog.Duplicate{}}
	var ce *auditlog.ChainError
	switch {
	case errors.As(err, &ce):
		r.Break = &chainBreak{ce.Seq, ce.Problem}
	case errors.Is(err, auditlog.ErrKeyNeeded):
		r.Keyed, r.Error = true, err.Error()
	case err != nil:
		return nil, err
	default:
		r.Intact, r.Records = true, sum.Records
		if sum.Duplicates != nil {
			r.Duplicates = sum.Duplicates
		}
		if sum.Records > 0 {
			r.Head = &auditlog.Head{Seq: sum.Records, Hash: sum.Head}
		}
	}
	return r, nil
}

// printVerify prints what verify found for people.
func printVerify(e *env, r *verifyReport) error {
	switch {
	case r.Break != nil:
		_, err := fmt.Fprintf(e.stdout, "Chain broken at record %d: %s.\n", r.Break.Record, r.Break.Reason)
		return err
	case r.Error != "":
		_, err := fmt.Fprintf(e.stdout, "Cannot verify: %s.\n", r.Error)
		return err
	case r.Records == 0:
		_, err := fmt.Fprintln(e.stdout, "0 records, chain intact")
		return err
	}
	noun := "records"
	if r.Records == 1 {
		noun = "record"
	}
	against := ""
	if r.SavedHead != nil {
		against = fmt.Sprintf(", and it holds the saved head's record %d unchanged", r.SavedHead.Seq)
	}
	if _, err := fmt.Fprintf(e.stdout, "%d %s, chain intact (head %s)%s\n", r.Records, noun, r.Head, against); err != nil {
		return err
	}
	return printDuplicates(e, r.Duplicates)
}

// printDuplicates reports records that repeat an earlier one — a call
// recorded twice.
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
	return nil
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
