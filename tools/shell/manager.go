package shell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// Manager holds the commands the exec tool started — running, or finished
// and kept for a while — for the process tool of the same registry. It is
// safe for concurrent use. Close it when the program ends: it stops every
// command still running.
type Manager struct {
	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	wg       sync.WaitGroup // one per supervisor goroutine

	// sandboxes caches bubblewrap by executable name, and checked the
	// sandbox setups known to work; only successes are cached, so
	// installing bubblewrap needs no restart.
	sandboxes map[string]*sandbox.Bwrap
	checked   map[string]bool

	// trees hashes workspaces for the approvals bound to their files.
	trees treeHashes

	// resolver looks up the hosts sandboxed commands ask the network
	// proxy for (nil: the system's), and dial connects to the addresses
	// the proxy's guard checked (nil: directly); tests point names and
	// addresses at their servers.
	resolver netguard.Resolver
	dial     netguard.DialFunc
}

// NewManager returns an empty manager.
func NewManager() *Manager {
	return &Manager{
		sessions:  make(map[string]*session),
		sandboxes: make(map[string]*sandbox.Bwrap),
		checked:   make(map[string]bool),
	}
}

// errClosed is returned once the manager is closed.
var errClosed = errors.New("the shell tools have been shut down; no new command can start")

// start starts a command and keeps its session.
func (m *Manager) start(sp spawnSpec) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	m.pruneLocked(time.Now())
	id := m.newIDLocked()
	s, err := start(id, sp, &m.wg)
	if err != nil {
		return nil, err
	}
	m.sessions[id] = s
	return s, nil
}

// newIDLocked returns a short session id not in use.
func (m *Manager) newIDLocked() string {
	for {
		id := randid.New("", 3)
		if _, taken := m.sessions[id]; !taken {
			return id
		}
	}
}

// get returns the session with this id, when owner owns it: another
// owner's session is as absent as one that never existed.
func (m *Manager) get(id, owner string) (*session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruneLocked(time.Now())
	s, ok := m.sessions[id]
	if !ok || s.owner != owner {
		return nil, false
	}
	return s, true
}

// list returns owner's sessions, oldest first.
func (m *Manager) list(owner string) []*session {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruneLocked(time.Now())
	out := make([]*session, 0, len(m.sessions))
	for _, s := range m.sessions {
		if s.owner == owner {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *session) int {
		return cmp.Or(a.started.Compare(b.started), cmp.Compare(a.id, b.id))
	})
	return out
}

// forget drops a session from the list (its command must have finished).
func (m *Manager) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
}

// pruneLocked drops finished sessions older than their time to live.
func (m *Manager) pruneLocked(now time.Time) {
	for id, s := range m.sessions {
		if s.finished() && now.Sub(s.end.ended) > s.ttl {
			delete(m.sessions, id)
		}
	}
}

// bwrap returns bubblewrap found under name, checked to work for spec.
func (m *Manager) bwrap(ctx context.Context, name string, spec sandbox.Spec) (*sandbox.Bwrap, error) {
	m.mu.Lock()
	b := m.sandboxes[name]
	m.mu.Unlock()
	if b == nil {
		var err error
		if b, err = sandbox.Find(ctx, name); err != nil {
			return nil, err
		}
	}
	// The sandbox's identity depends on the workspace's owner, and entering
	// the workspace on its path: a check covers one root and limit.
	key := name + "\x00" + spec.Root + "\x00" + strconv.Itoa(spec.ProcessLimit)
	m.mu.Lock()
	ok := m.checked[key]
	m.mu.Unlock()
	if !ok {
		check := spec
		check.Workdir = spec.Root
		if err := b.Check(ctx, check); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	m.sandboxes[name] = b
	m.checked[key] = true
	m.mu.Unlock()
	return b, nil
}

// container returns bubblewrap found under name when it can contain
// commands in root here, and nil when it cannot (not installed, no user
// namespaces): commands that may run without approval then run on the
// host, allowlisted. Only successes are cached.
func (m *Manager) container(ctx context.Context, name, root string) *sandbox.Bwrap {
	key := "contain\x00" + name + "\x00" + root
	m.mu.Lock()
	b, ok := m.sandboxes[name], m.checked[key]
	m.mu.Unlock()
	if ok && b != nil {
		return b
	}
	if b == nil {
		var err error
		if b, err = sandbox.Find(ctx, name); err != nil {
			return nil
		}
	}
	if err := b.CheckContain(ctx, root); err != nil {
		return nil
	}
	m.mu.Lock()
	m.sandboxes[name] = b
	m.checked[key] = true
	m.mu.Unlock()
	return b
}

// Close stops every running command (SIGTERM to its process group, then
// SIGKILL) and waits until they are gone. Later calls of exec fail. The
// error names the commands that were still running, whose callers were
// told they would go on in the background: they are stopped all the same.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	all := make([]*session, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.mu.Unlock()
	var running []string
	for _, s := range all {
		if !s.finished() {
			cmd := content.Chars(s.command, 0, 60)
			if cmd != s.command {
				cmd += "…"
			}
			running = append(running, s.id+" ("+cmd+")")
		}
		s.stop(stopShutdown)
	}
	m.wg.Wait()
	if len(running) > 0 {
		slices.Sort(running)
		what := "1 command"
		if len(running) > 1 {
			what = strconv.Itoa(len(running)) + " commands"
		}
		return fmt.Errorf("stopped %s still running in the background: %s", what, strings.Join(running, ", "))
	}
	return nil
}
