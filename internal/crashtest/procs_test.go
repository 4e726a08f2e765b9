package crashtest

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/toolbelt/toolbelt/internal/syncbuf"
)

// errCrashed is the answer to a start after the round's crash: nothing
// starts until the next round.
var errCrashed = errors.New("the round has crashed")

// procs are the Toolbelt processes of a round. A process starts, is killed
// and is crashed under one lock, so none starts after the crash.
type procs struct {
	mu      sync.Mutex
	crashed bool
	live    []*proc
	kills   int // random kills, over all rounds
}

// proc is one Toolbelt process: its slot (who started it), the command,
// and what it wrote to stderr.
type proc struct {
	slot   string
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	killed atomic.Bool // by the test: a random kill or the crash
	done   chan struct{}
	err    error // of Wait, once done
}

// start starts cmd for slot, unless the round has crashed.
func (ps *procs) start(slot string, cmd *exec.Cmd) (*proc, error) {
	p := &proc{slot: slot, cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.crashed {
		return nil, errCrashed
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ps.live = append(ps.live, p)
	go func() {
		p.err = cmd.Wait()
		ps.mu.Lock()
		ps.live = slices.DeleteFunc(ps.live, func(q *proc) bool { return q == p })
		ps.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// kill sends SIGKILL to p; ps.mu is held. p counts as killed from before
// the signal, so whoever sees it die sees it killed. A process killed
// already (a random kill just before the round's end) stays killed: the
// second signal fails because it is dead.
func (p *proc) kill() {
	if p.killed.Swap(true) {
		return
	}
	if p.cmd.Process.Signal(syscall.SIGKILL) != nil {
		p.killed.Store(false) // it had ended
	}
}

// killOne kills a live process rng picks (none when none lives), and
// returns its slot.
func (ps *procs) killOne(rng *rand.Rand) string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.live) == 0 {
		return ""
	}
	live := slices.Clone(ps.live)
	slices.SortFunc(live, func(a, b *proc) int {
		return cmp.Or(strings.Compare(a.slot, b.slot), cmp.Compare(a.cmd.Process.Pid, b.cmd.Process.Pid))
	})
	p := live[rng.IntN(len(live))]
	p.kill()
	ps.kills++
	return p.slot
}

// crash kills every live process at once and stops new ones from starting;
// it returns how many it killed.
func (ps *procs) crash() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.crashed = true
	for _, p := range ps.live {
		p.kill()
	}
	return len(ps.live)
}

// reopen lets processes start again, for the next round.
func (ps *procs) reopen() {
	ps.mu.Lock()
	ps.crashed = false
	ps.mu.Unlock()
}
