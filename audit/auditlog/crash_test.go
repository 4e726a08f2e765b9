package auditlog_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// The crash tests run a spool (or a recovery) in a child process — this
// test binary, told so by childEnv — stop it at a named point of its life
// (auditlog.WithHook) and kill it there with SIGKILL, as a crash or kill -9
// would. The child writes "ok CALLID" for every Append that returned (an
// answered call) and "at POINT" when it stops.
const childEnv = "TOOLBELT_TEST_SPOOL_CHILD"

// spoolChild is the child's program; its settings come from the
// environment: the database, the spool directory, what to do (spool:
// append records, then close; recover), the point to stop at, how many
// records, and after how many writes one is torn (cut in half, then a
// stop at "torn").
func spoolChild() int {
	var mu sync.Mutex
	in := bufio.NewScanner(os.Stdin)
	say := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Println(s)
	}
	stop := os.Getenv("STOP")
	var once sync.Once
	pause := func(point string) {
		say("at " + point)
		in.Scan()
	}
	hook := func(point string) {
		if point == stop {
			once.Do(func() { pause(point) })
		}
	}
	opts := []auditlog.Option{auditlog.WithHook(hook)}
	if torn, err := strconv.Atoi(os.Getenv("TORN")); err == nil {
		writes := 0
		opts = append(opts, auditlog.WithWrite(func(f *os.File, b []byte) (int, error) {
			if writes++; writes <= torn {
				return f.Write(b)
			}
			n, err := f.Write(b[:len(b)/2])
			if err == nil {
				pause("torn")
			}
			return n, syscall.ENOSPC
		}))
	}
	ctx := context.Background()
	st, err := store.Open(ctx, os.Getenv("DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer st.Close()
	l := auditlog.New(st, opts...)
	if os.Getenv("DO") == "recover" {
		if _, err := l.Recover(ctx, os.Getenv("DIR")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		say("done")
		return 0
	}
	s, err := l.Spool(os.Getenv("DIR"), auditlog.SpoolOptions{OnError: func(err error) { fmt.Fprintln(os.Stderr, err) }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := s.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	n, _ := strconv.Atoi(os.Getenv("RECORDS"))
	for i := range n {
		r := audit.Record{CallID: fmt.Sprintf("call-%03d", i), Tool: "write"}
		if err := s.Append(ctx, r); err == nil {
			say("ok " + r.CallID)
		}
	}
	say("appended")
	if os.Getenv("WAIT") != "" {
		in.Scan()
	}
	if err := s.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	say("done")
	return 0
}

// child is a running spoolChild.
type child struct {
	t        *testing.T
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan string
	answered []string
	stderr   strings.Builder
}

func startChild(t *testing.T, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{childEnv + "=1"}, env...)...)
	c := &child{t: t, cmd: cmd, lines: make(chan string, 1024)}
	cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

// await reads the child's lines until want, noting the answered calls.
func (c *child) await(want string) {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the child ended before %q: %s", want, c.stderr.String())
			}
			if id, ok := strings.CutPrefix(line, "ok "); ok {
				c.answered = append(c.answered, id)
			}
			if line == want {
				return
			}
		case <-deadline:
			c.t.Fatalf("no %q from the child in a minute: %s", want, c.stderr.String())
		}
	}
}

// kill kills the child with SIGKILL and waits for it to end.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

// checkOnce recovers dir into l and checks that the log holds every answered
// call exactly once, that the chain verifies with no duplicate, and that
// nothing is left in dir or in the progress table.
func checkOnce(t *testing.T, st *store.Store, dir string, answered []string) []audit.Record {
	t.Helper()
	ctx := context.Background()
	l := auditlog.New(st)
	if _, err := l.Recover(ctx, dir); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	rs := list(t, l, auditlog.Filter{})
	count := map[string]int{}
	for _, r := range rs {
		count[r.CallID]++
	}
	for _, id := range answered {
		if count[id] != 1 {
			t.Errorf("answered call %s is in the log %d times, want once", id, count[id])
		}
	}
	sum, err := l.Verify(ctx)
	if err != nil || len(sum.Duplicates) > 0 {
		t.Errorf("verify: %+v, %v", sum, err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		if e.Name() != "recover.lock" { // recoveries' lock stays
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		t.Errorf("left in the spool directory: %v", names)
	}
	if n := storetest.Count(t, st, "audit_spool"); n != 0 {
		t.Errorf("%d progress rows left", n)
	}
	return rs
}

// ageMade dates the spool files being made in dir (their process died
// before naming them) an hour back: recovery removes them once they are
// that old.
func ageMade(t *testing.T, dir string) {
	t.Helper()
	made, _ := filepath.Glob(filepath.Join(dir, "*.spool-new"))
	old := time.Now().Add(-time.Hour)
	for _, f := range made {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSpoolCrashPoints kills a process at each point of its spool's life
// and of a recovery: whatever it answered is in the log exactly once
// afterwards, the chain verifies, and nothing is left behind.
func TestSpoolCrashPoints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		// leftover: records a killed process left in the spool first,
		// for a recovery to move.
		leftover bool
		stop     string // the point the child is killed at
	}{
		{name: "spool made, not locked", env: []string{"STOP=spool-created", "RECORDS=5"}, stop: "at spool-created"},
		{name: "spool locked, not named", env: []string{"STOP=spool-locked", "RECORDS=5"}, stop: "at spool-locked"},
		{name: "written, not drained", env: []string{"RECORDS=40", "WAIT=1"}, stop: "appended"},
		{name: "some drained", env: []string{"STOP=drained", "RECORDS=300"}, stop: "at drained"},
		{name: "drained file removed, its row not", env: []string{"STOP=spool-removed", "RECORDS=20"}, stop: "at spool-removed"},
		{name: "record torn as it was written", env: []string{"TORN=3", "RECORDS=10"}, stop: "at torn"},
		{name: "recovery opened the file", env: []string{"DO=recover", "STOP=recover-opened"}, leftover: true, stop: "at recover-opened"},
		{name: "recovery locked the file", env: []string{"DO=recover", "STOP=recover-locked"}, leftover: true, stop: "at recover-locked"},
		{name: "recovery moved the records, file not removed", env: []string{"DO=recover", "STOP=recover-moved"}, leftover: true, stop: "at recover-moved"},
		{name: "recovery removed the file, its row not", env: []string{"DO=recover", "STOP=spool-removed"}, leftover: true, stop: "at spool-removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), store.DefaultFile)
			dir := filepath.Join(t.TempDir(), "spool")
			st := storetest.Open(t, db)
			common := []string{"DB=" + db, "DIR=" + dir}
			var answered []string
			if tc.leftover {
				c := startChild(t, append(common, "RECORDS=300", "WAIT=1")...)
				c.await("appended")
				c.kill()
				answered = c.answered
			}
			c := startChild(t, append(common, tc.env...)...)
			c.await(tc.stop)
			c.kill()
			answered = append(answered, c.answered...)
			ageMade(t, dir)
			rs := checkOnce(t, st, dir, answered)
			if tc.stop == "at torn" {
				last := rs[len(rs)-1]
				if len(answered) != 3 || last.Kind != audit.KindRecovery || !strings.Contains(last.Note, "a record torn as it was written") {
					t.Errorf("answered %v; last record %+v: want 3 answered, then the torn record's note", answered, last)
				}
			}
		})
	}
}

// TestRecoverDoesNotTakeASpoolBeingMade: a recovery that runs while
// another process is making its spool file (made, not yet locked) leaves
// the file to it, so the file that holds its records is in the spool
// directory for as long as it runs, for the recovery after a crash. (It
// used to lock the new, empty file first and remove it: the process then
// wrote its "durable" records to a file no recovery would ever find.)
func TestRecoverDoesNotTakeASpoolBeingMade(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"spool-created", "spool-locked"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
			dir := filepath.Join(t.TempDir(), "spool")
			other := auditlog.New(st)
			l := auditlog.New(st, auditlog.WithHook(func(p string) {
				if p == point {
					if _, err := other.Recover(ctx, dir); err != nil {
						t.Error(err)
					}
				}
			}))
			s, err := l.Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
			if err != nil {
				t.Fatalf("the spool did not start beside a recovery: %v", err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatalf("the spool did not start beside a recovery: %v", err)
			}
			for i := range 3 {
				if err := s.Append(ctx, audit.Record{CallID: fmt.Sprintf("c%d", i), Tool: "write"}); err != nil {
					t.Fatal(err)
				}
			}
			files := spoolFiles(t, dir)
			if len(files) != 1 {
				t.Fatalf("spool files while the spool runs: %v, want its own", files)
			}
			b, err := os.ReadFile(files[0])
			if err != nil || strings.Count(string(b), "\n") != 3 {
				t.Errorf("the spool file holds %q, %v: want the 3 records", b, err)
			}
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			checkOnce(t, st, dir, []string{"c0", "c1", "c2"})
		})
	}
}

// TestRecoverOnce: a spool file is recovered by one process only — when
// two recover at once, when a process starts its spool while another
// recovers, and when a recovery opened the file of a running process just
// before that process drained it, removed it and let go of it (it used to
// lock the removed file then and move its records in a second time).
func TestRecoverOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("two recoveries and a start", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), store.DefaultFile)
		dir := filepath.Join(t.TempDir(), "spool")
		st := storetest.Open(t, db)
		c := startChild(t, "DB="+db, "DIR="+dir, "RECORDS=50", "WAIT=1")
		c.await("appended")
		c.kill()
		locked, release := make(chan struct{}), make(chan struct{})
		first := auditlog.New(st, auditlog.WithHook(func(p string) {
			if p == "recover-locked" {
				close(locked)
				<-release
			}
		}))
		done := make(chan error)
		go func() {
			_, err := first.Recover(ctx, dir)
			done <- err
		}()
		<-locked
		// The first holds the file: the second recovery and a new
		// spool's leave it alone.
		if n, err := auditlog.New(st).Recover(ctx, dir); n != 0 || err != nil {
			t.Errorf("second recovery = %d, %v; want 0, nil", n, err)
		}
		s, err := auditlog.New(st).Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, audit.Record{CallID: "new", Tool: "read"}); err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		checkOnce(t, st, dir, append(c.answered, "new"))
	})
	t.Run("opened before its process removed it", func(t *testing.T) {
		t.Parallel()
		st := storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile))
		dir := filepath.Join(t.TempDir(), "spool")
		owner, err := auditlog.New(st).Spool(dir, auditlog.SpoolOptions{OnError: func(err error) { t.Error(err) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := owner.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var answered []string
		for i := range 20 {
			id := fmt.Sprintf("c%02d", i)
			if err := owner.Append(ctx, audit.Record{CallID: id, Tool: "write"}); err != nil {
				t.Fatal(err)
			}
			answered = append(answered, id)
		}
		opened, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		recoverer := auditlog.New(st, auditlog.WithHook(func(p string) {
			if p == "recover-opened" {
				once.Do(func() {
					close(opened)
					<-release
				})
			}
		}))
		done := make(chan error)
		go func() {
			_, err := recoverer.Recover(ctx, dir)
			done <- err
		}()
		<-opened
		// The owner drains its file, removes it and lets go of its lock
		// while the recovery holds it open.
		if err := owner.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		checkOnce(t, st, dir, answered)
	})
}
