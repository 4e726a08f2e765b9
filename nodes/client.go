package nodes

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/retry"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// Handler runs a call of a capability on the node, through the node's own
// pipeline, reporting progress; its result goes back to the gateway.
type Handler func(ctx context.Context, capability string, params json.RawMessage, progress func(string)) tool.Result

// Client is a node: it pairs with a gateway, keeps a connection to one of
// its gateways (reconnecting with backoff, to the next one when one fails),
// and runs the calls the gateway sends with Handle.
type Client struct {
	// Gateways are the gateways' URLs (http://host:port, or ws:// with a
	// path); the node connects to the first that answers.
	Gateways []string
	// StateDir keeps the node's identity and token (node.json, readable
	// by its owner only).
	StateDir string
	// Name is the node's name, shown to the owner (default: the host's).
	Name string
	// Capabilities are what the node advertises; Handle serves them.
	Capabilities []string
	Info         map[string]string
	Handle       Handler
	// Say tells the person at the node what happens (the pairing code,
	// connected, reconnecting).
	Say    func(format string, args ...any)
	Logger *slog.Logger
	// Heartbeat is how often the node pings its gateway (DefaultHeartbeat).
	Heartbeat time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts to
	// reconnect (default 500ms and 30s); it doubles after each failure.
	MinBackoff, MaxBackoff time.Duration
}

// Identity is what a node keeps in its state directory.
type Identity struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Token string `json:"token,omitempty"`
}

// RefusedError is why a gateway refused the node: it is not paired, its
// token is wrong, or the owner rejected it. The node stops.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "the gateway refused this node: " + e.Reason }

// stateFile is the name of the node's identity in its state directory.
const stateFile = "node.json"

// LoadIdentity returns the node's identity kept in dir, making a new one
// (named name) when there is none.
func LoadIdentity(dir, name string) (Identity, error) {
	path := filepath.Join(dir, stateFile)
	b, err := os.ReadFile(path)
	var id Identity
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &id); err != nil || id.ID == "" {
			return id, fmt.Errorf("%s is not a node's identity (%v): remove it to pair the node anew", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		id.ID = randid.New("node-", 6)
	default:
		return id, err
	}
	if name != "" && id.Token == "" {
		id.Name = name
	}
	if id.Name == "" {
		id.Name, _ = os.Hostname()
		id.Name = cmp.Or(id.Name, id.ID)
	}
	return id, id.save(dir)
}

// save writes id into dir, readable by its owner only.
func (id Identity) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(id, "", "  ")
	f, err := os.CreateTemp(dir, stateFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, stateFile))
}

// Run pairs the node if it has no token yet and serves its gateways until
// ctx ends (nil) or a gateway refuses it (*RefusedError).
func (c *Client) Run(ctx context.Context) error {
	if len(c.Gateways) == 0 {
		return errors.New("name a gateway: toolbelt node --gateway http://HOST:PORT")
	}
	urls := make([]string, len(c.Gateways))
	for i, g := range c.Gateways {
		u, err := endpoint(g)
		if err != nil {
			return fmt.Errorf("gateway %q: %w", g, err)
		}
		urls[i] = u
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Say == nil {
		c.Say = func(string, ...any) {}
	}
	id, err := LoadIdentity(c.StateDir, c.Name)
	if err != nil {
		return err
	}
	minB, maxB := cmp.Or(c.MinBackoff, 500*time.Millisecond), cmp.Or(c.MaxBackoff, 30*time.Second)
	failures := 0
	for i := 0; ; {
		url := urls[i%len(urls)]
		connected, err := c.session(ctx, url, &id)
		var refused *RefusedError
		var busy websocket.CloseError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &refused):
			return err
		case errors.Is(err, errPaired):
			continue // connect with the token now
		case errors.As(err, &busy) && busy.Code == websocket.StatusTryAgainLater:
			failures++
			c.Say("the gateway %s cannot take the node now (%s); trying again", url, busy.Reason)
			i++
		case connected:
			failures = 0
			c.Say("lost the gateway %s (%v); reconnecting", url, err)
		default:
			failures++
			c.Say("cannot reach the gateway %s (%v); trying again", url, err)
			i++ // the next gateway, if there are several
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry.Backoff(minB, maxB, max(failures, 1))):
		}
	}
}

// errPaired ends the pairing session: the node has its token.
var errPaired = errors.New("paired")

// session connects to the gateway at url once: pairs (errPaired once the
// node has its token), or serves calls until the connection ends.
// connected says that the gateway welcomed the node.
func (c *Client) session(ctx context.Context, url string, id *Identity) (connected bool, err error) {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	ws, _, err := websocket.Dial(dctx, url, nil)
	cancel()
	if err != nil {
		return false, err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(16 << 20)
	hello := message{Type: typeHello, Version: ProtocolVersion, Node: id.ID, Name: id.Name, Token: id.Token, Capabilities: c.Capabilities, Info: c.Info}
	if err := wsjson.Write(ctx, ws, hello); err != nil {
		return false, err
	}
	var m message
	if err := c.read(ctx, ws, &m); err != nil {
		return false, err
	}
	switch m.Type {
	case typePairing:
		c.Say("pairing code %s: the owner approves it on the gateway with: toolbelt nodes approve %s (it expires %s)", m.Code, m.Code, m.Expires.Local().Format(time.TimeOnly))
		if err := c.read(ctx, ws, &m); err != nil {
			return false, err
		}
		if m.Type != typePaired || m.Token == "" {
			return false, fmt.Errorf("the gateway answered the pairing with %q", m.Type)
		}
		id.Token = m.Token
		if err := id.save(c.StateDir); err != nil {
			return false, fmt.Errorf("keeping the node's token: %w", err)
		}
		c.Say("paired with %s as %s (%s)", m.Gateway, id.Name, id.ID)
		return false, errPaired
	case typeWelcome:
	default:
		return false, fmt.Errorf("the gateway answered hello with %q", m.Type)
	}
	c.Say("connected to %s as %s (%s); offering %v", m.Gateway, id.Name, id.ID, c.Capabilities)
	return true, c.serve(ctx, ws)
}

// read reads a message; a gateway's refusal is a *RefusedError.
func (c *Client) read(ctx context.Context, ws *websocket.Conn, m *message) error {
	err := wsjson.Read(ctx, ws, m)
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code == websocket.StatusPolicyViolation {
		return &RefusedError{Reason: ce.Reason}
	}
	return err
}

// serve runs the calls the gateway sends until the connection ends;
// what is running then is cancelled (the gateway reports those calls as
// interrupted).
func (c *Client) serve(ctx context.Context, ws *websocket.Conn) error {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	running := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	defer func() { cancel(); _ = ws.CloseNow(); wg.Wait() }()
	go c.heartbeat(ctx, ws)
	for {
		var m message
		if err := c.read(ctx, ws, &m); err != nil {
			return err
		}
		switch m.Type {
		case typeCancel:
			mu.Lock()
			if stop := running[m.ID]; stop != nil {
				stop()
			}
			mu.Unlock()
		case typeCall:
			cctx, stop := context.WithCancel(ctx)
			mu.Lock()
			running[m.ID] = stop
			mu.Unlock()
			wg.Add(1)
			go func(m message) {
				defer wg.Done()
				defer func() { mu.Lock(); delete(running, m.ID); mu.Unlock(); stop() }()
				res := c.call(cctx, ws, m)
				if ctx.Err() != nil {
					return // the connection ended: the gateway reports the call interrupted
				}
				_ = wsjson.Write(ctx, ws, message{Type: typeResult, ID: m.ID, Result: &res})
			}(m)
		}
	}
}

// call runs the call m with Handle, unless the node does not offer its
// capability.
func (c *Client) call(ctx context.Context, ws *websocket.Conn, m message) tool.Result {
	if !slices.Contains(c.Capabilities, m.Capability) {
		return tool.Errorf("this node does not offer %q; it offers %v", m.Capability, c.Capabilities)
	}
	c.Logger.Info("running a call from the gateway", "id", m.ID, "capability", m.Capability)
	return c.Handle(ctx, m.Capability, m.Params, func(text string) {
		_ = wsjson.Write(ctx, ws, message{Type: typeProgress, ID: m.ID, Text: text})
	})
}

// heartbeat pings the gateway every Heartbeat; a gateway that does not
// answer within one is left, to reconnect.
func (c *Client) heartbeat(ctx context.Context, ws *websocket.Conn) {
	every := cmp.Or(c.Heartbeat, DefaultHeartbeat)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		err := ws.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				_ = ws.Close(websocket.StatusGoingAway, "the gateway did not answer a heartbeat")
			}
			return
		}
	}
}

// The capabilities a node can offer, for Client.Capabilities.
var AllCapabilities = []string{nodetool.Run, nodetool.Notify, nodetool.Read, nodetool.Write, nodetool.Status, nodetool.Screenshot, nodetool.Canvas}

// BrowserCapabilities are those of AllCapabilities that need a browser on
// the node: a node without one does not offer them.
var BrowserCapabilities = []string{nodetool.Screenshot, nodetool.Canvas}
