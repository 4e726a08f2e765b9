package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
)

// The shape of a round: the processes making calls at once, and the random
// kills before the crash that ends it.
const (
	cliSlots  = 4 // toolbelt call loops
	mcpSlots  = 2 // toolbelt mcp processes, each with a client
	httpSlots = 2 // clients of the toolbelt serve
	minKills  = 6
	maxKills  = 14
	// Between two kills the processes run 50–400 ms.
	minPause = 50 * time.Millisecond
	maxPause = 400 * time.Millisecond
	// undosPerRound is how many answered changes each round undoes.
	undosPerRound = 4
)

// Rounds: TOOLBELT_CRASH_ROUNDS, else defaultRounds (shortRounds with
// -short or the race detector, which slows the test's side, not the
// processes it kills). On PostgreSQL the test runs a third as many rounds.
// The default takes about three minutes on two cores, PostgreSQL included.
const (
	defaultRounds = 30
	shortRounds   = 3
)

// TestCrash runs the crash test (see the package comment) on SQLite in a
// data directory, then on PostgreSQL when TOOLBELT_TEST_POSTGRES_URL names
// a server, and logs its figures.
func TestCrash(t *testing.T) {
	rounds := defaultRounds
	if testing.Short() || raceEnabled {
		rounds = shortRounds
	}
	if v := os.Getenv("TOOLBELT_CRASH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TOOLBELT_CRASH_ROUNDS=%q: want a number of rounds, at least 1", v)
		}
		rounds = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TOOLBELT_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TOOLBELT_CRASH_SEED=%q: want the number a run printed", v)
		}
		seed = n
	}
	dir := t.TempDir()
	bin := build(t, dir)
	t.Run("sqlite", func(t *testing.T) {
		crash(t, bin, seed, rounds, "TOOLBELT_DATA="+filepath.Join(t.TempDir(), "data"))
	})
	t.Run("postgres", func(t *testing.T) {
		crash(t, bin, seed, (rounds+2)/3, "TOOLBELT_DATABASE_URL="+storetest.Postgres(t))
	})
}

// crash runs the rounds with the store that state names (an environment
// variable).
func crash(t *testing.T, bin string, seed uint64, rounds int, state string) {
	h := newHarness(t, bin, seed, state)
	t.Logf("crash test: %d rounds, seed %d (TOOLBELT_CRASH_SEED=%d repeats its choices)", rounds, seed, seed)
	for r := 1; r <= rounds; r++ {
		h.round(r)
	}
	h.report(rounds)
}

// harness runs the rounds on one data directory and workspace, keeping the
// ledger of calls and what went wrong.
type harness struct {
	t      *testing.T
	seed   uint64
	bin    string
	env    []string
	ws     string
	procs  procs
	ledger ledger

	mu       sync.Mutex
	current  int                 // the round running
	problems map[string][]string // by kind
	seen     map[string]bool     // kind and problem
	figures  figures
}

// figures are what the rounds did, over all of them.
type figures struct {
	crashKills int // processes killed by the crashes that end rounds
	undone     int // answered changes undone
	unknown    int // audit records of no call of the test
}

// newHarness makes a workspace and an environment for the processes, with
// state (TOOLBELT_DATA=… or TOOLBELT_DATABASE_URL=…) naming the store.
func newHarness(t *testing.T, bin string, seed uint64, state string) *harness {
	dir := t.TempDir()
	h := &harness{t: t, seed: seed, bin: bin, ws: filepath.Join(dir, "ws"), problems: map[string][]string{}, seen: map[string]bool{}}
	if err := os.Mkdir(h.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.procs.crash() }) // a test ended early leaves no process behind
	h.env = append(os.Environ(), "NO_COLOR=1", "HOME="+dir,
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_DATA_HOME="+filepath.Join(dir, "xdg"),
		"TOOLBELT_CONFIG=", "TOOLBELT_DATA=", "TOOLBELT_DATABASE_URL=", "TOOLBELT_WORKSPACE=", state)
	h.ledger.calls = map[string]*call{}
	h.ledger.next = map[string]int{}
	h.ledger.lastAnswered = map[string]string{}
	return h
}

// build builds the toolbelt command into dir, as a user runs it (the race
// detector, if the test has it, would only slow the processes down). It
// skips the test when Go is not there to build it.
func build(t *testing.T, dir string) string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the crash test builds the toolbelt command and needs the go command on PATH: " + err.Error())
	}
	bin := filepath.Join(dir, "toolbelt")
	cmd := exec.Command(goCmd, "build", "-o", bin, "./cmd/toolbelt")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building toolbelt: %v\n%s", err, out)
	}
	return bin
}

// problem records something that broke a guarantee, of a kind, once: the
// same problem found again in a later round (a file still half made) is
// not counted again.
func (h *harness) problem(kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[kind+"\x00"+msg] {
		return
	}
	h.seen[kind+"\x00"+msg] = true
	h.problems[kind] = append(h.problems[kind], fmt.Sprintf("round %d: %s", h.current, msg))
}

// round runs round r: the processes make calls while some are killed at
// random, then all are killed at once; then it checks what is left.
func (h *harness) round(r int) {
	h.mu.Lock()
	h.current = r
	h.mu.Unlock()
	h.ledger.setRound(r)
	rng := rand.New(rand.NewPCG(h.seed, uint64(r)))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	srv := newServer()
	wg.Go(func() { h.serveSlot(ctx, srv) })
	slot := func(kind string, i int) (string, *rand.Rand) {
		return fmt.Sprintf("%s%d", kind, i), rand.New(rand.NewPCG(h.seed, uint64(r)<<16|uint64(kind[0])<<8|uint64(i)))
	}
	for i := range cliSlots {
		name, rng := slot("c", i)
		wg.Go(func() { h.cliSlot(ctx, name, rng) })
	}
	for i := range mcpSlots {
		name, rng := slot("m", i)
		wg.Go(func() { h.mcpSlot(ctx, name, rng) })
	}
	for i := range httpSlots {
		name, rng := slot("h", i)
		wg.Go(func() { h.httpSlot(ctx, name, srv, rng) })
	}
	for range minKills + rng.IntN(maxKills-minKills+1) {
		time.Sleep(minPause + time.Duration(rng.Int64N(int64(maxPause-minPause))))
		h.procs.killOne(rng)
	}
	n := h.procs.crash()
	stop()
	wg.Wait()
	h.procs.reopen()
	h.mu.Lock()
	h.figures.crashKills += n
	h.mu.Unlock()
	h.check(rng)
	c := h.ledger.count()
	h.t.Logf("round %d: %d calls and %d answered so far, %d processes killed", r, c.calls, c.answered, h.procs.kills+h.figures.crashKills)
}

// report logs the figures, and fails the test for each kind of problem,
// with the first of them.
func (h *harness) report(rounds int) {
	h.t.Helper()
	c := h.ledger.count()
	h.t.Logf("figures: rounds %d, calls %d, answered %d, kills %d random + %d at round ends, undone %d, audit records of no call %d",
		rounds, c.calls, c.answered, h.procs.kills, h.figures.crashKills, h.figures.undone, h.figures.unknown)
	kinds := []string{"audit verify", "lost", "duplicated", "half-made", "lost change", "unrecorded change", "not undoable", "failed start", "failed call", "error logged", "hang"}
	var counts []string
	for _, k := range kinds {
		counts = append(counts, fmt.Sprintf("%s %d", k, len(h.problems[k])))
	}
	h.t.Logf("problems: %s", strings.Join(counts, ", "))
	for _, k := range kinds {
		if ps := h.problems[k]; len(ps) > 0 {
			h.t.Errorf("%s: %d (seed %d), the first:\n  %s", k, len(ps), h.seed, strings.Join(ps[:min(len(ps), 5)], "\n  "))
		}
	}
	for k := range h.problems {
		if !slices.Contains(kinds, k) {
			h.t.Errorf("%s: %v", k, h.problems[k])
		}
	}
}

// call is one call a slot made.
type call struct {
	op
	slot     string
	seq      int // the slot's count of calls when it made this one
	answered bool
	isError  bool
}

// ledger keeps every call the test made, and for each file the last
// answered call that changed it.
type ledger struct {
	mu           sync.Mutex
	round        int
	next         map[string]int // by slot
	calls        map[string]*call
	lastAnswered map[string]string // file → label
}

func (l *ledger) setRound(r int) {
	l.mu.Lock()
	l.round = r
	l.mu.Unlock()
}

// label names slot's next call.
func (l *ledger) label(slot string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next[slot]++
	return fmt.Sprintf("r%03d-%s-%05d", l.round, slot, l.next[slot])
}

// issue records o as made by slot, before it is sent.
func (l *ledger) issue(slot string, o op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[o.label] = &call{op: o, slot: slot, seq: l.next[slot]}
}

// unissue forgets o, which was never sent.
func (l *ledger) unissue(o op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.calls, o.label)
}

// answer records that call label was answered.
func (l *ledger) answer(label string, isError bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls[label]
	c.answered, c.isError = true, isError
	if isError {
		return
	}
	for _, f := range c.files {
		if last, ok := l.calls[l.lastAnswered[f]]; !ok || last.seq < c.seq {
			l.lastAnswered[f] = label
		}
	}
}

// get returns call label, nil when the test made none.
func (l *ledger) get(label string) *call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[label]
}

type counts struct{ calls, answered int }

func (l *ledger) count() counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c counts
	for _, cl := range l.calls {
		c.calls++
		if cl.answered {
			c.answered++
		}
	}
	return c
}

// runCLI runs toolbelt with args after the round's processes are gone, and
// returns its stdout, stderr and exit code.
func (h *harness) runCLI(args ...string) (stdout, stderr string, code int) {
	cmd := h.command(args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		h.problem("hang", "toolbelt %s did not end within %s", strings.Join(args, " "), callTimeout)
		return out.String(), errOut.String(), -1
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}
