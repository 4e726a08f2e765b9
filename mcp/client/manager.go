// Package client imports the tools of other MCP servers into a Toolbelt
// registry, so that calls to them go through Toolbelt's pipeline — policy,
// confirmation, hooks, timeouts, truncation, audit — like calls to its own
// tools.
//
// A [Manager] connects to each configured server (a command over stdio, or
// a URL over streamable HTTP), lists its tools and registers each as
// <server>__<tool> in section "mcp", group "mcp:<server>". Calls are
// forwarded with progress and cancellation. A server that stops makes its
// tools unavailable, with the reason, and is restarted with exponential
// backoff; when its tools change (after a restart, or when it sends
// notifications/tools/list_changed) the registry follows.
//
//	m := client.New(reg, cfg.MCPServers, client.Options{Separator: cfg.MCP.Separator})
//	defer m.Stop(ctx)
//	if err := m.Start(ctx); err != nil { … }
package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/lifecycle"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/registry"
)

// Options configures a Manager. Zero fields take the defaults below.
type Options struct {
	// Separator joins server and tool names (default "__").
	Separator string
	// Logger receives connection events and what stdio servers write to
	// standard error (default slog.Default()).
	Logger *slog.Logger
	// Version is the client version sent to servers (default "dev").
	Version string
	// ConnectTimeout bounds connecting to a server and listing its tools
	// (30s).
	ConnectTimeout time.Duration
	// MinBackoff is the wait before restarting a server that went down; it
	// doubles after each failed start up to MaxBackoff (1s, 60s). A server
	// that stayed up for StableAfter (1 minute) starts again at MinBackoff.
	MinBackoff, MaxBackoff, StableAfter time.Duration
	// StopGrace is how long a stdio server has to exit after its input is
	// closed before it is sent SIGTERM, and then SIGKILL (2s).
	StopGrace time.Duration
	// KeepAlive is how often HTTP servers are pinged so that one that is
	// gone is noticed between calls (30s; negative: never).
	KeepAlive time.Duration
	// SchemaCheckDelay is how long after an import the imported schemas
	// are compiled to find the ones that do not compile (1s; negative: at
	// once). The wait lets the first answers to clients go out before
	// that work; until then a call of such a tool fails at validation.
	SchemaCheckDelay time.Duration
	// SchemaCheckAfter, when set, holds the schema check back until it is
	// closed as well (the front door's first answers), and SchemaCheckDelay
	// counts from then: an import that ends while a busy machine is still
	// starting the server does not compete with its first answers.
	SchemaCheckAfter <-chan struct{}
	// Transport, when set, makes the transport to a server instead of its
	// configuration (for tests, or servers in the same process).
	Transport func(ctx context.Context, name string) (mcp.Transport, error)
	// Tokens keeps the OAuth grants of the servers that sign in with
	// OAuth (a Vault); without it, such a server is not reached.
	Tokens TokenStore
	// SignIn, when set, lets a server that asks for a sign-in, or for more
	// scopes mid-run (403 insufficient_scope), sign in at once: it takes
	// the person to the authorization server's page at url, as
	// LoginOptions.Show does. Without it (imports no person waits on),
	// such a server fails with a *SignInError naming toolbelt mcp login.
	SignIn func(url string) error
	// OnState, when set, is called after a server changes state, on the
	// goroutine that supervises it; it must not block for long.
	OnState func(ServerStatus)
}

// The defaults of Options.
const (
	DefaultSeparator      = config.DefaultMCPSeparator
	DefaultConnectTimeout = 30 * time.Second
	DefaultMinBackoff     = time.Second
	DefaultMaxBackoff     = time.Minute
	DefaultStableAfter    = time.Minute
	DefaultStopGrace      = 2 * time.Second
	DefaultKeepAlive      = 30 * time.Second
	DefaultSchemaCheck    = time.Second
)

func (o Options) withDefaults() Options {
	o.Separator = cmp.Or(o.Separator, DefaultSeparator)
	o.Version = cmp.Or(o.Version, "dev")
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.ConnectTimeout, DefaultConnectTimeout)
	def(&o.MinBackoff, DefaultMinBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.StableAfter, DefaultStableAfter)
	def(&o.StopGrace, DefaultStopGrace)
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.SchemaCheckDelay == 0 {
		o.SchemaCheckDelay = DefaultSchemaCheck
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	return o
}

// State is where a server is in its life.
type State string

// The states of a server.
const (
	StateStarting State = "starting" // connecting and listing its tools
	StateReady    State = "ready"    // its tools are available
	StateDown     State = "down"     // stopped or unreachable; restarting after a backoff
	StateDisabled State = "disabled" // configured with disabled: true
	StateStopped  State = "stopped"  // the manager was closed
)

// ServerStatus is the state of one server, for `toolbelt mcp servers`.
type ServerStatus struct {
	Name string `json:"name"`
	// Transport is "stdio" or "http" ("custom" with Options.Transport).
	Transport string `json:"transport"`
	State     State  `json:"state"`
	// Tools is the number of its tools in the registry.
	Tools int `json:"tools"`
	// Restarts counts the starts after the first.
	Restarts int `json:"restarts"`
	// LastError is why it last went down or failed to start.
	LastError string `json:"lastError,omitempty"`
	// Since is when it entered its state.
	Since time.Time `json:"since"`
	// Retry is when a server that is down is started again.
	Retry time.Time `json:"retry,omitzero"`
	// Skipped lists its tools that were not imported, each with why.
	Skipped []string `json:"skipped,omitempty"`
	// Auth says how Toolbelt signs in to it (AuthState); filled in by
	// those who read the grants.
	Auth string `json:"auth,omitempty"`
}

// Manager imports the tools of MCP servers and keeps them up to date. It is
// safe for concurrent use, and a [lifecycle.Service].
type Manager struct {
	opts    Options
	reg     *registry.Registry
	servers []*server // by name

	mu      sync.Mutex
	started bool
	closed  bool            // Stop was called: calls are refused
	run     context.Context // the servers' life, cancelled by Stop
	cancel  context.CancelFunc
	wg      sync.WaitGroup // the servers' supervisors
	calls   sync.WaitGroup // the calls under way
	begun   chan struct{}  // closed when each server's first start is done (Started)

	followers followers // Follow's
}

// New returns a manager that imports the tools of the servers, by name (the
// names of toolbelt.yaml's mcpServers), into reg. Nothing is started until
// Start.
func New(reg *registry.Registry, servers map[string]config.MCPServer, opts Options) *Manager {
	m := &Manager{opts: opts.withDefaults(), reg: reg, begun: make(chan struct{})}
	for name, srv := range servers {
		m.servers = append(m.servers, newServer(m, name, srv))
	}
	slices.SortFunc(m.servers, func(a, b *server) int { return cmp.Compare(a.name, b.name) })
	return m
}

// Start connects to every server that is not disabled and registers its
// tools. It returns once each server is ready or has failed its first start
// (those keep being restarted in the background), or with ctx's error when
// ctx ends first. ctx bounds only the wait: the servers run until Stop.
func (m *Manager) Start(ctx context.Context) error {
	if err := m.Begin(); err != nil {
		return err
	}
	select {
	case <-m.begun:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcp client: waiting for servers to start: %w", ctx.Err())
	}
}

// Begin starts every server that is not disabled, as Start does, but
// returns at once: each server's tools join the registry as it answers, and
// Started says when all have answered or failed. A program that has more
// to open than its imports opens it meanwhile.
func (m *Manager) Begin() error {
	if m.reg == nil {
		return errors.New("mcp client: the manager has no registry")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return errors.New("mcp client: Start called twice, or after Stop")
	}
	m.started = true
	m.run, m.cancel = context.WithCancel(context.Background())
	var firsts []chan struct{}
	for _, s := range m.servers {
		if s.cfg.Disabled {
			continue
		}
		first := make(chan struct{})
		firsts = append(firsts, first)
		m.wg.Go(func() { s.run(m.run, m.reg, first) })
	}
	m.wg.Go(func() {
		for _, first := range firsts {
			<-first
		}
		close(m.begun)
	})
	return nil
}

// Started is closed once Begin (or Start) has been called and each server
// is ready or has failed its first start, or Stop has stopped them.
func (m *Manager) Started() <-chan struct{} { return m.begun }

// enter counts a call under way, unless Stop was called, and returns the
// call's context: ctx, also cancelled when Stop cuts the calls short. The
// caller calls leave when the call ends.
func (m *Manager) enter(ctx context.Context) (_ context.Context, leave func(), ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.run == nil {
		return nil, nil, false
	}
	m.calls.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(m.run, cancel)
	return ctx, func() {
		unhook()
		cancel()
		m.calls.Done()
	}, true
}

// Stop refuses new calls, lets the calls under way finish until ctx ends,
// then cancels those still running and stops every server — ending their
// processes and connections — and removes their tools from the
// registry. It waits for all of it ([lifecycle.Service]), and reports the
// stdio servers that had to be terminated or killed, and ctx's error when
// calls were cut.
func (m *Manager) Stop(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	cancel := m.cancel
	m.mu.Unlock()
	var errs []error
	stop := func() {
		if cancel != nil {
			cancel()
		}
	}
	if err := lifecycle.Drain(ctx, &m.calls, stop); err != nil {
		errs = append(errs, fmt.Errorf("mcp client: calls cut short: %w", err))
	}
	stop()
	m.wg.Wait()
	for _, s := range m.servers {
		s.mu.Lock()
		if s.stopErr != nil {
			errs = append(errs, fmt.Errorf("mcp server %s %w", s.name, s.stopErr))
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Status returns the state of every configured server, by name.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.status()
	}
	return out
}
