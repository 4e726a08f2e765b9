package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// Imported is what a Server needs of the MCP servers Toolbelt imports to
// offer their resources, resource templates and prompts as its own
// (mcp/client's Manager is one).
type Imported interface {
	// Ready names the servers that are ready now.
	Ready() []string
	// Session returns the live session of the named server for one
	// request, the request's context, and the function that ends it.
	Session(ctx context.Context, name string) (*sdk.ClientSession, context.Context, func(), error)
	// PromptNames maps the names of a server's prompts to the names they
	// are offered by (SERVER__PROMPT, as its tools).
	PromptNames(server string, prompts []string) map[string]string
	// Follow calls changed when a server becomes ready or goes down or
	// says its resources or prompts changed, and updated when one says a
	// resource changed; it returns the function that stops following.
	Follow(changed func(), updated func(server, uri string)) (stop func())
}

// The imported servers' resources are governed as reads of the resources
// tool (mcp/client's ResourcesTool), with the same arguments: what a
// client may read of them is what the policy lets it read with the tool.
const resourcesTool = "resources"

// The keys of the _meta Toolbelt puts on what it re-serves.
const (
	// MetaServer names the imported server a resource, template or prompt
	// is from.
	MetaServer = "toolbelt/server"
	// MetaExternal marks contents and prompt messages as text from
	// outside: data, not instructions.
	MetaExternal = "toolbelt/external"
)

// ownSchemes are the URI schemes of Toolbelt's own resources: an imported
// server's resource or template in them is not re-served, so that a URI
// of Toolbelt's never leads to an imported server.
var ownSchemes = []string{"workspace", "toolbelt"}

// schemeOf is a URI's (or a URI template's) scheme, when it starts with a
// literal one.
var schemeOf = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)

// importedTemplate is a re-served resource template.
type importedTemplate struct {
	server string
	match  *regexp.Regexp
}

// importedPrompt is a re-served prompt: its server and its own name there.
type importedPrompt struct{ server, name string }

// offer is what one sync found an imported server offers, by key (URI,
// URI template, offered prompt name), each with its JSON to see changes.
type offer struct {
	resources map[string]*sdk.Resource
	templates map[string]*sdk.ResourceTemplate
	prompts   map[string]*sdk.Prompt
	owner     map[string]string // "r"/"t"/"p" + key → server
	remote    map[string]string // offered prompt name → its name upstream
}

// imports holds what the server re-serves of the imported servers.
type imports struct {
	mu        sync.Mutex
	listed    map[string]string // "r"/"t"/"p" + key → the JSON it was listed with
	resources map[string]string // URI → server
	templates map[string]importedTemplate
	prompts   map[string]importedPrompt
	subs      map[string]map[*sdk.ServerSession]bool // imported URIs subscribed to → by whom
	// on holds, by subscribed URI, the session of its server the
	// subscription was made in: a server that restarted, or whose HTTP
	// session was established again, has a new session, which knows none
	// of them (see renew).
	on map[string]*sdk.ClientSession
	// failing is what failed of which server when last tried (see
	// failures); only followImports's goroutine touches it.
	failing failures
}

// followImports re-serves the imported servers' offers, following their
// changes until the returned function is called.
func (s *Server) followImports() (stop func()) {
	if s.opts.Imported == nil {
		return func() {}
	}
	kick := make(chan struct{}, 1)
	kick <- struct{}{}
	unfollow := s.opts.Imported.Follow(func() {
		select {
		case kick <- struct{}{}:
		default: // one is pending already
		}
	}, s.relayUpdated)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A listing or a renewal that failed (the server restarted and is
		// not yet answering, or answered slowly) is tried again after a
		// pause that doubles up to renewMaxWait, not only at the next
		// change, which may never come.
		retry := time.NewTimer(0)
		<-retry.C
		wait := renewMinWait
		for {
			select {
			case <-ctx.Done():
				retry.Stop()
				return
			case <-kick:
			case <-retry.C:
			}
			synced := s.syncImported(ctx)
			if s.renew(ctx) && synced {
				retry.Stop()
				wait = renewMinWait
				continue
			}
			retry.Reset(wait)
			wait = min(2*wait, renewMaxWait)
		}
	}()
	return func() { unfollow(); cancel(); <-done }
}

// renewMinWait and renewMaxWait bound the pause before a failed listing
// or renewal of subscriptions (Server.syncImported, Server.renew) is
// tried again.
const (
	renewMinWait = 250 * time.Millisecond
	renewMaxWait = 30 * time.Second
)

// syncImported makes the re-served resources, templates and prompts those
// the ready servers offer now: new and changed ones are added, gone ones
// removed (the SDK tells the clients their lists changed). It reports
// whether every ready server could be listed.
func (s *Server) syncImported(ctx context.Context) (ok bool) {
	o, ok := s.collect(ctx)
	im := &s.imported
	im.mu.Lock()
	defer im.mu.Unlock()
	var goneR, goneT, goneP []string
	for key := range im.listed {
		if _, ok := o.owner[key]; ok {
			continue
		}
		delete(im.listed, key)
		switch k, rest := key[:1], key[1:]; k {
		case "r":
			goneR = append(goneR, rest)
		case "t":
			goneT = append(goneT, rest)
		default:
			goneP = append(goneP, rest)
		}
	}
	s.sdk.RemoveResources(goneR...)
	s.sdk.RemoveResourceTemplates(goneT...)
	s.sdk.RemovePrompts(goneP...)
	im.resources, im.templates, im.prompts = map[string]string{}, map[string]importedTemplate{}, map[string]importedPrompt{}
	for uri, r := range o.resources {
		server := o.owner["r"+uri]
		im.resources[uri] = server
		if im.changed("r"+uri, r) {
			s.sdk.AddResource(r, s.readImported(server))
		}
	}
	for ut, t := range o.templates {
		server := o.owner["t"+ut]
		tmpl, _ := uritemplate.New(ut) // collect kept only the valid ones
		im.templates[ut] = importedTemplate{server: server, match: tmpl.Regexp()}
		if im.changed("t"+ut, t) {
			s.sdk.AddResourceTemplate(t, s.readImported(server))
		}
	}
	for name, p := range o.prompts {
		ip := importedPrompt{server: o.owner["p"+name], name: o.remote[name]}
		im.prompts[name] = ip
		if im.changed("p"+name, p) {
			s.sdk.AddPrompt(p, s.getImported(ip))
		}
	}
	return ok
}

// changed reports whether v is not what key was listed with, and notes it.
func (im *imports) changed(key string, v any) bool {
	b, _ := json.Marshal(v)
	if im.listed == nil {
		im.listed = map[string]string{}
	}
	if im.listed[key] == string(b) {
		return false
	}
	im.listed[key] = string(b)
	return true
}

// collect lists what the ready servers offer, in the order of their
// names: a URI or template a server before it took, or one in Toolbelt's
// own schemes, is left out (and logged). A server that cannot be listed is
// logged and left out, and ok is false.
func (s *Server) collect(ctx context.Context) (o offer, ok bool) {
	o = offer{resources: map[string]*sdk.Resource{}, templates: map[string]*sdk.ResourceTemplate{}, prompts: map[string]*sdk.Prompt{}, owner: map[string]string{}, remote: map[string]string{}}
	ok = true
	ready := s.opts.Imported.Ready()
	for _, name := range ready {
		err := s.collectOne(ctx, name, &o)
		if ctx.Err() != nil {
			return o, false // stopping: not a failure of the server's
		}
		s.imported.failing.note(s.opts.Logger, listing, name, err)
		ok = ok && err == nil
	}
	s.imported.failing.keepReady(listing, ready)
	return o, ok
}

// What followImports tries again with backoff when it fails.
const (
	listing  = "re-serving an imported server's resources and prompts"
	renewing = "renewing the subscriptions to an imported server's resources"
)

// failures holds, by what was tried (listing, renewing) of which server,
// what failed when last tried.
type failures map[[2]string]bool

// note logs how doing went for server (err): the failure that starts a
// run of them is a warning with its error, the next ones of the run
// (tried again every renewMaxWait at most, maybe for ever) are debug
// lines, and the success that ends the run is noted once.
func (f *failures) note(log *slog.Logger, doing, server string, err error) {
	key := [2]string{doing, server}
	switch {
	case err != nil && !(*f)[key]:
		if *f == nil {
			*f = failures{}
		}
		(*f)[key] = true
		log.Warn(doing+" failed; trying again with backoff", "server", server, "err", err)
	case err != nil:
		log.Debug(doing+" failed again", "server", server, "err", err)
	case (*f)[key]:
		delete(*f, key)
		log.Info(doing+" works again", "server", server)
	}
}

// keepReady forgets the runs of failures of doing of the servers not in
// ready (stopped, or removed from the configuration): when one is ready
// again, a new failure is a new run, and warned about.
func (f failures) keepReady(doing string, ready []string) {
	for key := range f {
		if key[0] == doing && !slices.Contains(ready, key[1]) {
			delete(f, key)
		}
	}
}

// collectOne adds what the named server offers to o.
func (s *Server) collectOne(ctx context.Context, name string, o *offer) error {
	sess, cctx, leave, err := s.opts.Imported.Session(ctx, name)
	if err != nil {
		return err
	}
	defer leave()
	caps := sess.InitializeResult().Capabilities
	meta := func(m sdk.Meta) sdk.Meta {
		out := maps.Clone(m)
		if out == nil {
			out = sdk.Meta{}
		}
		out[MetaServer] = name
		return out
	}
	take := func(key, uri string) bool {
		m := schemeOf.FindStringSubmatch(uri)
		if _, taken := o.owner[key]; taken || m == nil || slices.Contains(ownSchemes, strings.ToLower(m[1])) {
			s.opts.Logger.Warn("an imported resource is not re-served: its URI is taken or not absolute", "server", name, "uri", uri)
			return false
		}
		o.owner[key] = name
		return true
	}
	if caps.Resources != nil {
		for r, err := range sess.Resources(cctx, nil) {
			if err != nil {
				return err
			}
			if take("r"+r.URI, r.URI) {
				c := *r
				c.Meta = meta(r.Meta)
				o.resources[r.URI] = &c
			}
		}
		for t, err := range sess.ResourceTemplates(cctx, nil) {
			if err != nil {
				return err
			}
			if _, err := uritemplate.New(t.URITemplate); err == nil && take("t"+t.URITemplate, t.URITemplate) {
				c := *t
				c.Meta = meta(t.Meta)
				o.templates[t.URITemplate] = &c
			}
		}
	}
	if caps.Prompts == nil {
		return nil
	}
	var prompts []*sdk.Prompt
	for p, err := range sess.Prompts(cctx, nil) {
		if err != nil {
			return err
		}
		prompts = append(prompts, p)
	}
	names := make([]string, len(prompts))
	for i, p := range prompts {
		names[i] = p.Name
	}
	offered := s.opts.Imported.PromptNames(name, names)
	for _, p := range prompts {
		if slices.ContainsFunc(s.prompts, func(own Prompt) bool { return own.Name == offered[p.Name] }) {
			s.opts.Logger.Warn("an imported prompt is not re-served: a prompt of the prompts folder has its name", "server", name, "prompt", offered[p.Name])
			continue
		}
		c := *p
		c.Name, c.Meta = offered[p.Name], meta(p.Meta)
		c.Title = cmp.Or(p.Title, p.Name)
		o.prompts[c.Name], o.owner["p"+c.Name], o.remote[c.Name] = &c, name, p.Name
	}
	return nil
}

// readImported answers resources/read of a server's resource: the policy
// must let the caller read it with the resources tool; its contents are
// marked as from outside.
func (s *Server) readImported(server string) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		caller := callerOf(s.opts.Owner, req.Session, req.Extra)
		if err := s.mayCall(ctx, caller, resourcesTool, map[string]any{"action": "read", "server": server, "uri": uri}); err != nil {
			return nil, err
		}
		sess, cctx, leave, err := s.opts.Imported.Session(ctx, server)
		if err != nil {
			return nil, upstreamError(server, err)
		}
		defer leave()
		res, err := sess.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, upstreamError(server, err)
		}
		for _, c := range res.Contents {
			c.Meta = external(server, c.Meta)
		}
		return &sdk.ReadResourceResult{Contents: res.Contents, Meta: external(server, res.Meta)}, nil
	}
}

// getImported answers prompts/get of a server's prompt: the policy must
// let the caller get it with the resources tool; its messages are marked
// as from outside.
func (s *Server) getImported(p importedPrompt) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		caller := callerOf(s.opts.Owner, req.Session, req.Extra)
		args := map[string]any{"action": "prompt", "server": p.server, "name": p.name}
		if len(req.Params.Arguments) > 0 {
			args["arguments"] = req.Params.Arguments
		}
		if err := s.mayCall(ctx, caller, resourcesTool, args); err != nil {
			return nil, err
		}
		sess, cctx, leave, err := s.opts.Imported.Session(ctx, p.server)
		if err != nil {
			return nil, upstreamError(p.server, err)
		}
		defer leave()
		res, err := sess.GetPrompt(cctx, &sdk.GetPromptParams{Name: p.name, Arguments: req.Params.Arguments})
		if err != nil {
			return nil, upstreamError(p.server, err)
		}
		return &sdk.GetPromptResult{Description: res.Description, Messages: res.Messages, Meta: external(p.server, res.Meta)}, nil
	}
}

// external is m with the marks of what came from the server.
func external(server string, m sdk.Meta) sdk.Meta {
	out := maps.Clone(m)
	if out == nil {
		out = sdk.Meta{}
	}
	out[MetaServer], out[MetaExternal] = server, true
	return out
}

// upstreamError is what a client is told when an imported server failed
// a request: its protocol error as it gave it, else what went wrong.
func upstreamError(server string, err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcp server %s: %v", server, err)}
}

// importedOf returns the imported server whose resource or template uri
// is, if any.
func (s *Server) importedOf(uri string) (string, bool) {
	s.imported.mu.Lock()
	defer s.imported.mu.Unlock()
	return s.importedOfLocked(uri)
}

// importedOfLocked is importedOf with s.imported.mu held.
func (s *Server) importedOfLocked(uri string) (string, bool) {
	im := &s.imported
	if server, ok := im.resources[uri]; ok {
		return server, true
	}
	for _, ut := range slices.Sorted(maps.Keys(im.templates)) {
		if t := im.templates[ut]; t.match.MatchString(uri) {
			return t.server, true
		}
	}
	return "", false
}

// completeImported forwards completion/complete of an imported prompt's
// or template's argument to its server; ok is false when the reference is
// not to one.
func (s *Server) completeImported(ctx context.Context, req *sdk.CompleteRequest) (res *sdk.CompleteResult, ok bool, err error) {
	ref := *req.Params.Ref
	im := &s.imported
	im.mu.Lock()
	var server, action string
	switch ref.Type {
	case "ref/prompt":
		if p, found := im.prompts[ref.Name]; found {
			server, action, ref.Name = p.server, "prompts", p.name
		}
	case "ref/resource":
		if t, found := im.templates[ref.URI]; found {
			server, action = t.server, "templates"
		}
	}
	im.mu.Unlock()
	if server == "" {
		return nil, false, nil
	}
	if err := s.mayCall(ctx, callerOf(s.opts.Owner, req.Session, req.Extra), resourcesTool, map[string]any{"action": action, "server": server}); err != nil {
		return nil, true, err
	}
	sess, cctx, leave, err := s.opts.Imported.Session(ctx, server)
	if err != nil {
		return nil, true, upstreamError(server, err)
	}
	defer leave()
	params := *req.Params
	params.Ref = &ref
	res, err = sess.Complete(cctx, &params)
	if err != nil {
		return nil, true, upstreamError(server, err)
	}
	return res, true, nil
}

// subscribe forwards resources/subscribe of an imported server's resource
// to it, the first time a client subscribes to the URI; the server's
// notifications/resources/updated then reach every client subscribed
// (relayUpdated). The server's own resources are subscribeOwn's.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	server, ok := s.importedOf(uri)
	if !ok {
		return s.subscribeOwn(ctx, req)
	}
	caller := callerOf(s.opts.Owner, req.Session, req.Extra)
	if err := s.mayCall(ctx, caller, resourcesTool, map[string]any{"action": "read", "server": server, "uri": uri}); err != nil {
		return err
	}
	im := &s.imported
	im.mu.Lock()
	first, again := len(im.subs[uri]) == 0, im.subs[uri][req.Session]
	if im.subs == nil {
		im.subs = map[string]map[*sdk.ServerSession]bool{}
	}
	if im.subs[uri] == nil {
		im.subs[uri] = map[*sdk.ServerSession]bool{}
	}
	im.subs[uri][req.Session] = true
	im.mu.Unlock()
	if !again {
		go s.releaseAtEnd(req.Session, uri)
	}
	if !first {
		return nil
	}
	// Not under the lock: the server's notifications, which take it, may
	// come before its answer.
	err := s.upstream(ctx, server, func(ctx context.Context, sess *sdk.ClientSession) error {
		if err := sess.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			return err
		}
		im.mu.Lock()
		if len(im.subs[uri]) > 0 {
			im.subscribedOn(uri, sess)
		}
		im.mu.Unlock()
		return nil
	})
	if err != nil {
		im.mu.Lock()
		delete(im.subs[uri], req.Session)
		im.mu.Unlock()
	}
	return err
}

// subscribedOn notes that uri's subscription was made in sess; the caller
// holds im.mu.
func (im *imports) subscribedOn(uri string, sess *sdk.ClientSession) {
	if im.on == nil {
		im.on = map[string]*sdk.ClientSession{}
	}
	im.on[uri] = sess
}

// renew subscribes again to the URIs Toolbelt's clients are subscribed
// to whose ready server has a session other than the one the subscription
// was made in: the server restarted, or its HTTP session was established
// again, and it would not send their updates otherwise. A subscription
// that fails is logged; renew reports whether every subscription of a
// ready server is current, so that followImports tries again if not.
func (s *Server) renew(ctx context.Context) (ok bool) {
	ok = true
	im := &s.imported
	im.mu.Lock()
	byServer := map[string][]string{}
	for uri, subs := range im.subs {
		if server, found := s.importedOfLocked(uri); found && len(subs) > 0 {
			byServer[server] = append(byServer[server], uri)
		}
	}
	im.mu.Unlock()
	ready := s.opts.Imported.Ready()
	defer im.failing.keepReady(renewing, ready)
	for _, server := range ready {
		uris := byServer[server]
		if len(uris) == 0 {
			// Nothing to renew: a run of failures ends unremarked.
			delete(im.failing, [2]string{renewing, server})
			continue
		}
		err := s.upstream(ctx, server, func(ctx context.Context, sess *sdk.ClientSession) error {
			for _, uri := range slices.Sorted(slices.Values(uris)) {
				im.mu.Lock()
				current := im.on[uri] == sess
				im.mu.Unlock()
				if current {
					continue
				}
				if err := sess.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
					return fmt.Errorf("subscribing again to %s: %w", uri, err)
				}
				im.mu.Lock()
				if len(im.subs[uri]) > 0 {
					im.subscribedOn(uri, sess)
				}
				im.mu.Unlock()
				s.opts.Logger.Debug("subscribed again to an imported resource", "server", server, "uri", uri)
			}
			return nil
		})
		if ctx.Err() != nil {
			return false // stopping: not a failure of the server's
		}
		im.failing.note(s.opts.Logger, renewing, server, err)
		ok = ok && err == nil
	}
	return ok
}

// unsubscribe forwards resources/unsubscribe to the imported server when
// the last client subscribed to the URI unsubscribes.
func (s *Server) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	if s.unsubscribeOwn(req) {
		return nil
	}
	uri := req.Params.URI
	im := &s.imported
	im.mu.Lock()
	subs := im.subs[uri]
	last := subs[req.Session] && len(subs) == 1
	delete(subs, req.Session)
	if len(subs) == 0 {
		delete(im.subs, uri)
		delete(im.on, uri)
	}
	server, ok := s.importedOfLocked(uri)
	im.mu.Unlock()
	if !last || !ok {
		return nil
	}
	// Not cut short with the request: the SDK unsubscribes a
	// subscriptions/listen stream once the stream's request has ended.
	return s.upstream(context.WithoutCancel(ctx), server, func(ctx context.Context, sess *sdk.ClientSession) error {
		return sess.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri})
	})
}

// releaseAtEnd unsubscribes ss from uri once the session has ended (a
// client gone without resources/unsubscribe), so the imported server is
// unsubscribed when no client is left.
func (s *Server) releaseAtEnd(ss *sdk.ServerSession, uri string) {
	_ = ss.Wait()
	if err := s.unsubscribe(context.Background(), &sdk.UnsubscribeRequest{Session: ss, Params: &sdk.UnsubscribeParams{URI: uri}}); err != nil {
		s.opts.Logger.Debug("unsubscribing from an imported resource", "uri", uri, "err", err)
	}
}

// upstream makes one request of the named server's session.
func (s *Server) upstream(ctx context.Context, server string, do func(context.Context, *sdk.ClientSession) error) error {
	sess, cctx, leave, err := s.opts.Imported.Session(ctx, server)
	if err != nil {
		return upstreamError(server, err)
	}
	defer leave()
	if err := do(cctx, sess); err != nil {
		return upstreamError(server, err)
	}
	return nil
}

// relayUpdated tells the clients subscribed to uri that the imported
// server changed it.
func (s *Server) relayUpdated(server, uri string) {
	if owner, ok := s.importedOf(uri); !ok || owner != server {
		return
	}
	if err := s.sdk.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		s.opts.Logger.Debug("relaying a resource update", "server", server, "uri", uri, "err", err)
	}
}
