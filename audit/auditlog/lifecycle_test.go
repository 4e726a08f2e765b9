package auditlog_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/store"
)

var (
	_ lifecycle.Service = (*auditlog.Spool)(nil)
	_ lifecycle.Service = (*auditlog.Writer)(nil)
)

// TestSpoolStopWithoutStartKeepsRecords: a spool never started writes its
// records to its file, and Stop (twice) leaves them there: the next spool
// started in the directory moves them into the log, once.
func TestSpoolStopWithoutStartKeepsRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	l := auditlog.New(st)
	dir := filepath.Join(t.TempDir(), "spool")
	s, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, full()); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop #%d = %v", i+1, err)
		}
	}
	if err := s.Start(ctx); err == nil {
		t.Error("Start after Stop succeeded")
	}
	if n := len(list(t, l, auditlog.Filter{})); n != 0 {
		t.Fatalf("a spool never started drained %d records", n)
	}
	next, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := next.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(list(t, l, auditlog.Filter{})); n != 1 {
		t.Errorf("the log holds %d records, want the one recovered", n)
	}
}

// TestSpoolStopCancelledLosesNothing: a Stop whose context has ended
// cancels the drain; what it did not move stays in the spool, and the
// next spool moves it in: every record is in the log once.
func TestSpoolStopCancelledLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	l := auditlog.New(st)
	dir := filepath.Join(t.TempDir(), "spool")
	s, err := l.Spool(dir, auditlog.SpoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if err := s.Append(ctx, full()); err != nil {
			t.Fatal(err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_ = s.Stop(cancelled)
	next, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := next.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(list(t, l, auditlog.Filter{})); n != 100 {
		t.Errorf("the log holds %d records, want 100", n)
	}
}

// TestWriterStopTwiceAndWithoutStart: Stop is idempotent and safe before
// Start; a stopped writer does not start again.
func TestWriterStopTwiceAndWithoutStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	for _, started := range []bool{false, true} {
		w := auditlog.New(st).Writer(auditlog.WriterOptions{})
		if started {
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := w.Append(ctx, full()); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			if err := w.Stop(ctx); err != nil {
				t.Errorf("started %v: Stop #%d = %v", started, i+1, err)
			}
		}
		if err := w.Start(ctx); err == nil {
			t.Errorf("started %v: Start after Stop succeeded", started)
		}
	}
}
