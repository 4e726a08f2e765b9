package auditlog_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// states collects what OnState is told.
type states struct {
	mu   sync.Mutex
	seen []error
}

func (s *states) add(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, err)
}

func (s *states) get() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.seen...)
}

// eventually waits up to a minute for ok to hold.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after a minute: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// callIDs lists the call ids of the log's records, oldest first.
func callIDs(t *testing.T, l *auditlog.Log) []string {
	t.Helper()
	var ids []string
	for _, r := range list(t, l, auditlog.Filter{}) {
		ids = append(ids, r.CallID+r.Kind)
	}
	return ids
}

// wholeLines checks that a spool file holds whole records only.
func wholeLines(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("the spool file ends with part of a line: %q", b[bytes.LastIndexByte(b, '\n')+1:])
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("the spool file holds a line that is not a record: %q", sc.Text())
		}
	}
}

// TestSpoolFullDiskIsAState: writes cut short by a full disk (half of the
// bytes written, then ENOSPC) leave the spool file with whole records
// only; the records are kept and the spool says once that records are not
// durable; once the disk has room again a retry writes them, in order, and
// the spool says once that they are durable again. Every record reaches
// the log once.
func TestSpoolFullDiskIsAState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	dir := filepath.Join(t.TempDir(), "spool")
	var full atomic.Bool
	var cut atomic.Int32
	l := auditlog.New(st, auditlog.WithWrite(func(f *os.File, b []byte) (int, error) {
		if !full.Load() {
			return f.Write(b)
		}
		cut.Add(1)
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}))
	var told states
	s, err := l.Spool(dir, auditlog.SpoolOptions{OnState: told.add, OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	appendID := func(id string) error { return s.Append(ctx, audit.Record{CallID: id, Tool: "write"}) }
	for i := range 3 {
		if err := appendID(fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Durable(); err != nil {
		t.Fatalf("Durable before the disk filled: %v", err)
	}
	full.Store(true)
	for i := 3; i < 8; i++ {
		err := appendID(fmt.Sprintf("c%d", i))
		if !errors.Is(err, audit.ErrNotDurable) || !strings.Contains(err.Error(), "no space left on device") {
			t.Fatalf("Append on a full disk = %v, want ErrNotDurable saying no space is left", err)
		}
	}
	if err := s.Durable(); !errors.Is(err, audit.ErrNotDurable) || err.Error() != "audit records cannot be made durable: no space left on device" {
		t.Errorf("Durable on a full disk = %v", err)
	}
	if cut.Load() == 0 {
		t.Fatal("no write was cut short")
	}
	wholeLines(t, spoolFiles(t, dir)[0])
	if got := told.get(); len(got) != 1 || !errors.Is(got[0], audit.ErrNotDurable) {
		t.Errorf("OnState told %v, want once that records are not durable", got)
	}
	full.Store(false)
	eventually(t, "records durable again once the disk has room", func() bool { return s.Durable() == nil })
	if err := appendID("c8"); err != nil {
		t.Fatal(err)
	}
	if got := told.get(); len(got) != 2 || got[1] != nil {
		t.Errorf("OnState told %v, want once more, nil, when records were durable again", got)
	}
	wholeLines(t, spoolFiles(t, dir)[0])
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if ids := fmt.Sprint(callIDs(t, l)); ids != "[c0 c1 c2 c3 c4 c5 c6 c7 c8]" {
		t.Errorf("log %s, want every record once, in order", ids)
	}
	if sum, err := l.Verify(ctx); err != nil || len(sum.Duplicates) > 0 {
		t.Errorf("verify %+v, %v", sum, err)
	}
}

// failWrites makes the log's inserts fail as a full database would, until
// the returned function is called.
func failWrites(t *testing.T, st *store.Store) (heal func()) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string) {
		if err := st.Write(ctx, func(tx *store.Tx) error { _, err := tx.Exec(ctx, q); return err }); err != nil {
			t.Fatal(err)
		}
	}
	exec("CREATE TRIGGER audit_full BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
	return func() { exec("DROP TRIGGER audit_full") }
}

// TestDrainResumes: a drain whose database writes fail keeps trying, with
// backoff, and moves the records in once the database takes them again
// (it used to stop for the rest of the process's life at the first
// failure); meanwhile the records are durable in the spool, and appends go
// on.
func TestDrainResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	l := auditlog.New(st)
	heal := failWrites(t, st)
	failed := make(chan error, 16)
	s, err := l.Spool(filepath.Join(t.TempDir(), "spool"), auditlog.SpoolOptions{OnError: func(err error) {
		select {
		case failed <- err:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	for i := range 10 {
		if err := s.Append(ctx, audit.Record{CallID: fmt.Sprintf("c%d", i), Tool: "read"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-failed; !strings.Contains(err.Error(), "database or disk is full") {
		t.Errorf("the drain's error: %v", err)
	}
	if ids := callIDs(t, l); len(ids) != 0 {
		t.Fatalf("records in the log while it fails: %v", ids)
	}
	heal()
	eventually(t, "the records in the log once the database takes them", func() bool { return len(callIDs(t, l)) == 10 })
	if err := s.Append(ctx, audit.Record{CallID: "c10", Tool: "read"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if ids := fmt.Sprint(callIDs(t, l)); ids != "[c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10]" {
		t.Errorf("log %s", ids)
	}
}

// TestWriterResumes: the group-commit writer (PostgreSQL's path) keeps the
// records of failed commits, says once that records are not durable,
// retries with backoff and commits every record once, in order, when the
// database takes them again.
func TestWriterResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	l := auditlog.New(st)
	var told states
	w := l.Writer(auditlog.WriterOptions{OnState: told.add})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	if err := w.Append(ctx, audit.Record{CallID: "c0", Tool: "read"}); err != nil {
		t.Fatal(err)
	}
	heal := failWrites(t, st)
	for i := 1; i < 5; i++ {
		if err := w.Append(ctx, audit.Record{CallID: fmt.Sprintf("c%d", i), Tool: "read"}); !errors.Is(err, audit.ErrNotDurable) {
			t.Fatalf("Append while commits fail = %v, want ErrNotDurable", err)
		}
	}
	if err := w.Durable(); !errors.Is(err, audit.ErrNotDurable) {
		t.Errorf("Durable while commits fail = %v", err)
	}
	heal()
	eventually(t, "records durable again", func() bool { return w.Durable() == nil })
	if err := w.Append(ctx, audit.Record{CallID: "c5", Tool: "read"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := told.get(); len(got) != 2 || got[0] == nil || got[1] != nil {
		t.Errorf("OnState told %v, want once not durable, once durable again", got)
	}
	if ids := fmt.Sprint(callIDs(t, l)); ids != "[c0 c1 c2 c3 c4 c5]" {
		t.Errorf("log %s", ids)
	}
}

// TestVerifyFindsDuplicates: a call recorded twice — the same content under
// two records, or one record id twice (its unique index gone) — is
// reported, though the chain is intact.
func TestVerifyFindsDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	l := auditlog.New(st)
	once := full()
	other := full()
	other.CallID, other.Duration = "another-call", time.Second
	appendAll(t, l, once, other, once) // record 3 repeats record 1
	if err := st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "DROP INDEX audit_log_record")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	again := audit.Record{ID: "the-same-id", CallID: "c-a", Tool: "read"}
	appendAll(t, l, again)
	again.CallID = "c-b"
	appendAll(t, l, again) // record 5 has record 4's id
	sum, err := l.Verify(ctx)
	if err != nil || sum.Records != 5 {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}
	want := []auditlog.Duplicate{
		{Seq: 3, Of: 1, CallID: full().CallID, Same: "call and content"},
		{Seq: 5, Of: 4, CallID: "c-b", Same: "record id"},
	}
	if fmt.Sprint(sum.Duplicates) != fmt.Sprint(want) {
		t.Errorf("duplicates %v, want %v", sum.Duplicates, want)
	}
}

// TestSpoolOnAFullFileSystem runs a spool on a real file system that fills
// up (a small tmpfs; root only): the space the spool keeps ahead lets the
// records of calls under way be written, records stop being durable once
// that space cannot be kept, and everything reaches the log once the file
// system has room again.
func TestSpoolOnAFullFileSystem(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, "4m")
	ctx := context.Background()
	st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
	l := auditlog.New(st)
	var told states
	s, err := l.Spool(filepath.Join(dir, "spool"), auditlog.SpoolOptions{OnState: told.add, OnError: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	filler := fill(t, dir)
	var answered []string
	n := 0
	for ; s.Durable() == nil && n < 5000; n++ {
		id := fmt.Sprintf("c%04d", n)
		if err := s.Append(ctx, audit.Record{CallID: id, Tool: "write", Arguments: json.RawMessage(`{"path":"notes.txt"}`)}); err != nil {
			t.Fatalf("Append %d on a file system just filled: %v (the space kept ahead should take it)", n, err)
		}
		answered = append(answered, id)
	}
	if err := s.Durable(); !errors.Is(err, audit.ErrNotDurable) {
		t.Fatalf("after %d records on a full file system: Durable = %v", n, err)
	}
	// Records still go into the space kept, then into memory.
	kept := 0
	for i := range 8000 {
		id := fmt.Sprintf("r%04d", i)
		err := s.Append(ctx, audit.Record{CallID: id, Tool: "read"})
		switch {
		case errors.Is(err, audit.ErrNotDurable):
			kept++
		case err != nil:
			t.Fatal(err)
		}
		answered = append(answered, id)
	}
	if kept == 0 {
		t.Fatal("no record was kept in memory: the space kept ahead was never used up")
	}
	t.Logf("%d records written on the full file system, then %d kept in memory", n+8000-kept, kept)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	eventually(t, "records durable again once the file system has room", func() bool { return s.Durable() == nil })
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := told.get(); len(got) != 2 || got[1] != nil {
		t.Errorf("OnState told %v, want not durable, then durable again", got)
	}
	if ids := callIDs(t, l); fmt.Sprint(ids) != fmt.Sprint(answered) {
		t.Errorf("%d records in the log, %d appended; want each once, in order", len(ids), len(answered))
	}
}

// mountTmpfs mounts a tmpfs of the size given on a temporary directory for
// the test; it skips the test when this process may not mount (not root).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mounting a %s tmpfs to fill up needs root (CAP_SYS_ADMIN): %v", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Error(err)
		}
	})
	return dir
}

// fill writes a file in dir until its file system is full and returns its
// path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}
