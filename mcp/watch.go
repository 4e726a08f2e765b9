package mcp

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// watches follows the files behind the server's own resources that
// clients subscribed to (workspace files, configured files): a change of
// one is notifications/resources/updated to its subscribers.
type watches struct {
	mu    sync.Mutex
	w     *fsnotify.Watcher                      // started with the first file
	subs  map[string]map[*sdk.ServerSession]bool // uri → its subscribers
	files map[string]string                      // uri → its file, if it has one
	dirs  map[string]int                         // watched folder → its subscribed files' URIs
}

// subscribeOwn answers resources/subscribe of one of the server's own
// resources: a workspace file (when the policy lets the client read it
// with the read tool) or a configured resource. Its file, when it has
// one on this machine, is watched (its folder, so that a file replaced by
// a rename counts too); a configured text never changes.
func (s *Server) subscribeOwn(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	var file string
	if p, ok := filePath(uri); ok && s.runner.Context().FS != nil {
		if err := s.mayCall(ctx, callerOf(s.opts.Owner, req.Session, req.Extra), "read", map[string]any{"path": p}); err != nil {
			return err
		}
		if ws := s.runner.Context().Workspace; ws != "" && filepath.IsLocal(p) {
			file = filepath.Join(ws, filepath.FromSlash(p))
		}
	} else {
		_, _, f, err := s.configuredOf(uri)
		if err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s cannot be subscribed to: it is none of this server's resources (%v)", uri, err)}
		}
		file = f
	}
	w := &s.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil {
		w.subs, w.files, w.dirs = map[string]map[*sdk.ServerSession]bool{}, map[string]string{}, map[string]int{}
	}
	if w.subs[uri][req.Session] {
		return nil
	}
	if w.subs[uri] == nil {
		if file != "" {
			if err := s.watchLocked(file); err != nil {
				return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s cannot be watched: %v", uri, err)}
			}
			w.files[uri] = filepath.Clean(file)
		}
		w.subs[uri] = map[*sdk.ServerSession]bool{}
	}
	w.subs[uri][req.Session] = true
	go s.releaseAtEnd(req.Session, uri)
	return nil
}

// watchLocked watches the folder of file, starting the watcher with the
// first; s.watches.mu is held.
func (s *Server) watchLocked(file string) error {
	w := &s.watches
	if w.w == nil {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		w.w = fw
		go s.followFiles(fw)
	}
	dir := filepath.Dir(filepath.Clean(file))
	if w.dirs[dir] == 0 {
		if err := w.w.Add(dir); err != nil {
			return err
		}
	}
	w.dirs[dir]++
	return nil
}

// unsubscribeOwn ends req's session's subscription to one of the server's
// own resources; it reports false when the session had none.
func (s *Server) unsubscribeOwn(req *sdk.UnsubscribeRequest) bool {
	uri := req.Params.URI
	w := &s.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.subs[uri][req.Session] {
		return false
	}
	delete(w.subs[uri], req.Session)
	if len(w.subs[uri]) > 0 {
		return true
	}
	delete(w.subs, uri)
	if file, ok := w.files[uri]; ok {
		delete(w.files, uri)
		dir := filepath.Dir(file)
		if w.dirs[dir]--; w.dirs[dir] == 0 {
			delete(w.dirs, dir)
			_ = w.w.Remove(dir) // gone with the folder already, or not: either way unwatched
		}
	}
	return true
}

// followFiles tells the subscribers of a resource whose file changed,
// until fw is closed.
func (s *Server) followFiles(fw *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write) {
				continue
			}
			name := filepath.Clean(ev.Name)
			var changed []string
			s.watches.mu.Lock()
			for uri, file := range s.watches.files {
				if file == name {
					changed = append(changed, uri)
				}
			}
			s.watches.mu.Unlock()
			for _, uri := range changed {
				if err := s.sdk.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
					s.opts.Logger.Debug("telling subscribers of a changed resource", "uri", uri, "err", err)
				}
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			s.opts.Logger.Debug("watching subscribed resources' files", "err", err)
		}
	}
}

// closeWatches stops watching files.
func (s *Server) closeWatches() {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	if s.watches.w != nil {
		_ = s.watches.w.Close()
	}
}
