package mcp

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeRejected is the JSON-RPC code of a message the transport could not
// deliver: over HTTP, a notification to a client session whose stream is
// gone (the client went away without ending its session).
const codeRejected = -32005

// staleSessions are the client sessions that could not be told of a
// change: they are not told again until they make a request, so a client
// gone away costs one debug line, not a warning per change of the tools.
// The idle timeout ends such a session.
type staleSessions struct {
	mu  sync.Mutex
	set map[*sdk.ServerSession]bool
}

// notifyLive is a sending middleware: change notifications skip stale
// sessions, and a session that rejects one becomes stale.
func (s *Server) notifyLive(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ss, ok := req.GetSession().(*sdk.ServerSession)
		if !ok || method != "notifications/tools/list_changed" {
			return next(ctx, method, req)
		}
		if s.stale.has(ss) {
			return nil, nil
		}
		res, err := next(ctx, method, req)
		if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && we.Code == codeRejected {
			s.stale.add(ss, s.sdk)
			s.opts.Logger.Debug("a client session no longer receives notifications; not telling it of changes until it makes a request", "session", ss.ID(), "err", err)
			return nil, nil
		}
		return res, err
	}
}

// noteLive is a receiving middleware: a stale session that makes a request
// is live again.
func (s *Server) noteLive(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
			s.stale.remove(ss)
		}
		return next(ctx, method, req)
	}
}

func (st *staleSessions) has(ss *sdk.ServerSession) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.set[ss]
}

// add marks ss stale, and forgets the sessions of srv that have ended.
func (st *staleSessions) add(ss *sdk.ServerSession, srv *sdk.Server) {
	open := map[*sdk.ServerSession]bool{}
	for o := range srv.Sessions() {
		open[o] = true
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.set == nil {
		st.set = map[*sdk.ServerSession]bool{}
	}
	for o := range st.set {
		if !open[o] {
			delete(st.set, o)
		}
	}
	st.set[ss] = true
}

func (st *staleSessions) remove(ss *sdk.ServerSession) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.set, ss)
}
