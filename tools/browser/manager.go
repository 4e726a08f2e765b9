package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolbelt/toolbelt/internal/chromium"
	"github.com/toolbelt/toolbelt/internal/netguard"
)

// Options configure a Manager. The zero value works: the chromium on PATH,
// profiles in a temporary directory, the default limits.
type Options struct {
	// Chromium is the browser program; "" looks chromium up on PATH.
	Chromium string
	// Dir holds the sessions' profile directories (the root gives
	// <data dir>/browser); "" makes a temporary one, removed by Close.
	Dir string
	// MaxTabs caps the tabs a session's browser may have open (default
	// DefaultMaxTabs).
	MaxTabs int
	// MaxMemoryMB caps the JavaScript heap of each page's renderer, in
	// megabytes (default DefaultMaxMemoryMB); Chromium ends a page that
	// goes over it.
	MaxMemoryMB int
	// Resolver and Dial, when set, are how the browsers' proxy looks hosts
	// up and connects to checked addresses (default: the system's); tests
	// point them at their own servers.
	Resolver netguard.Resolver
	Dial     netguard.DialFunc
	// Getenv reads the environment the browsers start with (default
	// os.Getenv); tests use it to keep proxies of the machine out.
	Getenv func(string) string
}

// The default limits of a Manager.
const (
	DefaultMaxTabs     = 8
	DefaultMaxMemoryMB = 512
	// startTimeout bounds Chromium's start.
	startTimeout = 30 * time.Second
)

// Manager runs one headless Chromium per session, each with its own profile
// directory, started on first use. A browser that crashed (its process gone,
// its connection closed) is started again by the next call, which says so;
// one unused for tools.browser.idleTimeout is stopped. Stop ends a
// session's browser when the session ends; Close kills every browser it
// started, with their process groups. A profile is removed with its
// browser unless tools.browser.keepProfile keeps it. A Manager is safe for
// concurrent use; the calls of one session run one at a time.
type Manager struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*session
	previews map[string][]string // by session ("": every session's)
	dir      string              // where profiles go, made on first use
	tempDir  bool                // dir is the Manager's own, removed by Close
	closed   bool
}

// NewManager returns a Manager with the options o; nothing starts until a
// session uses a browser.
func NewManager(o Options) *Manager {
	if o.MaxTabs <= 0 {
		o.MaxTabs = DefaultMaxTabs
	}
	if o.MaxMemoryMB <= 0 {
		o.MaxMemoryMB = DefaultMaxMemoryMB
	}
	return &Manager{opts: o, sessions: map[string]*session{}}
}

// Available returns nil when the Manager can start Chromium, or an error
// saying how to install it.
func (m *Manager) Available() error {
	_, err := m.chromium()
	return err
}

func (m *Manager) chromium() (string, error) {
	if m.opts.Chromium != "" {
		if _, err := exec.LookPath(m.opts.Chromium); err != nil {
			return "", fmt.Errorf("%s: %w", m.opts.Chromium, chromium.ErrMissing)
		}
		return m.opts.Chromium, nil
	}
	return chromium.Path()
}

// ErrClosed is the error of a Manager used after Close.
var ErrClosed = errors.New("browser: the manager is closed")

// session returns the session of key, locked; the caller unlocks it. A
// session that ended while the caller waited for it is not returned: the
// key's new one is.
func (m *Manager) session(key string) (*session, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		s := m.sessions[key]
		if s == nil {
			s = &session{key: key, m: m, settings: settings{idle: DefaultIdleTimeout}}
			m.sessions[key] = s
		}
		m.mu.Unlock()
		s.mu.Lock()
		if !s.ended {
			return s, nil
		}
		s.mu.Unlock()
	}
}

// profileDir returns the profile directory of a session's browser: a new
// one, or with keep the session's kept one (made if need be), named
// after a hash of its key.
func (m *Manager) profileDir(key string, keep bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dir == "" {
		if m.opts.Dir == "" {
			d, err := os.MkdirTemp("", "toolbelt-browser-")
			if err != nil {
				return "", err
			}
			m.dir, m.tempDir = d, true
		} else {
			if err := os.MkdirAll(m.opts.Dir, 0o700); err != nil {
				return "", fmt.Errorf("browser profiles: %w", err)
			}
			m.dir = m.opts.Dir
		}
	}
	if !keep {
		return os.MkdirTemp(m.dir, "profile-")
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(m.dir, "kept-"+hex.EncodeToString(sum[:8]))
	return dir, os.MkdirAll(dir, 0o700)
}

// Close kills every browser the Manager started and removes their
// profiles (but kept ones); the Manager starts no browser after it.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	sessions := m.sessions
	m.sessions = map[string]*session{}
	dir, temp := m.dir, m.tempDir
	m.mu.Unlock()
	var errs []error
	for _, s := range sessions {
		errs = append(errs, s.end())
	}
	if temp {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}

// Stop ends the browser of a session that ended: it is killed, its
// profile removed unless tools.browser.keepProfile keeps it, and the
// Manager forgets the session (a later call of the same key starts
// afresh). A session without a browser is only forgotten.
func (m *Manager) Stop(sessionKey string) error {
	m.mu.Lock()
	s := m.sessions[sessionKey]
	delete(m.sessions, sessionKey)
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.end()
}

// session is one session's browser: its process, profile and tabs.
type session struct {
	mu  sync.Mutex
	key string
	m   *Manager

	ended       bool // by Stop or Close: the session is no longer used
	profile     string
	kept        bool // the profile is the session's kept one
	gate        *gate
	pid         int // the browser's process, leader of its group
	ctx         context.Context
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
	tabs        []*tab
	current     *tab
	settings    settings // of the latest call
	workspace   string   // of the latest call
	downloadsTo *string  // where downloads go; nil: not set yet
	idle        *time.Timer
	uses        uint64 // counts the uses, so that a late idle timer stops nothing
	// stopped says why the browser stopped without being asked to (crashed,
	// idle), for the next call to say; "" when it was not.
	stopped string
}

// end stops the browser of a session no longer used: calls waiting for it
// get the key's new session.
func (s *session) end() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	return s.stop()
}

// used notes that a call used the browser: it is stopped once it has
// gone unused for the session's idle timeout.
func (s *session) used() {
	s.uses++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if s.ctx == nil || s.settings.idle <= 0 {
		return
	}
	use, after := s.uses, s.settings.idle
	s.idle = time.AfterFunc(after, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended || s.uses != use || s.ctx == nil {
			return
		}
		_ = s.stop()
		s.stopped = fmt.Sprintf("was stopped after %s unused (tools.browser.idleTimeout)", after)
	})
}

// running reports whether the browser runs: its connection open and its
// process alive (a process just killed is seen before the connection's end
// is).
func (s *session) running() bool {
	return s.ctx != nil && s.ctx.Err() == nil && (s.pid == 0 || alive(s.pid))
}

// ensure starts the browser when it does not run. One that ran and is
// gone (crashed, its process killed) is noted in s.stopped, for the next
// call to say that what the session had open is lost.
func (s *session) ensure() error {
	if s.running() {
		return nil
	}
	if s.ctx != nil {
		_ = s.stop()
		s.stopped = "had stopped (crashed, or its process was killed)"
	}
	return s.start()
}

// start starts the session's browser with a new profile, or its kept one.
func (s *session) start() error {
	path, err := s.m.chromium()
	if err != nil {
		return err
	}
	keep := s.settings.keepProfile
	profile, err := s.m.profileDir(s.key, keep)
	if err != nil {
		return err
	}
	drop := func() {
		if !keep {
			os.RemoveAll(profile)
		}
	}
	if s.gate, err = s.m.openGate(); err != nil {
		drop()
		return err
	}
	if err := s.reguard(); err != nil {
		s.gate.close()
		drop()
		return err
	}
	opts := append(chromium.Options(path, profile),
		// Every request goes through the gate, loopback included (<-loopback),
		// and WebRTC sends nothing around it.
		chromedp.ProxyServer("http://"+s.gate.addr()), chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", s.m.opts.MaxMemoryMB)),
		chromedp.Flag("renderer-process-limit", strconv.Itoa(s.m.opts.MaxTabs+1)),
		chromedp.ModifyCmdFunc(ownGroup),
	)
	opts = append(opts, chromedp.Env(proxyFree(s.m.opts.Getenv)...))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	s.profile, s.kept, s.ctx, s.cancel, s.cancelAlloc = profile, keep, ctx, cancel, cancelAlloc
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(startTimeout):
		err = fmt.Errorf("chromium did not start within %s", startTimeout)
	}
	if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		s.pid = c.Browser.Process().Pid
	}
	if err != nil {
		_ = s.stop()
		return fmt.Errorf("starting chromium: %w", err)
	}
	return nil
}

// ownGroup starts Chromium in a process group of its own, killed with it
// when this process dies, so that Close can kill it and every process it
// started at once.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// proxyFree returns the environment variables that unset the proxies of
// the environment: the browser's proxy is the Manager's, or none.
func proxyFree(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"} {
		if getenv(k) != "" {
			env = append(env, k+"=")
		}
	}
	return env
}

// stop kills the browser, its process group and any process left using its
// profile, and removes the profile unless it is kept.
func (s *session) stop() error {
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if s.ctx == nil {
		return nil
	}
	if s.pid > 0 {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
	for _, t := range s.tabs {
		t.cancel()
	}
	s.cancel()
	s.cancelAlloc()
	killUsing(s.profile)
	s.gate.close()
	var err error
	if !s.kept {
		err = os.RemoveAll(s.profile)
	}
	s.ctx, s.cancel, s.cancelAlloc, s.pid, s.tabs, s.current, s.downloadsTo = nil, nil, nil, 0, nil, nil, nil
	return err
}
