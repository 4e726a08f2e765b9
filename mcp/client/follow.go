package client

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/internal/importname"
)

// Ready names the servers that are ready now, in order.
func (m *Manager) Ready() []string {
	var names []string
	for _, st := range m.Status() {
		if st.State == StateReady {
			names = append(names, st.Name)
		}
	}
	return names
}

// PromptNames maps the names of a server's prompts to the names they are
// offered by, as its tools are named: server, separator, prompt.
func (m *Manager) PromptNames(server string, prompts []string) map[string]string {
	return importname.Local(server, m.opts.Separator, prompts)
}

// followers are the functions Follow registered.
type followers struct {
	mu   sync.Mutex
	next int
	byID map[int]follower
}

type follower struct {
	changed func()
	updated func(server, uri string)
}

// Follow calls changed whenever a server becomes ready or goes down, or
// says its resources or prompts changed, and updated when a server says
// one of its resources changed (notifications/resources/updated). Neither
// may block for long. It returns the function that stops following.
func (m *Manager) Follow(changed func(), updated func(server, uri string)) (stop func()) {
	f := &m.followers
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byID == nil {
		f.byID = map[int]follower{}
	}
	id := f.next
	f.next++
	f.byID[id] = follower{changed, updated}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.byID, id)
	}
}

// each calls fn with every follower.
func (f *followers) each(fn func(follower)) {
	f.mu.Lock()
	all := make([]follower, 0, len(f.byID))
	for _, x := range f.byID {
		all = append(all, x)
	}
	f.mu.Unlock()
	for _, x := range all {
		fn(x)
	}
}

// changed tells the followers that what the servers offer changed.
func (m *Manager) changed() {
	m.followers.each(func(x follower) { x.changed() })
}

// followNotifications sets the handlers of opts that tell the followers of
// s's notifications about its resources and prompts.
func (s *server) followNotifications(opts *mcp.ClientOptions) {
	opts.ResourceListChangedHandler = func(_ context.Context, req *mcp.ResourceListChangedRequest) {
		if s.current(req.Session) {
			s.m.changed()
		}
	}
	opts.PromptListChangedHandler = func(_ context.Context, req *mcp.PromptListChangedRequest) {
		if s.current(req.Session) {
			s.m.changed()
		}
	}
	opts.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if s.current(req.Session) {
			s.m.followers.each(func(x follower) { x.updated(s.name, req.Params.URI) })
		}
	}
}
