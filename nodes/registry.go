// Package nodes pairs other machines with a gateway and runs work on them.
//
// A node (toolbelt node --gateway URL) keeps one authenticated WebSocket to
// a gateway (toolbelt serve, Hub) and serves its capabilities through its
// own pipeline (Client). Everything the gateways share lives in the store
// (SQLite, or PostgreSQL for several gateways): the paired nodes, with
// their tokens kept as SHA-256 only (Registry); the pairing requests
// waiting for the owner; and every call to a node, a row that the gateway
// holding the node's connection takes, sends, and answers with the node's
// progress and result. So any process on the store — another gateway, an
// agent run, the CLI — invokes any node, and an idempotency key makes a
// retried call the same row, run at most once.
package nodes

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// Defaults of Options.
const (
	DefaultHeartbeat  = 5 * time.Second
	DefaultPoll       = 100 * time.Millisecond
	DefaultPairingTTL = 10 * time.Minute
	// maxPending bounds the pairing requests waiting at once, so that
	// strangers cannot fill the store; maxPendingPerSource bounds those of
	// one source (an IP address, an IPv6 /64), so that one stranger cannot
	// fill the rest.
	maxPending          = 32
	maxPendingPerSource = 4
	// takeWithin is how long a queued call waits for the gateway holding
	// its node to take it before it fails (it did not run): its caller has
	// given up on it by then, so no gateway sends it later.
	takeWithin = 30 * time.Second
	// CallRetention is how long the row of a finished call to a node is
	// kept (and so how long its idempotency key answers a retry); the
	// gateways prune older ones.
	CallRetention = 7 * 24 * time.Hour
)

// The states of a call to a node.
const (
	queued      = "queued"
	running     = "running"
	done        = "done"
	failed      = "failed"
	interrupted = "interrupted"
)

// Options tune a Registry; zero values take the defaults.
type Options struct {
	// Heartbeat is how often a gateway pings its nodes and records that
	// they answered; a node unheard of for three heartbeats (of the
	// gateway holding it, whatever other gateways on the store use) is
	// offline.
	Heartbeat time.Duration
	// Poll is how often pending calls and pairing requests are looked at
	// in the store.
	Poll time.Duration
	// PairingTTL is how long a pairing request waits for the owner.
	PairingTTL time.Duration
}

// Registry is the paired nodes, their pairing requests and the calls to
// them, in a store shared by every gateway. It implements the nodes
// tool's Service.
type Registry struct {
	st *store.Store
	o  Options
	// queued wakes this process's hub when a call is queued here.
	queued chan struct{}
}

var _ nodetool.Service = (*Registry)(nil)

// NewRegistry returns the registry kept in st.
func NewRegistry(st *store.Store, o Options) *Registry {
	o.Heartbeat = cmp.Or(o.Heartbeat, DefaultHeartbeat)
	o.Poll = cmp.Or(o.Poll, DefaultPoll)
	o.PairingTTL = cmp.Or(o.PairingTTL, DefaultPairingTTL)
	return &Registry{st: st, o: o, queued: make(chan struct{}, 1)}
}

// offlineAfter is how long after a heartbeat this gateway records a node
// counts as offline although the gateway still names it (it stopped). The
// row records it with each heartbeat (offline_after_ns), so that every
// process on the store, whatever its own Heartbeat, judges the node by the
// heartbeat of the gateway holding it.
func (r *Registry) offlineAfter() time.Duration { return 3 * r.o.Heartbeat }

// aliveUntil is the deadline of a node's row whose last heartbeat was at
// seen, recorded by a gateway that counts it offline after offline: seen
// plus offline — or, for a row no gateway of this version has recorded a
// heartbeat in (offline is 0), plus this process's offlineAfter, as
// gateways of earlier versions judge it.
func (r *Registry) aliveUntil(seen, offline int64) int64 {
	if offline > 0 {
		return seen + offline
	}
	return seen + int64(r.offlineAfter())
}

// aliveUntilSQL is aliveUntil in SQL, for the row nodes, with the
// argument offlineAfter in nanoseconds.
const aliveUntilSQL = "(nodes.seen_ns + CASE WHEN nodes.offline_after_ns > 0 THEN nodes.offline_after_ns ELSE ? END)"

const nodeColumns = "id, name, capabilities, info, paired_ns, approved_by, gateway, seen_ns, offline_after_ns"

func (r *Registry) scanNode(row interface{ Scan(...any) error }) (nodetool.Node, error) {
	var n nodetool.Node
	var caps, info string
	var paired, seen, offline int64
	if err := row.Scan(&n.ID, &n.Name, &caps, &info, &paired, &n.ApprovedBy, &n.Gateway, &seen, &offline); err != nil {
		return n, err
	}
	_ = json.Unmarshal([]byte(caps), &n.Capabilities)
	_ = json.Unmarshal([]byte(info), &n.Info)
	n.PairedAt = time.Unix(0, paired)
	if seen > 0 {
		n.LastSeen = time.Unix(0, seen)
	}
	n.Online = n.Gateway != "" && time.Now().UnixNano() <= r.aliveUntil(seen, offline)
	if !n.Online {
		n.Gateway = ""
	}
	return n, nil
}

// Nodes returns the paired nodes, by name.
func (r *Registry) Nodes(ctx context.Context) ([]nodetool.Node, error) {
	var out []nodetool.Node
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+nodeColumns+" FROM nodes ORDER BY name, id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			n, err := r.scanNode(rows)
			if err != nil {
				return err
			}
			out = append(out, n)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return out, nil
}

// Node returns the paired node whose id or name is ref; an unknown or
// ambiguous ref is a *nodetool.Refused naming the nodes there are.
func (r *Registry) Node(ctx context.Context, ref string) (nodetool.Node, error) {
	list, err := r.Nodes(ctx)
	if err != nil {
		return nodetool.Node{}, err
	}
	ref = strings.TrimSpace(ref)
	var named []nodetool.Node
	for _, n := range list {
		if n.ID == ref {
			return n, nil
		}
		if strings.EqualFold(n.Name, ref) {
			named = append(named, n)
		}
	}
	switch len(named) {
	case 1:
		return named[0], nil
	case 0:
		var known []string
		for _, n := range list {
			known = append(known, n.Name+" ("+n.ID+")")
		}
		if len(known) == 0 {
			return nodetool.Node{}, &nodetool.Refused{Reason: fmt.Sprintf("no node %q: no node is paired (a machine pairs with toolbelt node --gateway URL, and the owner approves its code)", ref)}
		}
		return nodetool.Node{}, &nodetool.Refused{Reason: fmt.Sprintf("no node %q is paired; the paired nodes are %s", ref, strings.Join(known, ", "))}
	}
	var ids []string
	for _, n := range named {
		ids = append(ids, n.ID)
	}
	return nodetool.Node{}, &nodetool.Refused{Reason: fmt.Sprintf("several nodes are named %q: name one by its id (%s)", ref, strings.Join(ids, ", "))}
}

// NormalizeCode returns a pairing code as the store keeps it: upper case,
// with its dash ("abcdefgh" → "ABCD-EFGH").
func NormalizeCode(code string) string {
	c := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(strings.TrimSpace(code)))
	if len(c) == 8 {
		return c[:4] + "-" + c[4:]
	}
	return c
}

// codeAlphabet leaves out letters and digits people confuse (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

func newCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:])
}

// newToken returns a node's secret token.
func newToken() string { return randid.New("tbn_", 32) }

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

const pairingColumns = "code, node_id, name, info, gateway, created_ns, expires_ns, state, decided_by"

func scanPairing(row interface{ Scan(...any) error }) (nodetool.Pairing, error) {
	var p nodetool.Pairing
	var info string
	var created, expires int64
	err := row.Scan(&p.Code, &p.NodeID, &p.Name, &info, &p.Gateway, &created, &expires, &p.State, &p.DecidedBy)
	_ = json.Unmarshal([]byte(info), &p.Info)
	p.Requested, p.Expires = time.Unix(0, created), time.Unix(0, expires)
	return p, err
}

// Pending returns the pairing requests waiting for the owner, oldest
// first.
func (r *Registry) Pending(ctx context.Context) ([]nodetool.Pairing, error) {
	var out []nodetool.Pairing
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+pairingColumns+" FROM node_pairings WHERE state = ? AND expires_ns > ? ORDER BY created_ns, code",
			"pending", time.Now().UnixNano())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanPairing(rows)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing pairing requests: %w", err)
	}
	return out, nil
}

// Approve approves the pairing request with code, for by; the gateway the
// node waits on then gives it its token.
func (r *Registry) Approve(ctx context.Context, code, by string) (nodetool.Pairing, error) {
	return r.decide(ctx, code, by, "approved")
}

// Reject rejects the pairing request with code, for by; the node is told
// and refused.
func (r *Registry) Reject(ctx context.Context, code, by string) (nodetool.Pairing, error) {
	return r.decide(ctx, code, by, "rejected")
}

func (r *Registry) decide(ctx context.Context, code, by, state string) (nodetool.Pairing, error) {
	code = NormalizeCode(code)
	var p nodetool.Pairing
	err := r.st.Write(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, "UPDATE node_pairings SET state = ?, decided_by = ? WHERE code = ? AND state = ? AND expires_ns > ?",
			state, by, code, "pending", time.Now().UnixNano())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &nodetool.Refused{Reason: fmt.Sprintf("no pairing request with code %s is waiting (it expired, was answered, or the code is mistyped): toolbelt nodes lists those waiting", code)}
		}
		p, err = scanPairing(tx.QueryRow(ctx, "SELECT "+pairingColumns+" FROM node_pairings WHERE code = ?", code))
		return err
	})
	return p, err
}

// pairingRefused is why a node's request to pair is not recorded: a
// limit, or the node id is taken. Its text is for the node; the gateway
// closes the connection with Permanent's status.
type pairingRefused struct {
	Reason string
	// Permanent says that asking again will not help (the id is paired);
	// otherwise the node may try again later.
	Permanent bool
}

func (e *pairingRefused) Error() string { return e.Reason }

// requestPairing records the pairing request of the node id, made from
// source (the asking connection's address, see Source) and waiting on
// gateway, and returns its code. It refuses (*pairingRefused) an id that
// is paired or has a request already — a stranger's hello replaces
// neither — and a request beyond the limits of those waiting.
func (r *Registry) requestPairing(ctx context.Context, id, name string, info map[string]string, source, gateway string) (nodetool.Pairing, error) {
	now := time.Now()
	p := nodetool.Pairing{Code: newCode(), NodeID: id, Name: name, Info: info, Gateway: gateway, Requested: now, Expires: now.Add(r.o.PairingTTL), State: "pending"}
	infoJSON, _ := json.Marshal(info)
	err := r.st.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM node_pairings WHERE expires_ns <= ?", now.UnixNano()); err != nil {
			return err
		}
		var paired, asked, waiting, fromSource int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM nodes WHERE id = ?", id).Scan(&paired); err != nil {
			return err
		}
		if paired > 0 {
			return &pairingRefused{Permanent: true, Reason: fmt.Sprintf("node id %s is paired already: a node that lost its token pairs again under a new id (toolbelt node --pair)", id)}
		}
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM node_pairings WHERE node_id = ?", id).Scan(&asked); err != nil {
			return err
		}
		if asked > 0 {
			return &pairingRefused{Reason: fmt.Sprintf("a pairing request of node id %s is waiting already; try again when it is answered or expires", id)}
		}
		if err := tx.QueryRow(ctx, "SELECT COUNT(*), COALESCE(SUM(CASE WHEN source = ? THEN 1 ELSE 0 END), 0) FROM node_pairings WHERE state = ?", source, "pending").
			Scan(&waiting, &fromSource); err != nil {
			return err
		}
		if waiting >= maxPending {
			return &pairingRefused{Reason: fmt.Sprintf("%d pairing requests are already waiting: the owner answers them first (toolbelt nodes)", waiting)}
		}
		if fromSource >= maxPendingPerSource {
			return &pairingRefused{Reason: fmt.Sprintf("%d pairing requests from this address are already waiting: the owner answers them first (toolbelt nodes)", fromSource)}
		}
		// Two requests of one id at once (on PostgreSQL both pass the count
		// above): the unique index of waiting requests takes one, and the
		// other is told to wait, as above.
		res, err := tx.Exec(ctx, "INSERT INTO node_pairings ("+pairingColumns+", source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
			p.Code, id, name, string(infoJSON), gateway, now.UnixNano(), p.Expires.UnixNano(), "pending", "", source)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return &pairingRefused{Reason: fmt.Sprintf("a pairing request of node id %s is waiting already; try again when it is answered or expires", id)}
		}
		return nil
	})
	return p, err
}

// Source is the pairing source of a connection from remoteAddr (an
// http.Request's RemoteAddr): its IP address, or for IPv6 its /64 (one
// machine's usual share).
func Source(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() || ip.IsLoopback() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// pairing returns the pairing request with code; sql.ErrNoRows when none.
func (r *Registry) pairing(ctx context.Context, code string) (nodetool.Pairing, error) {
	var p nodetool.Pairing
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		var err error
		p, err = scanPairing(tx.QueryRow(ctx, "SELECT "+pairingColumns+" FROM node_pairings WHERE code = ?", code))
		return err
	})
	return p, err
}

// completePairing makes the approved request p a paired node with a new
// token, which it returns (the store keeps only its hash).
func (r *Registry) completePairing(ctx context.Context, p nodetool.Pairing, caps []string) (string, error) {
	token := newToken()
	capsJSON, _ := json.Marshal(caps)
	infoJSON, _ := json.Marshal(p.Info)
	err := r.st.Write(ctx, func(tx *store.Tx) error {
		// A paired node's record is never replaced: requestPairing refuses
		// its id, and an id paired meanwhile fails here.
		if _, err := tx.Exec(ctx, "INSERT INTO nodes ("+nodeColumns+", token_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			p.NodeID, p.Name, string(capsJSON), string(infoJSON), time.Now().UnixNano(), p.DecidedBy, "", 0, 0, tokenHash(token)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM node_pairings WHERE code = ?", p.Code)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("pairing node %s: %w", p.NodeID, err)
	}
	return token, nil
}

// removePairing forgets the answered or expired request with code.
func (r *Registry) removePairing(ctx context.Context, code string) error {
	return r.st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM node_pairings WHERE code = ?", code)
		return err
	})
}

// errUnknownNode is why a node with a token is refused.
var errUnknownNode = errors.New("this node is not paired with the gateway, or its token is wrong: pair it again with toolbelt node --pair")

// authenticate checks the token of the node id.
func (r *Registry) authenticate(ctx context.Context, id, token string) error {
	var hash string
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT token_sha256 FROM nodes WHERE id = ?", id).Scan(&hash)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return errUnknownNode
	}
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(hash), []byte(tokenHash(token))) != 1 {
		return errUnknownNode
	}
	return nil
}

// attach records that gateway holds the connection of node id, which
// advertises caps; calls the node ran over an earlier connection can no
// longer finish, so they are interrupted.
func (r *Registry) attach(ctx context.Context, id, gateway string, caps []string, info map[string]string) error {
	capsJSON, _ := json.Marshal(caps)
	infoJSON, _ := json.Marshal(info)
	return r.st.Write(ctx, func(tx *store.Tx) error {
		now := time.Now() // not before the store's turn comes: a deadline counts from it
		if _, err := tx.Exec(ctx, "UPDATE nodes SET gateway = ?, seen_ns = ?, offline_after_ns = ?, capabilities = ?, info = ? WHERE id = ?",
			gateway, now.UnixNano(), r.offlineAfter().Nanoseconds(), string(capsJSON), string(infoJSON), id); err != nil {
			return err
		}
		return interruptRunning(ctx, tx, id, "", "the node reconnected while the call ran: its connection was lost")
	})
}

// beat records that the node id answered gateway's heartbeat, and that it
// counts as alive for offlineAfter. It says whether gateway still holds
// the node: errRemoved when the owner removed it, errElsewhere when
// another gateway holds it now.
func (r *Registry) beat(ctx context.Context, id, gateway string) error {
	return r.st.Write(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, "UPDATE nodes SET seen_ns = ?, offline_after_ns = ? WHERE id = ? AND gateway = ?",
			time.Now().UnixNano(), r.offlineAfter().Nanoseconds(), id, gateway)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var paired int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM nodes WHERE id = ?", id).Scan(&paired); err != nil {
			return err
		}
		if paired == 0 {
			return errRemoved
		}
		return errElsewhere
	})
}

// Why beat finds that a gateway no longer holds a node.
var (
	errRemoved   = errors.New("the owner removed this node (toolbelt nodes remove): it must pair again (toolbelt node --pair)")
	errElsewhere = errors.New("another gateway holds the node's connection now")
)

// Remove unpairs the node whose id or name is ref: its record goes (its
// token no longer admits it, so it must pair again), its queued calls
// fail and its running ones are interrupted; the gateway holding its
// connection closes it at once — this process's hub when it holds it, any
// other gateway on the store at its next look at the store (Options.Poll),
// as it sees calls queued. It returns the node as it was.
func (r *Registry) Remove(ctx context.Context, ref string) (nodetool.Node, error) {
	n, err := r.Node(ctx, ref)
	if err != nil {
		return n, err
	}
	err = r.st.Write(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, "DELETE FROM nodes WHERE id = ?", n.ID)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return &nodetool.Refused{Reason: fmt.Sprintf("node %s (%s) was removed already", n.Name, n.ID)}
		}
		if _, err := tx.Exec(ctx, "UPDATE node_removals SET removed = removed + 1 WHERE id = 1"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE node_calls SET state = ?, result = ?, updated_ns = ? WHERE node_id = ? AND state = ?",
			failed, outcome(tool.Errorf("the call to the node failed: the owner removed node %s before it took the call, which did not run", n.Name)), time.Now().UnixNano(), n.ID, queued); err != nil {
			return err
		}
		return interruptRunning(ctx, tx, n.ID, "", "the owner removed node "+n.Name)
	})
	if err != nil {
		return n, fmt.Errorf("removing node %s: %w", n.Name, err)
	}
	r.wake()
	return n, nil
}

// wake tells this process's hub to look at the store now: a call was
// queued, or a node removed.
func (r *Registry) wake() {
	select {
	case r.queued <- struct{}{}:
	default:
	}
}

// paired returns the ids of the paired nodes.
func (r *Registry) paired(ctx context.Context) (map[string]bool, error) {
	return r.ids(ctx, "SELECT id FROM nodes")
}

// removals returns how many nodes have been removed (Remove counts each).
func (r *Registry) removals(ctx context.Context) (int64, error) {
	var n int64
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT removed FROM node_removals WHERE id = 1").Scan(&n)
	})
	return n, err
}

// ids returns the set of ids the query q, with args, selects.
func (r *Registry) ids(ctx context.Context, q string, args ...any) (map[string]bool, error) {
	out := map[string]bool{}
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out[id] = true
		}
		return rows.Err()
	})
	return out, err
}

// detach records that gateway lost the node id's connection, and
// interrupts the calls it was running there.
func (r *Registry) detach(ctx context.Context, id, gateway, why string) error {
	return r.st.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "UPDATE nodes SET gateway = '' WHERE id = ? AND gateway = ?", id, gateway); err != nil {
			return err
		}
		return interruptRunning(ctx, tx, id, gateway, why)
	})
}

// interruptRunning marks the running calls of node (those gateway runs,
// or all when gateway is "") interrupted, saying why.
func interruptRunning(ctx context.Context, tx *store.Tx, node, gateway, why string) error {
	q := "UPDATE node_calls SET state = ?, result = ?, updated_ns = ? WHERE node_id = ? AND state = ?"
	args := []any{interrupted, outcome(interruptedResult(why)), time.Now().UnixNano(), node, running}
	if gateway != "" {
		q += " AND gateway = ?"
		args = append(args, gateway)
	}
	_, err := tx.Exec(ctx, q, args...)
	return err
}

// interruptedResult is the result of a call interrupted while it ran on
// its node, because of why.
func interruptedResult(why string) tool.Result {
	return tool.Errorf("the call was interrupted: %s. It may have run on the node in part or to the end, but it did not report that it finished: check on the node before running it again", why)
}

// gatewayLost is why a running call is interrupted when gateway, which
// ran it, no longer holds its node or records its heartbeats.
func gatewayLost(gateway string) string {
	return fmt.Sprintf("gateway %s, which ran it, stopped answering or lost the node", gateway)
}

// orphaned is the condition on node_calls, with the arguments running,
// offlineAfter in nanoseconds and the time now, of the running calls
// nobody can finish: their gateway no longer holds their node (the node
// was removed, or is held elsewhere), or has let the node's deadline
// (aliveUntil) pass — it recorded no heartbeat for the offlineAfter of
// its own, and died without recording that it let the node go.
const orphaned = "state = ? AND NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = node_calls.node_id AND nodes.gateway = node_calls.gateway AND " + aliveUntilSQL + " >= ?)"

// interruptOrphans ends the orphaned calls (see orphaned) as interrupted,
// naming the gateway that ran each, so that a call whose gateway and
// caller both died does not stay running: its retry (same idempotency
// key) gets that answer, and the row is pruned in time.
func (r *Registry) interruptOrphans(ctx context.Context) error {
	now := time.Now().UnixNano()
	type orphan struct{ id, gateway string }
	var found []orphan
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT id, gateway FROM node_calls WHERE "+orphaned, running, r.offlineAfter().Nanoseconds(), now)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o orphan
			if err := rows.Scan(&o.id, &o.gateway); err != nil {
				return err
			}
			found = append(found, o)
		}
		return rows.Err()
	})
	if err != nil || len(found) == 0 {
		return err
	}
	return r.st.Write(ctx, func(tx *store.Tx) error {
		for _, o := range found {
			if _, err := tx.Exec(ctx, "UPDATE node_calls SET state = ?, result = ?, updated_ns = ? WHERE id = ? AND gateway = ? AND "+orphaned,
				interrupted, outcome(interruptedResult(gatewayLost(o.gateway))), time.Now().UnixNano(), o.id, o.gateway, running, r.offlineAfter().Nanoseconds(), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// outcome is a result as a call's row keeps it.
func outcome(r tool.Result) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// call is a call to a node as the gateway holding it sends it.
type call struct {
	ID, Capability string
	Params         json.RawMessage
}

// take claims the queued calls of node for gateway, if gateway holds the
// node. A call its caller cancelled, or older than takeWithin (its caller
// has given up), is not sent: it fails, saying it did not run.
func (r *Registry) take(ctx context.Context, node, gateway string) ([]call, error) {
	var out []call
	err := r.st.Write(ctx, func(tx *store.Tx) error {
		if err := abandon(ctx, tx, "node_id = ? AND", node); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT id, capability, params FROM node_calls WHERE node_id = ? AND state = ? "+
			"AND EXISTS (SELECT 1 FROM nodes WHERE nodes.id = node_calls.node_id AND nodes.gateway = ?) ORDER BY created_ns", node, queued, gateway)
		if err != nil {
			return err
		}
		var found []call
		for rows.Next() {
			var c call
			var params string
			if err := rows.Scan(&c.ID, &c.Capability, &params); err != nil {
				rows.Close()
				return err
			}
			c.Params = json.RawMessage(params)
			found = append(found, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range found {
			res, err := tx.Exec(ctx, "UPDATE node_calls SET state = ?, gateway = ?, updated_ns = ? WHERE id = ? AND state = ?",
				running, gateway, time.Now().UnixNano(), c.ID, queued)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				out = append(out, c)
			}
		}
		return nil
	})
	return out, err
}

// abandon fails the queued calls (those matching where, a condition
// ending in AND, with args) that their callers cancelled or gave up on:
// older than takeWithin.
func abandon(ctx context.Context, tx *store.Tx, where string, args ...any) error {
	now := time.Now()
	args = append([]any{failed, outcome(tool.Errorf("the call to the node failed: its caller gave up on it before a gateway took it; it did not run")), now.UnixNano()}, args...)
	args = append(args, queued, now.Add(-takeWithin).UnixNano())
	_, err := tx.Exec(ctx, "UPDATE node_calls SET state = ?, result = ?, updated_ns = ? WHERE "+where+" state = ? AND (cancel OR created_ns < ?)", args...)
	return err
}

// prune fails the calls nobody took (see abandon) and deletes the rows of
// the calls that finished more than CallRetention ago.
func (r *Registry) prune(ctx context.Context) error {
	return r.st.Write(ctx, func(tx *store.Tx) error {
		if err := abandon(ctx, tx, ""); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM node_calls WHERE state IN (?, ?, ?) AND updated_ns < ?",
			done, failed, interrupted, time.Now().Add(-CallRetention).UnixNano())
		return err
	})
}

// cancelled returns which of the calls gateway runs were cancelled by
// their callers.
func (r *Registry) cancelled(ctx context.Context, gateway string) (map[string]bool, error) {
	return r.ids(ctx, "SELECT id FROM node_calls WHERE gateway = ? AND state = ? AND cancel", gateway, running)
}

// progress records what the call id of node reported last.
func (r *Registry) progress(ctx context.Context, id, node, gateway, text string) error {
	return r.st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE node_calls SET progress = ?, updated_ns = ? WHERE id = ? AND node_id = ? AND gateway = ? AND state = ?",
			text, time.Now().UnixNano(), id, node, gateway, running)
		return err
	})
}

// finish records node's result of its call id.
func (r *Registry) finish(ctx context.Context, id, node, gateway string, res tool.Result) error {
	state := done
	if res.IsError {
		state = failed
	}
	return r.st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE node_calls SET state = ?, result = ?, updated_ns = ? WHERE id = ? AND node_id = ? AND gateway = ? AND state = ?",
			state, outcome(res), time.Now().UnixNano(), id, node, gateway, running)
		return err
	})
}

// Invoke queues req for its node, waits for the gateway holding the node to
// run it, and returns the node's result, passing on its progress. See
// nodetool.Service.
func (r *Registry) Invoke(ctx context.Context, req nodetool.Request, progress func(string)) (tool.Result, error) {
	n, err := r.Node(ctx, req.Node)
	if err != nil {
		return tool.Result{}, err
	}
	if !slices.Contains(n.Capabilities, req.Capability) {
		return tool.Result{}, &nodetool.Refused{Reason: fmt.Sprintf("node %s does not offer %q; it offers %s", n.Name, req.Capability, strings.Join(n.Capabilities, ", "))}
	}
	params := cmp.Or(string(req.Params), "{}")
	id := tool.NewCallID("node")
	key := id
	if req.IdempotencyKey != "" {
		// A key holds within its scope: another session's same key is
		// another call, and never sees this one's result.
		sum := sha256.Sum256([]byte(req.Scope + "\x00" + req.IdempotencyKey))
		key = hex.EncodeToString(sum[:])
	}
	var existing struct{ id, capability, params string }
	if !n.Online {
		// A retry of a call that finished is answered even so.
		if req.IdempotencyKey != "" {
			if row, err := r.byKey(ctx, n.ID, key); err == nil && row.state != queued && row.state != running &&
				row.capability == req.Capability && sameJSON(row.params, params) {
				return r.wait(ctx, row.id, progress)
			}
		}
		return tool.Result{}, offline(n)
	}
	now := time.Now().UnixNano()
	err = r.st.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO node_calls (id, node_id, idem_key, capability, params, caller, state, gateway, progress, result, cancel, created_ns, updated_ns) "+
			"VALUES (?, ?, ?, ?, ?, ?, ?, '', '', '', FALSE, ?, ?) ON CONFLICT (node_id, idem_key) DO NOTHING",
			id, n.ID, key, req.Capability, params, req.Caller, queued, now, now); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT id, capability, params FROM node_calls WHERE node_id = ? AND idem_key = ?", n.ID, key).
			Scan(&existing.id, &existing.capability, &existing.params)
	})
	if err != nil {
		return tool.Result{}, fmt.Errorf("queueing a call to node %s: %w", n.Name, err)
	}
	if existing.id != id && (existing.capability != req.Capability || !sameJSON(existing.params, params)) {
		return tool.Result{}, &nodetool.Refused{Reason: fmt.Sprintf("the idempotency key %q was used for another call to node %s (%s %s): choose a new key for a different call", req.IdempotencyKey, n.Name, existing.capability, existing.params)}
	}
	r.wake()
	return r.wait(ctx, existing.id, progress)
}

// offline is the error of a call to the offline node n.
func offline(n nodetool.Node) error {
	if n.LastSeen.IsZero() {
		return &nodetool.Refused{Reason: fmt.Sprintf("node %s is offline: it has not connected since it was paired %s", n.Name, n.PairedAt.UTC().Format(time.RFC3339))}
	}
	return &nodetool.Refused{Reason: fmt.Sprintf("node %s is offline: last seen %s (%s ago)", n.Name, n.LastSeen.UTC().Format(time.RFC3339), time.Since(n.LastSeen).Round(time.Second))}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// callRow is a call's row as its caller watches it.
type callRow struct {
	id, node, capability, params, state, gateway, progress, result string
	created                                                        int64
}

func (r *Registry) readCall(ctx context.Context, where string, args ...any) (callRow, error) {
	var c callRow
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT id, node_id, capability, params, state, gateway, progress, result, created_ns FROM node_calls WHERE "+where, args...).
			Scan(&c.id, &c.node, &c.capability, &c.params, &c.state, &c.gateway, &c.progress, &c.result, &c.created)
	})
	return c, err
}

func (r *Registry) byKey(ctx context.Context, node, key string) (callRow, error) {
	return r.readCall(ctx, "node_id = ? AND idem_key = ?", node, key)
}

// wait follows the call id until it ends, passing on its progress. A call
// whose gateway or node went away while it ran is marked interrupted; one
// never taken fails, saying it did not run; a cancelled ctx asks the
// gateway to cancel it on the node.
func (r *Registry) wait(ctx context.Context, id string, progress func(string)) (tool.Result, error) {
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	last := ""
	for {
		if ctx.Err() != nil {
			wctx := context.WithoutCancel(ctx)
			err := r.st.Write(wctx, func(tx *store.Tx) error {
				_, err := tx.Exec(wctx, "UPDATE node_calls SET cancel = TRUE WHERE id = ?", id)
				return err
			})
			return tool.Result{}, errors.Join(ctx.Err(), err)
		}
		c, err := r.readCall(ctx, "id = ?", id)
		if err == nil && c.progress != last && progress != nil {
			last = c.progress
			progress(c.progress)
		}
		if err == nil && (c.state == queued || c.state == running) {
			err = r.check(ctx, c)
		}
		switch {
		case ctx.Err() != nil:
			continue
		case err != nil:
			return tool.Result{}, fmt.Errorf("following call %s to node %s: %w", id, c.node, err)
		case c.state == done || c.state == failed || c.state == interrupted:
			var res tool.Result
			if err := json.Unmarshal([]byte(c.result), &res); err != nil {
				return tool.Result{}, fmt.Errorf("reading the result of call %s: %w", id, err)
			}
			return res, nil
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// check ends the unfinished call c when nobody can finish it: its node
// went offline before a gateway took it (it did not run), nobody took it
// in time, or the gateway running it stopped or lost the node.
func (r *Registry) check(ctx context.Context, c callRow) error {
	var gateway string
	var seen, offline int64
	err := r.st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT gateway, seen_ns, offline_after_ns FROM nodes WHERE id = ?", c.node).Scan(&gateway, &seen, &offline)
	})
	if err != nil && !errors.Is(err, sql.ErrNoRows) { // no row: the node was removed, and nobody holds it
		return err
	}
	stale := time.Now().UnixNano() > r.aliveUntil(seen, offline)
	var state, why string
	switch {
	case c.state == queued && (gateway == "" || stale):
		state, why = failed, "the node went offline before it took the call, which did not run"
	case c.state == queued && time.Since(time.Unix(0, c.created)) > takeWithin:
		state, why = failed, fmt.Sprintf("gateway %s, which holds the node, did not take the call within %s; it did not run", gateway, takeWithin)
	case c.state == running && (gateway != c.gateway || stale):
		state, why = interrupted, gatewayLost(c.gateway)
	default:
		return nil
	}
	res := tool.Errorf("the call to the node failed: %s", why)
	if state == interrupted {
		res = interruptedResult(why)
	}
	return r.st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE node_calls SET state = ?, result = ?, updated_ns = ? WHERE id = ? AND state = ?",
			state, outcome(res), time.Now().UnixNano(), c.id, c.state)
		return err
	})
}
