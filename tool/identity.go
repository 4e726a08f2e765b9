package tool

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"path/filepath"
	"time"
)

// crockford is the alphabet of call ids: Crockford's base32 in lower case
// (no i, l, o, u), so ids read and type without ambiguity.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewCallID returns a new call id: prefix, "_", then 18 characters of
// Crockford base32 — 10 for the time in milliseconds (so ids sort by time)
// and 8 random ones (40 bits) — for example "mcp_01jf3k8q2z7x4mnp2q".
// Ids from different processes and runs do not collide: two made in the
// same millisecond differ in their random part.
func NewCallID(prefix string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	ms := uint64(time.Now().UnixMilli())
	rnd := binary.BigEndian.Uint64(r[:]) >> 24 // 40 bits
	b := make([]byte, 0, len(prefix)+19)
	if prefix != "" {
		b = append(b, prefix...)
		b = append(b, '_')
	}
	for i := 9; i >= 0; i-- {
		b = append(b, crockford[(ms>>(5*uint(i)))&31])
	}
	for i := 7; i >= 0; i-- {
		b = append(b, crockford[(rnd>>(5*uint(i)))&31])
	}
	return string(b)
}

// Scope is where a call ran, as the records of the call are labelled: the
// workspace (absolute, symbolic links resolved) and the session of its
// identity ([Identity.Scope]). What one scope kept is not handed to
// another (see [WithScope]).
type Scope struct {
	// Workspace is the workspace directory, absolute and resolved; "" when
	// the call had none.
	Workspace string `json:"workspace,omitempty"`
	// Session is the session key; "" when the call had none.
	Session string `json:"session,omitempty"`
}

// ResolveDir returns dir absolute and cleaned, with its symbolic links
// resolved when it exists; "" stays "".
func ResolveDir(dir string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

type scopeKey struct{}

// WithScope returns ctx carrying s, the scope of the call it runs. The
// pipeline sets it for every call; stores that keep records of calls (the
// undo journal, kept outputs) read it with [ScopeFrom] to label what they
// keep and to hand out only what the same scope kept.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope ctx carries, and whether it carries one.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// Sees says whether a call in scope s may be handed what a call in scope
// kept kept: what a session kept goes only to that session; what was kept
// without a session goes only to calls without one in the same workspace.
func (s Scope) Sees(kept Scope) bool {
	if kept.Session != "" {
		return s.Session == kept.Session
	}
	return s.Session == "" && s.Workspace == kept.Workspace
}
