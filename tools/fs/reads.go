package fs

import (
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"sync"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
)

// ReadsService is the key under which a tool context carries the [Reads]
// of its sessions. When it carries them, the file tools hold each session
// to read before edit: edit, apply_patch's updates and write over an
// existing file are refused unless the session has seen the file's current
// content — read it, or written it itself — so that a model never
// overwrites what it has not seen. The agent loop's front doors set it
// (run, chat, sub-agents; off per agent), the MCP server when configured;
// a person's one-shot call never carries it.
var ReadsService = tool.NewService[*Reads]()

// Reads remembers, for each session (the caller's session key), the content
// of each file it has seen — the SHA-256 of what it read or wrote last — so
// that a change to a file the session has not seen, or that changed on
// disk since it saw it, is refused. Comparing content rather than size and
// modification time has no racy case: a change within the clock's
// resolution is a change. It forgets, when it grows past its bounds, the
// files of the session it saw least recently, or a session's oldest
// files: forgetting only asks a model to read again. Safe for concurrent
// use.
type Reads struct {
	mu       sync.Mutex
	sessions map[string]*seen
	tick     uint64 // counts uses, to order sessions and files by last use
}

// seen is what one session has seen: each file's content hash and when.
type seen struct {
	files map[string]seenFile
	used  uint64
}

type seenFile struct {
	sum  [sha256.Size]byte
	used uint64
}

// The bounds of what Reads keeps.
const (
	maxReadSessions = 1024
	maxReadFiles    = 4096
)

// NewReads returns an empty read state.
func NewReads() *Reads { return &Reads{sessions: map[string]*seen{}} }

// saw notes that session has seen sum as the content of file (a bridge's
// root and canonical path, see fileKey).
func (r *Reads) saw(session, file string, sum [sha256.Size]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tick++
	s := r.sessions[session]
	if s == nil {
		if len(r.sessions) >= maxReadSessions {
			delete(r.sessions, oldest(r.sessions, func(s *seen) uint64 { return s.used }))
		}
		s = &seen{files: map[string]seenFile{}}
		r.sessions[session] = s
	}
	if _, ok := s.files[file]; !ok && len(s.files) >= maxReadFiles {
		delete(s.files, oldest(s.files, func(f seenFile) uint64 { return f.used }))
	}
	s.used = r.tick
	s.files[file] = seenFile{sum: sum, used: r.tick}
}

// oldest returns the key of m whose value was used least recently.
func oldest[V any](m map[string]V, used func(V) uint64) string {
	key, at := "", ^uint64(0)
	for k, v := range m {
		if u := used(v); u < at {
			key, at = k, u
		}
	}
	return key
}

// state says whether session has seen file, and whether what it saw is
// sum.
func (r *Reads) state(session, file string, sum [sha256.Size]byte) (known, same bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[session]
	if s == nil {
		return false, false
	}
	f, ok := s.files[file]
	return ok, ok && f.sum == sum
}

// sessionReads is the read state of one call's session; nil when the
// call is not held to read before edit.
type sessionReads struct {
	r       *Reads
	session string
}

// readsOf returns the read state of inv's session, or nil.
func readsOf(inv tool.Invocation) *sessionReads {
	r, ok := ReadsService.Get(inv.Context)
	if !ok || r == nil {
		return nil
	}
	return &sessionReads{r: r, session: inv.Context.SessionKey}
}

// fileKey names the file at canonical path canon of bridge b.
func fileKey(b fsbridge.Bridge, canon string) string { return b.Root() + "\x00" + canon }

// mustHaveSeen refuses a change to f, a file that exists, when the session
// has not seen its current content. name is the path as the call gave it.
func (sr *sessionReads) mustHaveSeen(b fsbridge.Bridge, f *planned, name string) error {
	if sr == nil || !f.before.Exists {
		return nil
	}
	switch known, same := sr.r.state(sr.session, fileKey(b, f.canon), sha256.Sum256(f.before.Data)); {
	case !known:
		return tool.InputErrorf("%s has not been read in this session, so it was not changed: read it first (read with path %q), then make the change. A file that exists is changed only once its current content has been seen.", name, name)
	case !same:
		return tool.InputErrorf("%s changed on disk since this session last read it, so it was not changed: read it again (read with path %q) and make the change against what it holds now.", name, name)
	}
	return nil
}

// sawPlan notes the content every file of a committed plan has now.
func (sr *sessionReads) sawPlan(pl *plan) {
	if sr == nil {
		return
	}
	for _, canon := range pl.order {
		if f := pl.files[canon]; f.after.Exists {
			sr.r.saw(sr.session, fileKey(pl.b, canon), sha256.Sum256(f.after.Data))
		}
	}
}

// readHash hashes what a read reads, for the read state of its session.
type readHash struct {
	sr   *sessionReads
	file string
	h    hash.Hash
}

// hashedRead returns what the read of the file f at path p of b reads
// through: f itself, or, when the call is held to read before edit, f
// hashed for its session's read state, with the hash to finish once the
// read is done.
func hashedRead(ctx context.Context, inv tool.Invocation, b fsbridge.Bridge, p string, f io.Reader) (io.Reader, *readHash, error) {
	sr := readsOf(inv)
	if sr == nil {
		return f, nil, nil
	}
	canon, err := b.Resolve(ctx, p)
	if err != nil {
		return nil, nil, problem(p, err)
	}
	rh := &readHash{sr: sr, file: fileKey(b, canon), h: sha256.New()}
	return io.TeeReader(f, rh.h), rh, nil
}

// done reads what is left of r (the read showed only part of the file) and
// notes the file's content as seen by the session.
func (rh *readHash) done(r io.Reader) error {
	if rh == nil {
		return nil
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	var sum [sha256.Size]byte
	rh.h.Sum(sum[:0])
	rh.sr.r.saw(rh.sr.session, rh.file, sum)
	return nil
}
