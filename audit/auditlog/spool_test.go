package auditlog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.spool"))
	return m
}

func TestSpoolAppendsAndDrains(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := filepath.Join(t.TempDir(), "spool")
		l := auditlog.New(st)
		var errs []error
		s, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { errs = append(errs, err) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if len(spoolFiles(t, dir)) != 1 {
			t.Fatal("no spool file while the spool runs")
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 50 {
					r := full()
					r.CallID = fmt.Sprintf("g%d-%02d", g, i)
					if err := s.Append(ctx, r); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if err := s.Stop(ctx); err != nil || len(errs) > 0 {
			t.Fatal(err, errs)
		}
		rs := list(t, l, auditlog.Filter{})
		if len(rs) != 200 {
			t.Fatalf("%d records after Close, want 200", len(rs))
		}
		if want := string(audit.Redact(full().Arguments)); string(rs[0].Arguments) != want {
			t.Errorf("arguments %s, want %s", rs[0].Arguments, want)
		}
		if sum, err := l.Verify(ctx); err != nil || sum.Records != 200 {
			t.Errorf("verify %+v %v", sum, err)
		}
		if f := spoolFiles(t, dir); len(f) != 0 {
			t.Errorf("spool files left after Close: %v", f)
		}
		if n := storetest.Count(t, st, "audit_spool"); n != 0 {
			t.Errorf("%d progress rows left", n)
		}
		if err := s.Append(ctx, full()); err == nil {
			t.Error("append after Close accepted")
		}
	})
}

// TestSpoolDrainsAStreamWithoutClose: records appended one after another
// (the drain gathers them while it lingers) all reach the log while the
// spool runs, the last ones too, in order.
func TestSpoolDrainsAStreamWithoutClose(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := auditlog.New(st)
		s, err := l.Spool(filepath.Join(t.TempDir(), "spool"), auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		const n = 120
		for i := range n {
			r := full()
			r.CallID = fmt.Sprintf("c%03d", i)
			if err := s.Append(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		var rs []audit.Record
		for {
			rs = list(t, l, auditlog.Filter{})
			if len(rs) == n || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if len(rs) != n {
			t.Fatalf("%d of %d records in the log while the spool runs", len(rs), n)
		}
		for i, r := range rs {
			if want := fmt.Sprintf("c%03d", i); r.CallID != want {
				t.Fatalf("record %d is %s, want %s", i, r.CallID, want)
			}
		}
		if sum, err := l.Verify(ctx); err != nil || sum.Records != n {
			t.Errorf("verify %+v %v", sum, err)
		}
	})
}

// TestRecoverMovesWhatACrashLeft: a spool file left by a process that died
// (some of it drained, a last line cut short) is moved into the log once;
// the torn end is cut off and recorded as such.
func TestRecoverMovesWhatACrashLeft(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := t.TempDir()
		l := auditlog.New(st)
		appendAll(t, l, full())
		line := func(id string) string {
			r := full()
			r.CallID = id
			r.Arguments = json.RawMessage(`{"command":"ls -la"}`)
			b, _ := json.Marshal(r)
			return string(b) + "\n"
		}
		drained, rest, torn := line("drained-before-the-crash"), line("left-1")+line("left-2"), `{"seq":0,"callId":"cut-sho`
		name := "4242-deadbeef.spool"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(drained+rest+torn), 0o600); err != nil {
			t.Fatal(err)
		}
		err := st.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO audit_spool (file, drained) VALUES (?, ?)", name, len(drained))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := l.Recover(ctx, dir)
		if err != nil || n != 2 {
			t.Fatalf("Recover = %d, %v; want 2", n, err)
		}
		var ids []string
		rs := list(t, l, auditlog.Filter{})
		for _, r := range rs {
			ids = append(ids, r.CallID+r.Kind)
		}
		if fmt.Sprint(ids) != fmt.Sprint([]string{full().CallID, "left-1", "left-2", audit.KindRecovery}) {
			t.Fatalf("records %v", ids)
		}
		want := fmt.Sprintf("dropped the last %d bytes of the audit spool %s: a record torn as it was written", len(torn), name)
		if note := rs[3].Note; !strings.HasPrefix(note, want) {
			t.Errorf("recovery record %q, want it to start %q", note, want)
		}
		if _, err := l.Verify(ctx); err != nil {
			t.Error(err)
		}
		if f := spoolFiles(t, dir); len(f) != 0 || storetest.Count(t, st, "audit_spool") != 0 {
			t.Errorf("left after recovery: %v, %d rows", f, storetest.Count(t, st, "audit_spool"))
		}
		if n, err := l.Recover(ctx, dir); n != 0 || err != nil {
			t.Errorf("second Recover = %d, %v", n, err)
		}
	})
}

// TestSpoolRecoversWhatEarlierProcessesLeft: a spool started in a
// directory holding another process's leftover file moves its records into
// the log before its own.
func TestSpoolRecoversWhatEarlierProcessesLeft(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := t.TempDir()
		l := auditlog.New(st)
		var b strings.Builder
		for _, id := range []string{"left-1", "left-2"} {
			r := full()
			r.CallID = id
			line, _ := json.Marshal(r)
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, "4242-cafe.spool"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		recovered := make(chan int, 1)
		s, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }, OnRecover: func(n int) { recovered <- n }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		own := full()
		own.CallID = "own"
		if err := s.Append(ctx, own); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if n := <-recovered; n != 2 {
			t.Errorf("OnRecover told %d records, want 2", n)
		}
		var ids []string
		for _, r := range list(t, l, auditlog.Filter{}) {
			ids = append(ids, r.CallID)
		}
		if fmt.Sprint(ids) != "[left-1 left-2 own]" {
			t.Errorf("records %v, want the left ones first", ids)
		}
		if f := spoolFiles(t, dir); len(f) != 0 {
			t.Errorf("spool files left: %v", f)
		}
	})
}

// TestRecoverLeavesLiveSpools: the spool of a running process is locked;
// recovering alongside it adds no record twice.
func TestRecoverLeavesLiveSpools(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := t.TempDir()
		l := auditlog.New(st)
		s, err := l.Spool(dir, auditlog.SpoolOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for range 30 {
			if err := s.Append(ctx, full()); err != nil {
				t.Fatal(err)
			}
			if _, err := auditlog.New(st).Recover(ctx, dir); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if rs := list(t, l, auditlog.Filter{}); len(rs) != 30 {
			t.Errorf("%d records, want 30", len(rs))
		}
	})
}

// TestRecoverSetsAsideAGarbledLine: a line that is not a record, with
// records after it, neither stops the recovery of the file nor is lost: it
// is set aside beside the spool, recorded in its place, and the records
// around it are recovered.
func TestRecoverSetsAsideAGarbledLine(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	ctx := context.Background()
	dir := t.TempDir()
	l := auditlog.New(st)
	line := func(id string) string {
		r := full()
		r.CallID = id
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	garbled := "not json\n"
	if err := os.WriteFile(filepath.Join(dir, "1-ab.spool"), []byte(line("before")+garbled+line("after")), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := l.Recover(ctx, dir)
	if n != 2 || err != nil {
		t.Fatalf("Recover = %d, %v; want 2 records", n, err)
	}
	rs := list(t, l, auditlog.Filter{})
	if len(rs) != 3 || rs[0].CallID != "before" || rs[1].Kind != audit.KindRecovery || rs[2].CallID != "after" {
		t.Fatalf("records %+v", rs)
	}
	aside := filepath.Join(dir, fmt.Sprintf("1-ab-at-%d.garbled", len(line("before"))))
	if b, err := os.ReadFile(aside); err != nil || string(b) != garbled {
		t.Errorf("set aside: %q, %v", b, err)
	}
	if !strings.Contains(rs[1].Note, "set aside in "+aside) {
		t.Errorf("recovery record %q does not say where the line went", rs[1].Note)
	}
	if f := spoolFiles(t, dir); len(f) != 0 {
		t.Errorf("spool files left: %v", f)
	}
	if _, err := l.Verify(ctx); err != nil {
		t.Error(err)
	}
}

// TestSpoolRecordIsWrittenWhenAppendReturns: callers appending at once
// (one of them writes for the others) each find their record's line in the
// spool file when Append returns; a Close among them keeps every record
// whose Append succeeded, in each caller's order, and refuses the later
// ones.
func TestSpoolRecordIsWrittenWhenAppendReturns(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "spool")
	l := auditlog.New(st)
	s, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	files := spoolFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("spool files %v", files)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted = map[string]bool{}
	)
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				r := full()
				r.CallID = fmt.Sprintf("g%d-%02d", g, i)
				if err := s.Append(ctx, r); err != nil {
					if !strings.Contains(err.Error(), "the spool is closed") {
						t.Error(err)
					}
					return
				}
				b, err := os.ReadFile(files[0])
				if err != nil && !os.IsNotExist(err) {
					t.Error(err)
					return
				}
				// After Close the file is gone: the record is in the log.
				if err == nil && !strings.Contains(string(b), `"callId":"`+r.CallID+`"`) {
					t.Errorf("Append of %s returned before its line was written", r.CallID)
				}
				mu.Lock()
				accepted[r.CallID] = true
				mu.Unlock()
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	rs := list(t, l, auditlog.Filter{})
	if len(rs) != len(accepted) {
		t.Fatalf("%d records in the log, %d appends succeeded", len(rs), len(accepted))
	}
	last := map[string]int{}
	for _, r := range rs {
		if !accepted[r.CallID] {
			t.Errorf("record %s in the log, its Append failed", r.CallID)
		}
		var g, i int
		fmt.Sscanf(r.CallID, "g%d-%d", &g, &i)
		if prev, ok := last[fmt.Sprint(g)]; ok && i != prev+1 {
			t.Errorf("caller %d: record %d after %d", g, i, prev)
		}
		last[fmt.Sprint(g)] = i
	}
	if sum, err := l.Verify(ctx); err != nil || sum.Records != int64(len(accepted)) {
		t.Errorf("verify %+v %v", sum, err)
	}
}
