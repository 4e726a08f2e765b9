package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// followSessions is a receiving middleware: from a client session's first
// request on, its end (the client closing it, its connection gone, the
// idle timeout, Close) is told to Options.SessionEnded.
func (s *Server) followSessions(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok && s.opts.SessionEnded != nil && s.follow(ss) {
			go func() {
				_ = ss.Wait()
				s.mu.Lock()
				delete(s.followed, ss)
				s.mu.Unlock()
				s.opts.SessionEnded(ss.ID())
			}()
		}
		return next(ctx, method, req)
	}
}

// follow reports whether ss is a session not followed yet, and follows it.
func (s *Server) follow(ss *sdk.ServerSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.followed[ss] {
		return false
	}
	if s.followed == nil {
		s.followed = map[*sdk.ServerSession]bool{}
	}
	s.followed[ss] = true
	return true
}
