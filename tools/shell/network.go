package shell

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/internal/netproxy"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// netUse is one host a sandboxed command asked for through the proxy, as
// its result's details (and so the call's audit record) show it.
type netUse struct {
	Host string `json:"host"`
	Port string `json:"port"`
	// Outcome is "reached", "refused" or "failed".
	Outcome string `json:"outcome"`
	// Reason says why a host was refused or could not be reached.
	Reason string `json:"reason,omitempty"`
}

// netAccess is the network of one sandboxed command: a filtering proxy
// (internal/netproxy) on a Unix socket in a private directory, bound into
// the sandbox. It allows the hosts of tools.exec.network.allow, refuses
// others, connects through the web guard (private addresses refused unless
// allowPrivate names the host), and keeps each host asked for.
type netAccess struct {
	dir    string
	proxy  *netproxy.Proxy
	served chan error

	mu   sync.Mutex
	uses []netUse
}

// startNetwork starts the proxy of one sandboxed command under cfg;
// resolver looks up names (nil: the system's).
func startNetwork(cfg NetworkConfig, resolver netguard.Resolver) (*netAccess, error) {
	g, err := netguard.New(netguard.Options{
		Name: "the sandbox's network proxy", AllowHosts: cfg.AllowPrivate,
		Setting: "tools.exec.network.allowPrivate", Resolver: resolver,
	})
	if err != nil {
		return nil, err
	}
	a := &netAccess{served: make(chan error, 1)}
	a.proxy, err = netproxy.New(netproxy.Options{
		Guard: g,
		Allow: func(_ context.Context, host, _ string) error {
			if cfg.allows(host) {
				return nil
			}
			return fmt.Errorf("%s is not in tools.exec.network.allow; add it there (or a pattern such as *.%s) to let sandboxed commands reach it", host, host)
		},
		Report: a.record,
	})
	if err != nil {
		return nil, err
	}
	if a.dir, err = os.MkdirTemp("", "toolbelt-net-"); err != nil {
		return nil, err
	}
	sock := filepath.Join(a.dir, "proxy.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(a.dir)
		return nil, fmt.Errorf("the sandbox's network proxy cannot listen: %w", err)
	}
	go func() { a.served <- a.proxy.Serve(l) }()
	return a, nil
}

// network is how the sandbox reaches the proxy. The forwarder is this
// program, linked into the proxy's directory where it can be (so that a
// sandbox running as another user reaches it, see grant).
func (a *netAccess) network() *sandbox.Network {
	n := &sandbox.Network{Socket: filepath.Join(a.dir, "proxy.sock")}
	if exe, err := os.Executable(); err == nil && os.Link(exe, filepath.Join(a.dir, "forward")) == nil {
		n.Program = filepath.Join(a.dir, "forward")
	}
	return n
}

// record keeps what the proxy reported, once per host, port and outcome.
func (a *netAccess) record(e netproxy.Event) {
	u := netUse{Host: e.Host, Port: e.Port, Outcome: "reached"}
	switch {
	case e.Refused:
		u.Outcome, u.Reason = "refused", netproxy.Reason(e.Err)
	case e.Err != nil:
		u.Outcome, u.Reason = "failed", e.Err.Error()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.ContainsFunc(a.uses, func(o netUse) bool { return o.Host == u.Host && o.Port == u.Port && o.Outcome == u.Outcome }) {
		a.uses = append(a.uses, u)
	}
}

// used returns the hosts asked for so far.
func (a *netAccess) used() []netUse {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.uses)
}

// grant lets the sandbox's user reach the socket when the sandbox runs as
// another user than this process (cred not nil: the server runs as root).
func (a *netAccess) grant(cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	for _, p := range []string{a.dir, filepath.Join(a.dir, "proxy.sock")} {
		if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("the sandbox's network proxy: %w", err)
		}
	}
	return nil
}

// close stops the proxy and removes its socket.
func (a *netAccess) close() {
	a.proxy.Close()
	<-a.served
	os.RemoveAll(a.dir)
}
