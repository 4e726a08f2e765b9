package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// The workspace the intents of these tests are kept in.
const intentWorkspace = "/home/you/project"

// intentCtx carries the scope of a call in intentWorkspace.
func intentCtx() context.Context {
	return tool.WithScope(context.Background(), tool.Scope{Workspace: intentWorkspace, Session: "s1"})
}

// anIntent is call's intent to change two files.
func anIntent(call string) tool.Intent {
	return tool.Intent{CallID: call, Tool: "apply_patch", Arguments: json.RawMessage(`{"patch":"…"}`), Caller: tool.Identity{AgentID: "main", SessionKey: "s1", Channel: "mcp", Owner: true},
		Changes: []tool.FileChange{
			{Path: "a.txt", Existed: true, Before: []byte("a0"), Mode: 0o644, Exists: true, After: []byte("a1"), AfterSHA256: "00"},
			{Path: "b.txt", Exists: true, After: []byte("b1"), AfterSHA256: "01"},
		}}
}

// visible returns the changes undo sees for call.
func visible(t *testing.T, j *store.Journal, call string) []tool.FileChange {
	t.Helper()
	cs, err := j.Changes(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestIntentLifecycle: an intent's changes are the call's journal entry
// only once it is closed — made (at once, or once answered with
// AwaitAnswers, in either order) — and go when it is dropped.
func TestIntentLifecycle(t *testing.T) {
	t.Parallel()
	type step func(ctx context.Context, j *store.Journal, call string) error
	made := func(ctx context.Context, j *store.Journal, call string) error { return j.Made(ctx, call) }
	answered := func(ctx context.Context, j *store.Journal, call string) error { return j.Answered(ctx, call, true) }
	dropped := func(ctx context.Context, j *store.Journal, call string) error { return j.Dropped(ctx, call, true) }
	for _, c := range []struct {
		name    string
		await   bool
		steps   []step
		visible bool // the changes are the call's after the steps
		open    int  // intents kept after the steps
	}{
		{"made", false, []step{made}, true, 0},
		{"dropped", false, []step{dropped}, false, 0},
		{"made, awaiting the answer", true, []step{made}, false, 1},
		{"made, then answered", true, []step{made, answered}, true, 0},
		{"answered, then made (a call abandoned at its time limit)", true, []step{answered, made}, true, 0},
		{"dropped, awaiting the answer", true, []step{dropped, answered}, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, st *store.Store) {
				ctx := intentCtx()
				j := st.Journal(store.JournalOptions{AwaitAnswers: c.await})
				in := anIntent("call-1")
				if err := j.Intend(ctx, in); err != nil {
					t.Fatal(err)
				}
				if cs := visible(t, j, "call-1"); len(cs) != 0 {
					t.Fatalf("the changes of an open intent are visible: %+v", cs)
				}
				for _, s := range c.steps {
					if err := s(ctx, j, "call-1"); err != nil {
						t.Fatal(err)
					}
				}
				got := visible(t, j, "call-1")
				switch {
				case c.visible && !reflect.DeepEqual(got, in.Changes):
					t.Errorf("changes = %+v, want %+v", got, in.Changes)
				case !c.visible && len(got) != 0:
					t.Errorf("changes = %+v, want none", got)
				}
				if n := storetest.Count(t, st, "file_intents"); n != c.open {
					t.Errorf("%d intents kept, want %d", n, c.open)
				}
				if c.visible {
					if ws, err := j.Workspaces(ctx, "call-1"); err != nil || !reflect.DeepEqual(ws, []string{intentWorkspace}) {
						t.Errorf("Workspaces = %v, %v", ws, err)
					}
				}
			})
		})
	}
}

// TestClosedChangeStaysVisible: a call's journal entry stays the call's
// while later intents come and go; the ids of closed intents are never
// given again.
func TestClosedChangeStaysVisible(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := intentCtx()
		j := st.Journal(store.JournalOptions{})
		if err := j.Intend(ctx, anIntent("call-1")); err != nil {
			t.Fatal(err)
		}
		if err := j.Made(ctx, "call-1"); err != nil {
			t.Fatal(err)
		}
		for _, call := range []string{"call-2", "call-3"} {
			if err := j.Intend(ctx, anIntent(call)); err != nil {
				t.Fatal(err)
			}
			if cs := visible(t, j, "call-1"); len(cs) != 2 {
				t.Fatalf("while %s changes files, call-1's entry is %+v", call, cs)
			}
			if err := j.Dropped(ctx, call, true); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestIntendRefuses: what cannot be an intent is refused, and nothing is
// kept.
func TestIntendRefuses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := intentCtx()
		j := st.Journal(store.JournalOptions{})
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		noPath := anIntent("call-3")
		noPath.Changes[1].Path = ""
		for _, c := range []struct {
			name string
			ctx  context.Context
			in   tool.Intent
			want string
		}{
			{"no call id", ctx, tool.Intent{Changes: anIntent("").Changes}, `the call id ("") and the changes (2) must not be empty`},
			{"no change", ctx, tool.Intent{CallID: "call-2"}, `the call id ("call-2") and the changes (0) must not be empty`},
			{"a change without a path", ctx, noPath, "a change has no path"},
			{"a cancelled call", cancelled, anIntent("call-4"), "context canceled"},
		} {
			if err := j.Intend(c.ctx, c.in); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: Intend = %v, want %q", c.name, err, c.want)
			}
		}
		if err := j.Intend(ctx, anIntent("call-1")); err != nil {
			t.Fatal(err)
		}
		if err := j.Intend(ctx, anIntent("call-1")); err == nil || !strings.Contains(err.Error(), "already changing files") {
			t.Errorf("a second intent of a call under way: %v", err)
		}
		if err := j.Made(ctx, "call-none"); err == nil {
			t.Error("Made of a call with no intent succeeded")
		}
		if n := storetest.Count(t, st, "file_intents"); n != 1 {
			t.Errorf("%d intents kept, want 1", n)
		}
	})
}

// settled counts the intents a Recover settled, by call.
type settled struct {
	mu    sync.Mutex
	calls map[string]int
	last  store.Interrupted
}

func (s *settled) settle(kept bool, err error) func(context.Context, store.Interrupted) (bool, error) {
	return func(_ context.Context, in store.Interrupted) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.calls == nil {
			s.calls = map[string]int{}
		}
		s.calls[in.CallID]++
		s.last = in
		return kept, err
	}
}

// TestRecoverTakesOnlyEndedProcesses: the intent of a process that runs
// is left alone; once it has ended (its store closed, as a killed process's
// lock goes), another process settles it, with everything it was kept
// with, and a change kept becomes the call's journal entry. The process's
// own intents are its own.
func TestRecoverTakesOnlyEndedProcesses(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := intentCtx()
		first := storetest.Open(t, dsn)
		in := anIntent("call-1")
		if err := first.Journal(store.JournalOptions{}).Intend(ctx, in); err != nil {
			t.Fatal(err)
		}
		second := storetest.Open(t, dsn).Journal(store.JournalOptions{})
		var s settled
		for _, j := range []*store.Journal{first.Journal(store.JournalOptions{}), second} {
			if n, err := j.Recover(ctx, intentWorkspace, nil, s.settle(true, nil)); n != 0 || err != nil {
				t.Fatalf("Recover while the process runs = %d, %v", n, err)
			}
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := second.Recover(ctx, "/another/workspace", nil, s.settle(true, nil)); n != 0 || err != nil {
			t.Fatalf("Recover of another workspace = %d, %v", n, err)
		}
		if n, err := second.Recover(ctx, intentWorkspace, nil, s.settle(true, nil)); n != 1 || err != nil {
			t.Fatalf("Recover = %d, %v; want 1", n, err)
		}
		want := store.Interrupted{Intent: in, Workspace: intentWorkspace, Time: s.last.Time}
		if !reflect.DeepEqual(s.last, want) || s.last.Time.IsZero() {
			t.Errorf("settled %+v\nwant %+v", s.last, want)
		}
		if got := visible(t, second, "call-1"); !reflect.DeepEqual(got, in.Changes) {
			t.Errorf("changes after recovery = %+v", got)
		}
		if n, err := second.Recover(ctx, intentWorkspace, nil, s.settle(true, nil)); n != 0 || err != nil || s.calls["call-1"] != 1 {
			t.Errorf("a second Recover = %d, %v (settled %d times)", n, err, s.calls["call-1"])
		}
	})
}

// TestRecoverRollsBackOrRetries: a change settled as not kept leaves no
// journal entry; one whose settle fails is left, and settled by the next
// Recover.
func TestRecoverRollsBackOrRetries(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := intentCtx()
		dead := storetest.Open(t, dsn)
		for _, call := range []string{"call-1", "call-2"} {
			if err := dead.Journal(store.JournalOptions{}).Intend(ctx, anIntent(call)); err != nil {
				t.Fatal(err)
			}
		}
		dead.Close()
		st := storetest.Open(t, dsn)
		j := st.Journal(store.JournalOptions{})
		var s settled
		fails := errors.New("the audit log is full")
		n, err := j.Recover(ctx, intentWorkspace, nil, s.settle(false, fails))
		if n != 0 || !errors.Is(err, fails) {
			t.Fatalf("Recover = %d, %v; want 0 and the settle's error", n, err)
		}
		if n, err := j.Recover(ctx, intentWorkspace, nil, s.settle(false, nil)); n != 2 || err != nil {
			t.Fatalf("Recover again = %d, %v; want 2", n, err)
		}
		if s.calls["call-1"] != 2 || s.calls["call-2"] != 2 {
			t.Errorf("settled %v, want each call twice", s.calls)
		}
		if cs := visible(t, j, "call-1"); len(cs) != 0 {
			t.Errorf("a change rolled back left %+v", cs)
		}
		if n := storetest.Count(t, st, "file_changes"); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
}

// TestRecoverOnceAtOnce: processes that recover at once settle each
// intent once between them, and a recovering process that ends midway
// leaves its claim to the next.
func TestRecoverOnceAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := intentCtx()
		dead := storetest.Open(t, dsn)
		const calls = 20
		for i := range calls {
			if err := dead.Journal(store.JournalOptions{}).Intend(ctx, anIntent("call-"+string(rune('a'+i)))); err != nil {
				t.Fatal(err)
			}
		}
		dead.Close()
		// A recovering process that ends after claiming an intent: its
		// store closes inside settle, so the claim stays its own.
		quitter := storetest.Open(t, dsn)
		var s settled
		var quit atomic.Bool
		_, err := quitter.Journal(store.JournalOptions{}).Recover(ctx, intentWorkspace, nil, func(ctx context.Context, in store.Interrupted) (bool, error) {
			if quit.CompareAndSwap(false, true) {
				quitter.Close()
			}
			return false, errors.New("ended")
		})
		if err == nil {
			t.Fatal("the quitter's Recover succeeded")
		}
		var wg sync.WaitGroup
		total := atomic.Int64{}
		for range 4 {
			j := storetest.Open(t, dsn).Journal(store.JournalOptions{})
			wg.Go(func() {
				n, err := j.Recover(ctx, intentWorkspace, nil, s.settle(true, nil))
				if err != nil {
					t.Error(err)
				}
				total.Add(int64(n))
			})
		}
		wg.Wait()
		if total.Load() != calls || len(s.calls) != calls {
			t.Fatalf("settled %d intents of %d calls, want %d", total.Load(), len(s.calls), calls)
		}
		for call, n := range s.calls {
			if n != 1 {
				t.Errorf("%s settled %d times", call, n)
			}
		}
	})
}

// TestRecoverLeavesOtherSites: a process with another lock directory (on
// another machine, with PostgreSQL) cannot tell whether the intent's
// process runs, so it leaves the intent alone; InterruptedIn names the
// intent's workspace to processes of its own site only.
func TestRecoverLeavesOtherSites(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := intentCtx()
		dead := storetest.Open(t, dsn)
		if err := dead.Journal(store.JournalOptions{}).Intend(ctx, anIntent("call-1")); err != nil {
			t.Fatal(err)
		}
		dead.Close()
		elsewhere, err := store.Open(ctx, dsn, store.LockDir(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		defer elsewhere.Close()
		j := elsewhere.Journal(store.JournalOptions{})
		var s settled
		if n, err := j.Recover(ctx, intentWorkspace, nil, s.settle(true, nil)); n != 0 || err != nil {
			t.Errorf("Recover from another site = %d, %v", n, err)
		}
		if ws, err := j.InterruptedIn(ctx, "call-1"); err != nil || len(ws) != 0 {
			t.Errorf("InterruptedIn from another site = %v, %v", ws, err)
		}
		here := storetest.Open(t, dsn).Journal(store.JournalOptions{})
		if ws, err := here.InterruptedIn(ctx, "call-1"); err != nil || !reflect.DeepEqual(ws, []string{intentWorkspace}) {
			t.Errorf("InterruptedIn = %v, %v", ws, err)
		}
	})
}

// TestUnfinishedChangesWaitForTheirProcess: with AwaitAnswers, a call
// whose answer could not be recorded, and a change stopped half made, keep
// their intents their process's: its answer's record may still reach the
// log, so no other process records the call as interrupted while it runs;
// once it has ended, Recover settles both. Without AwaitAnswers nothing
// waits for an answer: a change stopped half made is any Recover's at once.
func TestUnfinishedChangesWaitForTheirProcess(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := intentCtx()
		first := storetest.Open(t, dsn)
		j := first.Journal(store.JournalOptions{AwaitAnswers: true})
		for _, call := range []string{"call-1", "call-2"} {
			if err := j.Intend(ctx, anIntent(call)); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Made(ctx, "call-1"); err != nil {
			t.Fatal(err)
		}
		if err := j.Answered(ctx, "call-1", false); err != nil {
			t.Fatal(err)
		}
		if err := j.Dropped(ctx, "call-2", false); err != nil {
			t.Fatal(err)
		}
		if err := j.Answered(ctx, "call-never-changed", true); err != nil {
			t.Errorf("Answered of a call without intent: %v", err)
		}
		plain := first.Journal(store.JournalOptions{})
		if err := plain.Intend(ctx, anIntent("call-3")); err != nil {
			t.Fatal(err)
		}
		if err := plain.Dropped(ctx, "call-3", false); err != nil {
			t.Fatal(err)
		}
		second := storetest.Open(t, dsn).Journal(store.JournalOptions{})
		var s settled
		if n, err := second.Recover(ctx, intentWorkspace, nil, s.settle(true, nil)); n != 1 || err != nil || s.calls["call-3"] != 1 {
			t.Fatalf("Recover while the process runs = %d, %v (settled %v); want call-3 only", n, err, s.calls)
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := second.Recover(ctx, intentWorkspace, nil, s.settle(true, nil)); n != 2 || err != nil {
			t.Fatalf("Recover once the process has ended = %d, %v; want both", n, err)
		}
		if cs := visible(t, second, "call-1"); len(cs) != 2 {
			t.Errorf("the kept change of call-1 is %+v", cs)
		}
	})
}

// TestRecoverTellsEndedBeforeClaiming: Recover tells ended of a process
// that left intents once it has ended, and not before; once however many
// intents it left, and before the first of them is settled; never of the
// caller itself.
func TestRecoverTellsEndedBeforeClaiming(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := intentCtx()
		first := storetest.Open(t, dsn)
		fj := first.Journal(store.JournalOptions{})
		for _, id := range []string{"call-e", "call-f"} {
			if err := fj.Intend(ctx, anIntent(id)); err != nil {
				t.Fatal(err)
			}
		}
		second := storetest.Open(t, dsn).Journal(store.JournalOptions{})
		var events []string
		ended := func(_ context.Context, owner string) { events = append(events, "ended "+owner) }
		settle := func(_ context.Context, in store.Interrupted) (bool, error) {
			events = append(events, "settle "+in.CallID)
			return false, nil
		}
		for _, j := range []*store.Journal{fj, second} {
			if n, err := j.Recover(ctx, intentWorkspace, ended, settle); n != 0 || err != nil || len(events) != 0 {
				t.Fatalf("Recover while the process runs = %d, %v, told %q", n, err, events)
			}
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if n, err := second.Recover(ctx, "/another/workspace", ended, settle); n != 0 || err != nil || len(events) != 0 {
			t.Fatalf("Recover of another workspace = %d, %v, told %q", n, err, events)
		}
		if n, err := second.Recover(ctx, intentWorkspace, ended, settle); n != 2 || err != nil {
			t.Fatalf("Recover after the process ended = %d, %v; want 2", n, err)
		}
		if len(events) != 3 || !strings.HasPrefix(events[0], "ended ") || !strings.HasSuffix(events[0], ".lock") ||
			events[1] != "settle call-e" || events[2] != "settle call-f" {
			t.Errorf("Recover told %q; want the ended process's lock once, then both settles", events)
		}
	})
}
