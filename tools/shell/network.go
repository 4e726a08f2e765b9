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
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// netAccess is the network of one sandboxed command: a filtering proxy
// (internal/netproxy) on a Unix socket in a private directory, bound into
// the sandbox. It allows the hosts of tools.exec.network.allow, asks the
// person who approves the call about others (once per host: see askFor),
// connects through the web guard (private addresses refused unless
// allowPrivate names the host), and keeps each host asked for, for the
// result's details and the audit record (see report).
type netAccess struct {
	dir    string
	proxy  *netproxy.Proxy
	served chan error

	// call is the context of the call that started the command, through
	// which a person is asked (tool.Ask); cancelled when the call returns
	// or the proxy closes. command is what the question names.
	call    context.Context
	cancel  context.CancelFunc
	command string

	mu       sync.Mutex
	uses     []tool.HostUse
	reported int                // uses already in an audit record
	answers  map[string]*answer // by host
}

// answer is the one answer about a host for a command: the requests for
// it that come while it is asked wait for it.
type answer struct {
	done chan struct{}
	err  error // nil: allowed
}

// startNetwork starts the proxy of command under cfg, for the call whose
// context ctx is.
func (m *Manager) startNetwork(ctx context.Context, cfg NetworkConfig, command string) (*netAccess, error) {
	g, err := netguard.New(netguard.Options{
		Name: "the sandbox's network proxy", AllowHosts: cfg.AllowPrivate,
		Setting: "tools.exec.network.allowPrivate", Resolver: m.resolver, Dial: m.dial,
	})
	if err != nil {
		return nil, err
	}
	a := &netAccess{served: make(chan error, 1), command: command, answers: map[string]*answer{}}
	a.proxy, err = netproxy.New(netproxy.Options{
		Guard: g,
		Allow: func(_ context.Context, host, port string) error {
			if cfg.allows(host) {
				return nil
			}
			return a.askFor(host, port)
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
	a.call, a.cancel = context.WithCancel(ctx)
	go func() { a.served <- a.proxy.Serve(l) }()
	return a, nil
}

// askFor says whether the command may reach host, which the allowlist
// does not name: the first request for it asks (see ask), the others wait
// for that answer.
func (a *netAccess) askFor(host, port string) error {
	a.mu.Lock()
	ans, asked := a.answers[host]
	if !asked {
		ans = &answer{done: make(chan struct{})}
		a.answers[host] = ans
	}
	a.mu.Unlock()
	if asked {
		<-ans.done
		return ans.err
	}
	ans.err = a.ask(host, port)
	close(ans.done)
	return ans.err
}

// ask puts the question about host to the person who approves the call,
// while the call runs; an answer for the session or the workspace holds
// for later commands there. The refusal says how to allow the host.
func (a *netAccess) ask(host, port string) error {
	add := fmt.Sprintf("add it to tools.exec.network.allow (or a pattern such as *.%s) to let sandboxed commands reach it", host)
	if a.call.Err() != nil {
		return fmt.Errorf("%s is not in tools.exec.network.allow, and the command asked for it after its call had returned, when nobody can be asked; %s", host, add)
	}
	r := tool.Ask(a.call, tool.Question{
		Message: fmt.Sprintf("the command `%s` wants to reach %s", textclip.Clip(a.command, 200), net.JoinHostPort(host, port)),
		Reason:  "a host not in tools.exec.network.allow",
		Action:  "sandbox network: " + host,
		Always:  host + " (any port), from commands in the sandbox",
	})
	switch {
	case r.Allow:
		return nil
	case r.Answer == "deny" && r.Reason != "":
		return fmt.Errorf("%s is not in tools.exec.network.allow, and %s did not allow it: %s; %s", host, r.By, r.Reason, add)
	case r.Answer == "deny":
		return fmt.Errorf("%s is not in tools.exec.network.allow, and %s did not allow it; %s", host, r.By, add)
	}
	return fmt.Errorf("%s is not in tools.exec.network.allow, and nobody could be asked (%s); %s", host, r.Reason, add)
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
	u := tool.HostUse{Host: e.Host, Port: e.Port, Outcome: "reached"}
	switch {
	case e.Refused:
		u.Outcome, u.Reason = "refused", netproxy.Reason(e.Err)
	case e.Err != nil:
		u.Outcome, u.Reason = "failed", e.Err.Error()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.ContainsFunc(a.uses, func(o tool.HostUse) bool { return o.Host == u.Host && o.Port == u.Port && o.Outcome == u.Outcome }) {
		a.uses = append(a.uses, u)
	}
}

// used returns the hosts asked for so far.
func (a *netAccess) used() []tool.HostUse {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.uses)
}

// report records the hosts asked for since the last report in the audit
// record of the call whose context ctx is: the exec call, then the process
// calls that follow the command in the background.
func (a *netAccess) report(ctx context.Context) {
	a.mu.Lock()
	fresh := slices.Clone(a.uses[a.reported:])
	a.reported = len(a.uses)
	a.mu.Unlock()
	tool.RecordHosts(ctx, fresh...)
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

// close stops the proxy, and the questions it is asking, and removes its
// socket.
func (a *netAccess) close() {
	a.cancel()
	a.proxy.Close()
	<-a.served
	os.RemoveAll(a.dir)
}
