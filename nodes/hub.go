package nodes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// Hub is a gateway's side of its nodes: it serves their WebSocket (pairing
// them, authenticating them by their tokens), pings them, and sends each
// the calls queued for it in the store, recording their progress and
// results there.
type Hub struct {
	reg *Registry
	id  string
	log *slog.Logger
	// announce tells the gateway's operator about a pairing request.
	announce func(nodetool.Pairing)

	mu      sync.Mutex
	conns   map[string]*link // by node id
	stopped bool             // Stop was called: no connection is taken
	run     context.Context  // ends at Stop, and with it every connection
	stop    context.CancelFunc
	done    chan struct{}
	wg      sync.WaitGroup // the connections' handlers
	// removals is Registry.removals at dispatch's last read of the paired
	// nodes (see dropRemoved); only dispatch touches it.
	removals int64
}

// HubOptions configure a Hub.
type HubOptions struct {
	// ID names the gateway in the store (its address, say); the nodes it
	// holds and the calls it runs carry it, with a suffix of the hub's own
	// (Hub.ID), so that two gateways started with one ID — one
	// configuration on one host — never take each other's nodes or calls.
	// Required.
	ID string
	// Logger receives what happens to the connections.
	Logger *slog.Logger
	// Announce, when set, is told of each pairing request as it arrives,
	// so the gateway shows its code.
	Announce func(nodetool.Pairing)
}

// link is a node's live connection to this gateway.
type link struct {
	ws   *websocket.Conn
	node string
	caps []string
	// ready says the node was recorded as held here and welcomed: calls
	// may be sent to it.
	ready atomic.Bool
	mu    sync.Mutex
	sent  map[string]bool // calls sent and not yet answered
	// cancelled are the calls whose cancel was sent.
	cancelled map[string]bool
	// checked says dispatch found the node paired since it was ready (see
	// dropRemoved); only dispatch touches it.
	checked bool
}

// NewHub returns the hub of the gateway o.ID over reg; Start it to send
// calls.
func NewHub(reg *Registry, o HubOptions) *Hub {
	id := o.ID
	if id != "" {
		id += "#" + randid.New("", 3)
	}
	return &Hub{reg: reg, id: id, log: o.Logger, announce: o.Announce, conns: map[string]*link{}}
}

// ID returns the gateway's name in the store: HubOptions.ID, '#', and a
// suffix of this hub's own ("127.0.0.1:7420#3f9a0c").
func (h *Hub) ID() string { return h.id }

// Start starts sending the queued calls of the nodes connected here.
func (h *Hub) Start(ctx context.Context) error {
	if h.id == "" {
		return errors.New("nodes: HubOptions.ID is required")
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.run, h.stop = context.WithCancel(context.WithoutCancel(ctx))
	h.done = make(chan struct{})
	go h.dispatch(h.run)
	return nil
}

// Stop closes the nodes' connections (they reconnect, here or to another
// gateway), records them as no longer held here, and interrupts the calls
// they were running.
func (h *Hub) Stop(ctx context.Context) error {
	h.mu.Lock()
	h.stopped = true
	h.mu.Unlock()
	if h.stop == nil {
		return nil
	}
	h.stop()
	<-h.done
	// Each closed with a handshake of its own, at once: a dead peer's
	// takes seconds, and must not hold the lock or the others up.
	var closing sync.WaitGroup
	h.mu.Lock()
	for _, l := range h.conns {
		closing.Go(func() { _ = l.ws.Close(websocket.StatusGoingAway, "the gateway is stopping") })
	}
	h.mu.Unlock()
	waited := make(chan struct{})
	go func() { h.wg.Wait(); closing.Wait(); close(waited) }()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pruneEvery is how often a hub prunes the calls to nodes (Registry.prune).
const pruneEvery = time.Hour

// dispatch sends queued calls and cancels to the nodes held here, and
// closes the connections of nodes the owner removed, when this process
// queues a call or removes a node and every Poll for the others; ends the
// calls a dead gateway left running (Registry.interruptOrphans) when it
// starts and every Heartbeat; and prunes the calls' rows when it starts
// and every pruneEvery.
func (h *Hub) dispatch(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(h.reg.o.Poll)
	defer t.Stop()
	var pruned, swept time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.reg.queued:
		}
		if time.Since(pruned) >= pruneEvery {
			pruned = time.Now()
			if err := h.reg.prune(ctx); err != nil && ctx.Err() == nil {
				h.log.Warn("pruning the calls to nodes", "err", err)
			}
		}
		if time.Since(swept) >= h.reg.o.Heartbeat {
			swept = time.Now()
			if err := h.reg.interruptOrphans(ctx); err != nil && ctx.Err() == nil {
				h.log.Warn("ending the node calls of gateways gone", "err", err)
			}
		}
		h.mu.Lock()
		links := make([]*link, 0, len(h.conns))
		for _, l := range h.conns {
			if l.ready.Load() {
				links = append(links, l)
			}
		}
		h.mu.Unlock()
		if len(links) == 0 {
			continue
		}
		links = h.dropRemoved(ctx, links)
		cancelled, err := h.reg.cancelled(ctx, h.id)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("reading cancelled node calls", "err", err)
		}
		for _, l := range links {
			h.send(ctx, l, cancelled)
		}
	}
}

// dropRemoved closes the connections among links of the nodes the owner
// removed (Registry.Remove, in any process on the store), and returns the
// others. It reads the paired nodes only when a node was removed since it
// last did (the count of removals, read first, changed) or a link is new
// since then; otherwise that one row says nothing changed.
func (h *Hub) dropRemoved(ctx context.Context, links []*link) []*link {
	removals, err := h.reg.removals(ctx)
	if err == nil && removals == h.removals && !slices.ContainsFunc(links, func(l *link) bool { return !l.checked }) {
		return links
	}
	var paired map[string]bool
	if err == nil {
		paired, err = h.reg.paired(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("reading the paired nodes", "err", err)
		}
		return links
	}
	h.removals = removals
	kept := links[:0]
	for _, l := range links {
		if paired[l.node] {
			l.checked = true
			kept = append(kept, l)
			continue
		}
		// No call goes to it now; its close handshake, which a dead peer
		// holds up for seconds, is not the loop's to wait for. Stop waits
		// for it, as for the connection's handler.
		l.ready.Store(false)
		h.log.Info("closing a removed node's connection", "node", l.node)
		h.wg.Go(func() { closeWith(l.ws, websocket.StatusPolicyViolation, errRemoved.Error()) })
	}
	return kept
}

// send sends l's node its queued calls and the cancels of those of its
// calls in cancelled.
func (h *Hub) send(ctx context.Context, l *link, cancelled map[string]bool) {
	calls, err := h.reg.take(ctx, l.node, h.id)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("taking node calls", "node", l.node, "err", err)
		}
		return
	}
	for _, c := range calls {
		l.mu.Lock()
		l.sent[c.ID] = true
		l.mu.Unlock()
		if err := wsjson.Write(ctx, l.ws, message{Type: typeCall, ID: c.ID, Capability: c.Capability, Params: c.Params}); err != nil {
			// The reader sees the connection end and interrupts it.
			_ = l.ws.Close(websocket.StatusInternalError, "sending a call failed")
			return
		}
	}
	l.mu.Lock()
	var cancels []string
	for id := range l.sent {
		if cancelled[id] && !l.cancelled[id] {
			l.cancelled[id] = true
			cancels = append(cancels, id)
		}
	}
	l.mu.Unlock()
	for _, id := range cancels {
		_ = wsjson.Write(ctx, l.ws, message{Type: typeCancel, ID: id})
	}
}

// helloWithin is how long a new connection has to say hello.
const helloWithin = 10 * time.Second

// ServeHTTP serves a node's WebSocket at Path.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered
	}
	h.mu.Lock()
	if h.stopped || h.run == nil {
		h.mu.Unlock()
		_ = ws.Close(websocket.StatusGoingAway, "the gateway is stopping")
		return
	}
	h.wg.Add(1) // under mu, so that Stop's Wait sees every connection taken
	h.mu.Unlock()
	defer h.wg.Done()
	ws.SetReadLimit(16 << 20)
	// A connection ends with its request, or when the hub stops: one that
	// arrived while Stop closed the others ends too.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.run, cancel)()
	hctx, cancel := context.WithTimeout(ctx, helloWithin)
	var hello message
	err = wsjson.Read(hctx, ws, &hello)
	cancel()
	if err != nil || hello.Type != typeHello || hello.Node == "" {
		_ = ws.Close(websocket.StatusProtocolError, "a node opens with its hello")
		return
	}
	if !validID(hello.Node) || len(hello.Name) > maxName {
		_ = ws.Close(websocket.StatusPolicyViolation, fmt.Sprintf("a node's id is at most 64 letters, digits, '.', '_' or '-', and its name at most %d bytes", maxName))
		return
	}
	if hello.Version != ProtocolVersion {
		_ = ws.Close(websocket.StatusPolicyViolation, fmt.Sprintf("the gateway speaks nodes protocol %d, the node %d: run the same toolbelt on both", ProtocolVersion, hello.Version))
		return
	}
	if hello.Token == "" {
		h.pair(ctx, ws, hello, r.RemoteAddr)
		return
	}
	switch err := h.reg.authenticate(ctx, hello.Node, hello.Token); {
	case errors.Is(err, errUnknownNode):
		h.log.Warn("refused a node", "node", hello.Node, "name", hello.Name, "from", r.RemoteAddr, "err", err)
		closeWith(ws, websocket.StatusPolicyViolation, err.Error())
		return
	case err != nil:
		h.unavailable(ws, "checking a node's token", err, "node", hello.Node, "from", r.RemoteAddr)
		return
	}
	h.serve(ctx, ws, hello)
}

// unavailable closes ws with 1013 (try again later: the node retries)
// because of the store's err, which is logged here, never sent.
func (h *Hub) unavailable(ws *websocket.Conn, doing string, err error, attrs ...any) {
	h.log.Error(doing+" failed", append(attrs, "err", err)...)
	_ = ws.Close(websocket.StatusTryAgainLater, "the gateway cannot reach its store now: try again later")
}

// pair asks the owner to pair the node of hello, connected from
// remoteAddr, and gives it its token once they approve.
func (h *Hub) pair(ctx context.Context, ws *websocket.Conn, hello message, remoteAddr string) {
	p, err := h.reg.requestPairing(ctx, hello.Node, hello.Name, hello.Info, Source(remoteAddr), h.id)
	var refused *pairingRefused
	switch {
	case errors.As(err, &refused):
		h.log.Warn("refused a pairing request", "node", hello.Node, "name", hello.Name, "from", remoteAddr, "why", refused.Reason)
		code := websocket.StatusTryAgainLater
		if refused.Permanent {
			code = websocket.StatusPolicyViolation
		}
		closeWith(ws, code, refused.Reason)
		return
	case err != nil:
		h.unavailable(ws, "recording a pairing request", err, "node", hello.Node, "from", remoteAddr)
		return
	}
	h.log.Info("a node asks to pair", "node", hello.Node, "name", hello.Name, "code", p.Code)
	if h.announce != nil {
		h.announce(p)
	}
	if err := wsjson.Write(ctx, ws, message{Type: typePairing, Code: p.Code, Expires: p.Expires, Gateway: h.id}); err != nil {
		_ = h.reg.removePairing(context.WithoutCancel(ctx), p.Code)
		return
	}
	closed := ws.CloseRead(ctx) // the node sends nothing more; this sees it leave
	t := time.NewTicker(h.reg.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-closed.Done():
			_ = h.reg.removePairing(context.WithoutCancel(ctx), p.Code)
			return
		case <-t.C:
		}
		got, err := h.reg.pairing(ctx, p.Code)
		switch {
		case err != nil && !errors.Is(err, sql.ErrNoRows) && time.Now().Before(p.Expires):
			// The store failed for now: the request still waits.
			if ctx.Err() == nil {
				h.log.Warn("reading a pairing request", "code", p.Code, "err", err)
			}
		case err != nil || time.Now().After(got.Expires):
			_ = h.reg.removePairing(ctx, p.Code)
			_ = ws.Close(websocket.StatusPolicyViolation, "the pairing request expired: start the node again for a new code")
			return
		case got.State == "rejected":
			_ = h.reg.removePairing(ctx, p.Code)
			_ = ws.Close(websocket.StatusPolicyViolation, "the owner rejected this node's pairing request")
			return
		case got.State == "approved":
			token, err := h.reg.completePairing(ctx, got, hello.Capabilities)
			if err != nil {
				// The approved request goes, so the node's next hello asks
				// anew instead of waiting out the old one's expiry.
				_ = h.reg.removePairing(context.WithoutCancel(ctx), p.Code)
				h.unavailable(ws, "completing a pairing", err, "node", hello.Node, "code", p.Code)
				return
			}
			h.log.Info("paired a node", "node", hello.Node, "name", hello.Name, "by", got.DecidedBy)
			_ = wsjson.Write(ctx, ws, message{Type: typePaired, Token: token, Gateway: h.id})
			_ = ws.Close(websocket.StatusNormalClosure, "paired")
			return
		}
	}
}

// serve holds the authenticated node's connection: records it as held
// here, pings it, and records what it answers, until it ends.
func (h *Hub) serve(ctx context.Context, ws *websocket.Conn, hello message) {
	l := &link{ws: ws, node: hello.Node, caps: hello.Capabilities, sent: map[string]bool{}, cancelled: map[string]bool{}}
	// This connection replaces the node's older one here, if any (a node
	// that reconnects before the gateway saw its old connection die). The
	// old one is closed without a handshake, outside the lock: its peer
	// may be gone.
	h.mu.Lock()
	old := h.conns[l.node]
	h.conns[l.node] = l
	h.mu.Unlock()
	if old != nil {
		_ = old.ws.CloseNow()
	}
	why := "its connection to the gateway was lost"
	defer func() {
		h.mu.Lock()
		current := h.conns[l.node] == l
		if current {
			delete(h.conns, l.node)
		}
		h.mu.Unlock()
		if !current {
			// A newer connection holds the node: its attach interrupted
			// what this one ran, and the node stays held here.
			h.log.Info("a node's replaced connection ended", "node", l.node, "name", hello.Name)
			return
		}
		if err := h.reg.detach(context.WithoutCancel(ctx), l.node, h.id, "node "+hello.Name+": "+why); err != nil {
			h.log.Warn("recording a node gone", "node", l.node, "err", err)
		}
		h.log.Info("a node left", "node", l.node, "name", hello.Name)
	}()
	if err := h.reg.attach(ctx, l.node, h.id, slices.Clip(l.caps), hello.Info); err != nil {
		h.unavailable(ws, "recording a node's connection", err, "node", l.node)
		return
	}
	if err := wsjson.Write(ctx, ws, message{Type: typeWelcome, Gateway: h.id}); err != nil {
		return
	}
	l.ready.Store(true) // calls go to it only after its welcome
	h.log.Info("a node connected", "node", l.node, "name", hello.Name)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go h.heartbeat(ctx, l)
	h.reg.wake() // its queued calls now
	for {
		var m message
		if err := wsjson.Read(ctx, ws, &m); err != nil {
			if websocket.CloseStatus(err) == -1 && ctx.Err() == nil {
				why = "its connection to the gateway broke (" + err.Error() + ")"
			}
			return
		}
		wctx := context.WithoutCancel(ctx)
		if m.Type != typeProgress && m.Type != typeResult {
			continue
		}
		// A node answers only the calls sent to it over this connection.
		l.mu.Lock()
		ours := l.sent[m.ID]
		if m.Type == typeResult {
			delete(l.sent, m.ID)
		}
		l.mu.Unlock()
		if !ours {
			h.log.Warn("ignored a node's answer to a call not sent to it", "node", l.node, "name", hello.Name, "type", m.Type, "call", m.ID)
			continue
		}
		switch m.Type {
		case typeProgress:
			if err := h.reg.progress(wctx, m.ID, l.node, h.id, m.Text); err != nil {
				h.log.Warn("recording a node's progress", "node", l.node, "err", err)
			}
		case typeResult:
			res := tool.Errorf("the node answered without a result")
			if m.Result != nil {
				res = *m.Result
			}
			if err := h.reg.finish(wctx, m.ID, l.node, h.id, res); err != nil {
				h.log.Warn("recording a node's result", "node", l.node, "err", err)
			}
		}
	}
}

// heartbeat pings l's node every Heartbeat and records each answer; a
// node that does not answer within a heartbeat is disconnected.
func (h *Hub) heartbeat(ctx context.Context, l *link) {
	t := time.NewTicker(h.reg.o.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, h.reg.o.Heartbeat)
		err := l.ws.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				_ = l.ws.Close(websocket.StatusGoingAway, "the node did not answer a heartbeat")
			}
			return
		}
		switch err := h.reg.beat(ctx, l.node, h.id); {
		case errors.Is(err, errRemoved):
			h.log.Info("closing a removed node's connection", "node", l.node)
			closeWith(l.ws, websocket.StatusPolicyViolation, err.Error())
			return
		case errors.Is(err, errElsewhere):
			h.log.Info("closing a node's connection held by another gateway now", "node", l.node)
			_ = l.ws.Close(websocket.StatusGoingAway, err.Error())
			return
		case err != nil && ctx.Err() == nil:
			h.log.Warn("recording a heartbeat", "node", l.node, "err", err)
		}
	}
}

// closeWith closes ws with code and reason, the reason cut to the 123
// bytes a close frame holds.
func closeWith(ws *websocket.Conn, code websocket.StatusCode, reason string) {
	if len(reason) > 123 {
		reason = strings.ToValidUTF8(reason[:120], "") + "…"
	}
	_ = ws.Close(code, reason)
}

// maxName bounds the name a node gives itself.
const maxName = 100

// validID says whether id can be a node's id: what LoadIdentity makes
// ("node-" and hexadecimal digits) or another short plain word.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
