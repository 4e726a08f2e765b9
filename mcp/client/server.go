package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/internal/importname"
	"github.com/toolbelt/toolbelt/internal/parallel"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// server supervises one MCP server: it connects, imports the tools, watches
// the connection and restarts it with backoff.
type server struct {
	m      *Manager
	name   string
	cfg    config.MCPServer
	client *mcp.Client
	// clientLog is the SDK client's logger, which also logs the tools a
	// list leaves out.
	clientLog *slog.Logger
	reg       *registry.Registry // set by run, read only on its goroutine
	oauth     *oauthHandler      // an OAuth server's, made by its first connect

	mu       sync.Mutex
	state    State
	since    time.Time
	retry    time.Time
	lastErr  error
	restarts int
	session  *mcp.ClientSession
	moved    chan struct{}          // closed and replaced at every change of state
	tools    map[string]*definition // by local name, to notice changes
	skipped  []string
	// syncMu orders a sync and the schema check that follows it: the check
	// removes a tool only while the registry still holds the version it
	// checked.
	syncMu sync.Mutex
	// uncompilable says, by local name and definition (NAME\x00DEF), why
	// a tool was removed because its schema does not compile, so a later
	// sync does not import the same definition again.
	uncompilable map[string]string
	stopErr      error // why the process had to be signalled when the manager closed

	listChanged chan struct{}      // a notifications/tools/list_changed to act on
	broken      chan brokenSession // a call found the connection broken

	watchMu  sync.RWMutex
	watchers map[string]tool.UpdateFunc // by progress token
	tokens   atomic.Uint64

	calls       calls       // the calls of its tools running now, whose front doors get its requests
	completions completions // their url-mode requests for input, which the server may say are complete
}

type brokenSession struct {
	session *mcp.ClientSession
	err     error
}

func newServer(m *Manager, name string, cfg config.MCPServer) *server {
	s := &server{
		m: m, name: name, cfg: cfg,
		state: StateStarting, since: time.Now(), moved: make(chan struct{}),
		tools:       map[string]*definition{},
		listChanged: make(chan struct{}, 1),
		broken:      make(chan brokenSession, 1),
		watchers:    map[string]tool.UpdateFunc{},
	}
	if cfg.Disabled {
		s.state = StateDisabled
	}
	s.clientLog = m.opts.Logger.With("mcp_server", name)
	opts := &mcp.ClientOptions{
		Logger: s.clientLog,
		// No roots: Toolbelt offers none to the servers it imports.
		// Elicitation and sampling: see handleRequests.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			if s.current(req.Session) {
				select {
				case s.listChanged <- struct{}{}:
				default: // one is pending already
				}
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			token, _ := req.Params.ProgressToken.(string)
			s.watchMu.RLock()
			defer s.watchMu.RUnlock()
			if update := s.watchers[token]; update != nil {
				update(progress(req.Params))
			}
		},
	}
	s.followNotifications(opts)
	s.handleRequests(opts)
	if t := s.transport(); (t == config.TransportHTTP || t == config.TransportSSE) && m.opts.KeepAlive > 0 {
		opts.KeepAlive, opts.KeepAliveFailureThreshold = m.opts.KeepAlive, 3
	}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "toolbelt", Version: m.opts.Version}, opts)
	return s
}

// transport names how the server is reached.
func (s *server) transport() string {
	switch {
	case s.m.opts.Transport != nil:
		return "custom"
	}
	return s.cfg.Transport()
}

// current reports whether sess is the server's live session.
func (s *server) current(sess *mcp.ClientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sess != nil && sess == s.session
}

// status returns a snapshot of the server's state.
func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{
		Name: s.name, Transport: s.transport(), State: s.state, Tools: len(s.tools),
		Restarts: s.restarts, Since: s.since, Skipped: slices.Clone(s.skipped),
	}
	if s.lastErr != nil {
		st.LastError = s.lastErr.Error()
	}
	if s.state == StateDown {
		st.Retry = s.retry
	}
	return st
}

// setState moves the server to a state and tells whoever waits; a server
// that is down is retried after wait.
func (s *server) setState(state State, sess *mcp.ClientSession, err error, wait time.Duration) {
	s.mu.Lock()
	s.state, s.session, s.since = state, sess, time.Now()
	s.retry = s.since.Add(wait)
	if err != nil {
		s.lastErr = err
	}
	close(s.moved)
	s.moved = make(chan struct{})
	s.mu.Unlock()
	st := s.status()
	log := s.m.opts.Logger
	switch state {
	case StateReady:
		log.Info("mcp server ready", "server", s.name, "tools", st.Tools, "skipped", len(st.Skipped))
	case StateDown:
		log.Warn("mcp server down", "server", s.name, "error", st.LastError, "retry", st.Retry.Sub(st.Since).Round(time.Millisecond))
	}
	if s.m.opts.OnState != nil {
		s.m.opts.OnState(st)
	}
	if reg := s.reg; reg != nil && (state == StateReady || state == StateDown) && len(st.Skipped)+st.Tools > 0 {
		reg.Touch()
	}
	if state == StateReady || state == StateDown {
		s.m.changed()
	}
}

// run supervises the server until ctx ends; first is closed once its first
// start succeeded or failed.
func (s *server) run(ctx context.Context, reg *registry.Registry, first chan struct{}) {
	s.reg = reg
	defer s.clear(reg)
	started := sync.OnceFunc(func() { close(first) })
	defer started()
	opts := s.m.opts
	backoff := opts.MinBackoff
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			s.mu.Lock()
			s.restarts++
			s.mu.Unlock()
			s.setState(StateStarting, nil, nil, 0)
		}
		c, err := s.connect(ctx)
		if err == nil {
			up := time.Now()
			s.mu.Lock()
			s.session = c.session // its notifications count from now on
			s.mu.Unlock()
			if err = s.sync(ctx, reg, c); err == nil {
				s.setState(StateReady, c.session, nil, 0)
				started()
				err = s.serve(ctx, reg, c)
			}
			if time.Since(up) >= opts.StableAfter {
				backoff = opts.MinBackoff
			}
			err = c.close(err, ctx.Err() == nil)
			if ctx.Err() != nil && c.proc != nil {
				s.mu.Lock()
				s.stopErr = c.proc.stop()
				s.mu.Unlock()
			}
		}
		if ctx.Err() != nil {
			s.setState(StateStopped, nil, nil, 0)
			return
		}
		s.setState(StateDown, nil, err, backoff)
		started()
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			s.setState(StateStopped, nil, nil, 0)
			return
		case <-timer.C:
		}
		backoff = min(backoff*2, opts.MaxBackoff)
	}
}

// serve watches a ready connection: it re-imports the tools when the server
// says they changed, and returns why the connection ended.
func (s *server) serve(ctx context.Context, reg *registry.Registry, c *conn) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return c.ended()
		case b := <-s.broken:
			if b.session == c.session {
				return b.err
			}
		case <-s.listChanged:
			if err := s.sync(ctx, reg, c); err != nil {
				return err
			}
			s.m.opts.Logger.Info("mcp server tools re-imported", "server", s.name, "tools", s.status().Tools)
		}
	}
}

// conn is one connection to the server.
type conn struct {
	session *mcp.ClientSession
	lister  *listingConn    // for a stdio server: gives its tool lists to Toolbelt to decode
	proc    *process        // for a stdio server
	pool    *http.Transport // for an HTTP server
	done    chan struct{}   // closed when the session ends or the process exits
	waited  chan struct{}   // closed when session.Wait returns
	waitErr error
}

// connect starts the server (or reaches it) and initializes a session.
func (s *server) connect(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	c := &conn{done: make(chan struct{}), waited: make(chan struct{})}
	var t mcp.Transport
	var lt *listingTransport
	var err error
	switch s.transport() {
	case "custom":
		t, err = s.m.opts.Transport(ctx, s.name)
	case "stdio":
		c.proc, err = startProcess(s.name, s.cfg, s.m.opts.Logger, s.m.opts.StopGrace)
		if err == nil {
			lt = &listingTransport{Transport: c.proc.transport()}
			t = lt
		}
	case config.TransportHTTP:
		var client *http.Client
		client, c.pool, err = httpClient(s.cfg)
		st := &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client}
		if s.cfg.OAuth != nil && err == nil {
			if s.oauth == nil {
				s.oauth, err = newOAuth(s.name, s.cfg.OAuth, OAuthOptions{Resource: s.cfg.URL, Tokens: s.m.opts.Tokens, Show: s.m.opts.SignIn, Logger: s.clientLog})
			}
			st.OAuthHandler = s.oauth
		}
		t = st
	case config.TransportSSE:
		var client *http.Client
		client, c.pool, err = httpClient(s.cfg)
		t = &sseTransport{mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: client}}
	}
	if err != nil {
		return nil, err
	}
	c.session, err = s.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, c.close(fmt.Errorf("connecting: %w", err), true)
	}
	if lt != nil {
		c.lister = lt.conn
	}
	go func() {
		c.waitErr = c.session.Wait()
		close(c.waited)
	}()
	go func() {
		var exited chan struct{}
		if c.proc != nil {
			exited = c.proc.exited
		}
		select {
		case <-c.waited:
		case <-exited:
		}
		close(c.done)
	}()
	return c, nil
}

// ended says why a connection ended by itself.
func (c *conn) ended() error {
	select {
	case <-c.waited:
		if c.waitErr != nil {
			return fmt.Errorf("the connection ended: %w", c.waitErr)
		}
	default:
	}
	return errors.New("the connection ended")
}

// close ends the connection, the process and the connection pool, and
// returns why the connection ended: err, or how the process exited when it
// did so by itself. failed says the connection ended or broke rather than
// being closed.
func (c *conn) close(err error, failed bool) error {
	if c.proc != nil && failed {
		// A server that closed its output is usually exiting: give it the
		// time to, so that its exit status and last words (exitError reads
		// its standard error to the end) explain what happened.
		select {
		case <-c.proc.exited:
		case <-time.After(c.proc.grace):
		}
		if exit := c.proc.exitError(); exit != nil {
			err = exit
		}
	}
	if c.session != nil {
		_ = c.session.Close()
		<-c.done
	}
	if c.proc != nil {
		_ = c.proc.stop()
	}
	if c.pool != nil {
		c.pool.CloseIdleConnections()
	}
	return err
}

// sync lists the server's tools (every page) and makes the registry hold
// exactly them: new tools are registered, removed ones unregistered,
// changed ones replaced.
func (s *server) sync(ctx context.Context, reg *registry.Registry, c *conn) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	run := ctx
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	listed, err := listToolsAs(ctx, c.session, c.lister, s.clientLog, true)
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	var remote []*mcp.Tool
	seen := map[string]bool{}
	for _, t := range listed {
		if !seen[t.Name] {
			seen[t.Name] = true
			remote = append(remote, t)
		}
	}
	names := make([]string, len(remote))
	for i, t := range remote {
		names[i] = t.Name
	}
	local := importname.Local(s.name, s.m.opts.Separator, names)

	want := map[string]*definition{}
	for _, t := range remote {
		want[local[t.Name]] = &definition{tool: t}
	}

	s.mu.Lock()
	have := s.tools
	var uncompilable map[string]string
	if len(s.uncompilable) > 0 {
		uncompilable = maps.Clone(s.uncompilable)
	}
	s.mu.Unlock()
	// Only a tool imported before, and one a schema check refused before,
	// is compared by its definition's JSON: the first sync encodes none.
	var compare []*definition
	for name, def := range have {
		if w := want[name]; w != nil {
			compare = append(compare, w, def)
		}
	}
	if uncompilable != nil {
		for _, w := range want {
			compare = append(compare, w)
		}
	}
	parallel.For(len(compare), func(i int) { compare[i].encoded() })
	// The registry's watchers (an MCP server listing the tools) hear of
	// the whole import once, not of each tool.
	defer reg.Batch()()
	next := map[string]*definition{}
	for name, def := range have {
		if w := want[name]; w != nil && w.encoded() == def.encoded() {
			next[name] = def
			continue
		}
		reg.Unregister(name)
	}
	var skipped []string
	var fresh []added
	var todo []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if _, ok := next[name]; ok {
			continue
		}
		if uncompilable != nil {
			if why, bad := uncompilable[name+"\x00"+want[name].encoded()]; bad {
				skipped = append(skipped, why)
				continue
			}
		}
		todo = append(todo, name)
	}
	// Converting the schemas is most of an import's work, and each is
	// independent of the others.
	params := make([]*jsonschema.Schema, len(todo))
	lazy := make([]*tool.LazyParameters, len(todo))
	errs := make([]error, len(todo))
	parallel.For(len(todo), func(i int) {
		params[i], lazy[i], errs[i] = parameters(want[todo[i]].tool.InputSchema)
	})
	for i, name := range todo {
		def := want[name]
		t := def.tool
		made, err := s.register(reg, name, t, params[i], lazy[i], errs[i])
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		next[name] = def
		fresh = append(fresh, added{local: name, remote: t.Name, def: def, tool: made})
	}
	if len(fresh) > 0 {
		s.m.wg.Go(func() { s.checkSchemas(run, reg, fresh) })
	}
	slices.Sort(skipped)
	s.mu.Lock()
	s.tools, s.skipped = next, skipped
	s.mu.Unlock()
	for _, sk := range skipped {
		s.m.opts.Logger.Warn("mcp tool not imported", "server", s.name, "tool", sk)
	}
	return nil
}

// register adds one tool, with its parameters or lazy parameters, as a
// factory that makes it while the server is ready or starting (a call
// waits for the start) and otherwise says why it is not available, in an
// error that tells the model whether to retry. It returns the tool, or
// err (the schema's conversion failed) or why the tool is not valid.
func (s *server) register(reg *registry.Registry, name string, t *mcp.Tool, params *jsonschema.Schema, lazy *tool.LazyParameters, err error) (*tool.Tool, error) {
	if err != nil {
		return nil, err
	}
	m := meta(s.name, name, t)
	m.Summary = s.cfg.Summaries[t.Name]
	output, err := outputSchema(t.OutputSchema)
	if err != nil {
		return nil, err
	}
	made := &tool.Tool{
		Name: name, Label: m.Label, Description: m.Description, Parameters: params, LazyParameters: lazy, Meta: m,
		Output: output, Execute: s.execute(t.Name),
	}
	if err := made.Check(); err != nil {
		return nil, err
	}
	return made, reg.RegisterFactory(func(*tool.Context) (*tool.Tool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.state == StateReady || s.state == StateStarting { // a call waits for the start
			return made, nil
		}
		return nil, s.unavailableLocked()
	}, m)
}

// added is a tool a sync registered, for the schema check after it.
type added struct {
	local, remote string
	def           *definition
	tool          *tool.Tool
}

// definition is an imported tool as the server defined it. Its JSON tells
// a changed definition from the same one at a later sync; it is encoded
// after the first answer (by the schema check) or when a sync first
// compares it, not while a start waits: encoding a thousand definitions
// was a twentieth of a 1,000-tool start.
type definition struct {
	tool *mcp.Tool
	once sync.Once
	json string
}

// encoded returns the definition's JSON.
func (d *definition) encoded() string {
	d.once.Do(func() {
		b, _ := json.Marshal(d.tool) // it was decoded from JSON
		d.json = string(b)
	})
	return d.json
}

// checkSchemas compiles the schemas of tools a sync registered and removes
// the tools whose schema does not compile: no call of theirs could be
// validated. It runs Options.SchemaCheckDelay after the sync (or after
// Options.SchemaCheckAfter, when that is later), so a
// server's tools are listed without waiting for a validator compile each
// (the pipeline compiles one on a tool's first call); until it removes
// such a tool, a call of it fails at validation with the compile error.
func (s *server) checkSchemas(ctx context.Context, reg *registry.Registry, tools []added) {
	if after := s.m.opts.SchemaCheckAfter; after != nil {
		select {
		case <-ctx.Done():
			return
		case <-after:
		}
	}
	if d := s.m.opts.SchemaCheckDelay; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
	var bad []string
	for _, t := range tools {
		if ctx.Err() != nil {
			return
		}
		t.def.encoded() // for the next sync's comparison
		err := compiles(t.tool)
		if err == nil {
			continue
		}
		s.syncMu.Lock()
		s.mu.Lock()
		current := s.tools[t.local] == t.def
		if current {
			why := fmt.Sprintf("%s: input schema does not compile: %v", t.remote, err)
			delete(s.tools, t.local)
			s.skipped = append(s.skipped, why)
			slices.Sort(s.skipped)
			if s.uncompilable == nil {
				s.uncompilable = map[string]string{}
			}
			s.uncompilable[t.local+"\x00"+t.def.encoded()] = why
		}
		s.mu.Unlock()
		if current {
			reg.Unregister(t.local)
			bad = append(bad, t.remote)
		}
		s.syncMu.Unlock()
	}
	for _, name := range bad {
		s.m.opts.Logger.Warn("mcp tool not imported", "server", s.name, "tool", name, "err", "input schema does not compile")
	}
}

// compiles reports why the parameter schema of t does not compile, or nil.
// Lazy parameters are compiled from the generic form they hold (the tool
// list's), not converted for the check: the conversion waits for the tool's
// first call, and a thousand imported tools are not converted at all
// until then. The conversion and the encoding of its result were 22% of
// the check's CPU in a start importing 1,000 tools (see bench/HISTORY.md,
// third pass, part 2).
func compiles(t *tool.Tool) error {
	if doc, lazy := t.ParamsDoc(); lazy {
		_, err := schema.CompileDoc(doc)
		return err
	}
	_, err := schema.Compile(t.Params())
	return err
}

// clear removes the server's tools from the registry.
func (s *server) clear(reg *registry.Registry) {
	s.mu.Lock()
	tools := s.tools
	s.tools = map[string]*definition{}
	s.mu.Unlock()
	for name := range tools {
		reg.Unregister(name)
	}
}

// unavailableLocked says why the server's tools cannot be called now, or nil
// when they can; the caller holds s.mu.
func (s *server) unavailableLocked() error {
	switch s.state {
	case StateReady:
		return nil
	case StateDown:
		wait := max(time.Until(s.retry), 0)
		if wait >= time.Second {
			wait = wait.Round(time.Second)
		} else {
			wait = wait.Round(10 * time.Millisecond)
		}
		return &callError{msg: fmt.Sprintf("mcp server %s is down: %v; restarting in %s", s.name, s.lastErr, wait), retry: true,
			suggestion: "Try again in a few seconds, or do without this tool."}
	case StateStarting:
		msg := fmt.Sprintf("mcp server %s is starting", s.name)
		if s.lastErr != nil {
			msg = fmt.Sprintf("mcp server %s is restarting after: %v", s.name, s.lastErr)
		}
		return &callError{msg: msg, retry: true, suggestion: "Try again in a few seconds."}
	}
	return &callError{msg: fmt.Sprintf("mcp server %s is %s", s.name, s.state)}
}

// await returns the live session, waiting while the server is starting.
func (s *server) await(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		s.mu.Lock()
		state, sess, moved, err := s.state, s.session, s.moved, s.unavailableLocked()
		s.mu.Unlock()
		switch state {
		case StateReady:
			return sess, nil
		case StateStarting:
			select {
			case <-moved:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return nil, err
	}
}

// execute forwards calls of a tool to the server.
func (s *server) execute(remote string) tool.ExecuteFunc {
	return func(ctx context.Context, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
		cctx, leave, ok := s.m.enter(ctx)
		if !ok {
			return tool.Result{}, &callError{msg: fmt.Sprintf("mcp server %s is not running", s.name)}
		}
		defer leave()
		defer s.calls.enter(ctx, tc)()
		sess, err := s.await(cctx)
		if err != nil {
			return tool.Result{}, err
		}
		args := call.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		params := &mcp.CallToolParams{Name: remote, Arguments: args}
		token := s.watch(update)
		defer s.unwatch(token)
		params.SetProgressToken(token)
		res, err := sess.CallTool(cctx, params)
		if err == nil {
			return result(res), nil
		}
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if cctx.Err() != nil {
			return tool.Result{}, &callError{msg: fmt.Sprintf("mcp server %s was stopped during the call of %s; whether the call took effect is unknown", s.name, remote)}
		}
		if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) {
			// The server's message is its words, from outside: wrapped.
			why := content.WrapExternal(rpc.Message, content.Wrap{Source: "mcp server " + s.name})
			return tool.Result{}, &callError{msg: fmt.Sprintf("mcp server %s rejected the call of %s (JSON-RPC error %d):\n%s", s.name, remote, rpc.Code, why),
				suggestion: "Check the arguments against the tool's description and parameters."}
		}
		select {
		case s.broken <- brokenSession{sess, err}:
		default:
		}
		return tool.Result{}, &callError{msg: fmt.Sprintf("mcp server %s stopped answering during the call of %s (%v); whether the call took effect is unknown", s.name, remote, err),
			retry: true, suggestion: "The server is being restarted: check whether the call took effect before repeating it."}
	}
}

// watch routes the progress notifications of one call to its update
// function and returns the call's progress token.
func (s *server) watch(update tool.UpdateFunc) string {
	token := "toolbelt-" + strconv.FormatUint(s.tokens.Add(1), 10)
	s.watchMu.Lock()
	s.watchers[token] = update
	s.watchMu.Unlock()
	return token
}

// unwatch stops routing a call's progress; once it returns, no more
// updates reach the call.
func (s *server) unwatch(token string) {
	s.watchMu.Lock()
	delete(s.watchers, token)
	s.watchMu.Unlock()
}

// callError is a call that did not reach the tool or got no answer: its
// message is for the model.
type callError struct {
	msg        string
	retry      bool
	suggestion string
}

func (e *callError) Error() string { return e.msg }

// ErrorInfo tells the model whether the call may succeed later and what to
// do; it makes callError a [tool.InfoError].
func (e *callError) ErrorInfo() tool.ErrorInfo {
	return tool.ErrorInfo{Message: e.msg, CanRetry: e.retry, Suggestion: e.suggestion}
}
