// Package console is Toolbelt's web console: server-rendered pages where
// people watch calls live, approve or deny the calls that wait for them,
// undo a call's file changes and verify the audit chain. `toolbelt serve`
// mounts its Handler at / beside MCP's /mcp, behind the same Host and Origin
// checks (mcp.HTTPOptions.Guard). The root builds it (toolbelt.Console) from
// what it opened; the package imports the store, the audit log and the
// other services, never the root.
//
// # Adding a page
//
// A page is a Page value in the list Console.pages returns (pages.go), a
// template under templates/ and a loader:
//
//  1. Write templates/NAME.html. It defines "title" (the page's title) and
//     "content" (what goes in the layout's <main>); the layout
//     (templates/layout.html) supplies the head, the navigation and the
//     CSS. The template gets a View: .Data is what the loader returned,
//     .User the person (.User.Owner says they may act), .CSRF the token
//     every form that POSTs carries, as {{template "csrf" .}} writes it.
//     Partials used by several pages live in templates/partials.html.
//  2. Write the loader, func(r *http.Request, u User) (any, error), in a
//     file of its own (NAME.go): it reads what the page shows from
//     c.opts (Store, Audit, Registry, Policy, Config, Jobs, Scheduler, …).
//     Return ErrNotFound for a missing item (404); other errors are shown
//     on the page with status 500.
//  3. Add Page{Pattern: "/NAME", Nav: "Name", Template: "NAME.html", Load:
//     c.loadNAME} to Console.pages. Nav "" keeps a page (a detail page, say
//     "/calls/{id}") out of the navigation. Patterns are http.ServeMux
//     patterns without the method; pages answer GET.
//  4. A form that changes something POSTs to an Action (Console.actions):
//     Action{Pattern: "/NAME/{id}/do", Owner: true, Do: c.doNAME}. The
//     framework has refused it already when the CSRF token is missing or
//     wrong, or when Owner is set and the user is a viewer (403 both);
//     Do answers, usually with a redirect (c.redirect). Show an action's
//     button only {{if .User.Owner}}.
//
// Every page and action requires a logged-in user (auth.go); assets under
// assets/ are served at /assets/ and need no login. Live rows come by
// server-sent events (events.go, assets/console.js). No page loads
// anything from another origin.
//
// # Login and roles
//
// With no token configured, a request from a loopback address is the
// owner's, without logging in (serve refuses to listen elsewhere without a
// token). Otherwise a person logs in with a bearer token (the form at
// /login, or an Authorization header on each request) or with the
// one-time link LoginLink makes, which sets a session cookie. The serve
// token's holder and the principals Options.Owners lists are owners: they
// approve, deny, undo and switch the permission mode; other principals
// are viewers. Sessions are kept
// in memory: a restart logs everyone out.
package console

import (
	"cmp"
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

// Options are what the console shows and acts on; toolbelt.Console fills
// them from an open root, and the program serving it adds the tokens and
// its URL.
type Options struct {
	// Store keeps the state the pages read; Audit and Journal are its audit
	// log and undo journal.
	Store   *store.Store
	Audit   *auditlog.Log
	Journal *store.Journal
	// Registry, Policy, Config, Jobs and Scheduler are the root's, for the
	// pages that show them; Jobs and Scheduler may be nil.
	Registry  *registry.Registry
	Policy    *policy.Policy
	Config    *config.Config
	Jobs      *jobs.Queue
	Scheduler *automation.Scheduler
	// Nodes are the paired nodes and their pairing requests, which the
	// Nodes page shows and owners answer; nil: there are none to show.
	Nodes Nodes
	// Context is the context tools are resolved in: for their schemas on
	// the Tools pages and the settings check of the Configuration page
	// (the root's workspace).
	Context *tool.Context
	// Undo takes back the file changes of call callID in workspace ws on
	// behalf of by, and records the undo in the audit log as toolbelt undo
	// does.
	Undo func(ctx context.Context, ws, callID, by string) (undo.Report, error)
	// Mode returns the permission mode the calls of agent ("" for none)
	// run in now; SwitchMode makes every later call run in m, on behalf
	// of by (a console user), and records the switch in the audit log.
	// The Mode page shows and switches it; nil: there is none to show.
	Mode       func(agent string) policy.Mode
	SwitchMode func(ctx context.Context, m policy.Mode, by string) error
	// Feed is the live feed of this process's calls (the root's); nil:
	// the calls page learns of calls from the audit log alone.
	Feed *feed.Hub
	// Canvas, when set, serves the sessions' canvases (canvas.Host's
	// Handler); the console serves it at /canvas/ to those logged in, and
	// a session's page links to its canvas.
	Canvas http.Handler
	// Token is the serve token: whoever holds it is an owner. Tokens are
	// the other principals' tokens. With neither, loopback requests are
	// the owner's without a login, and others are refused.
	Token  string
	Tokens []Token
	// Owners are the principals (of Tokens) who are owners
	// (console.owners).
	Owners []string
	// AuditHead is a saved head of the audit chain (SEQ:HASH, from
	// toolbelt audit head) that verifying checks the log against; "" for
	// none.
	AuditHead string
	// URL is where the console is served (http://127.0.0.1:7420): the
	// heartbeat announces it, and LoginLink starts with it.
	URL string
	// Endpoint is the MCP endpoint's URL, which the home page shows.
	Endpoint string
	// Logger receives what the console logs (default: slog.Default()).
	Logger *slog.Logger
	// Version names the program in the pages' footer.
	Version string
}

// Token is a bearer token and the principal it stands for.
type Token struct {
	Token     string
	Principal string
}

// Console serves the console's pages. Its methods are safe for concurrent
// use.
type Console struct {
	opts Options
	log  *slog.Logger
	auth *auth
	tmpl map[string]*template.Template // by template file
	nav  []NavLink
	mux  *http.ServeMux
	live live // the calls pages' live rows
	// results are the results of this server's latest calls, kept while
	// it is started.
	results results

	// The heartbeat: see Start.
	cancel func()
	wg     sync.WaitGroup
	mu     sync.Mutex
	state  int // 0 new, 1 started, 2 stopped
}

// heartbeat is how often a started console tells the store it is served,
// so that calls waiting for approval know someone can give it.
const heartbeat = 5 * time.Second

// New returns a console for o; it starts nothing (see Start).
func New(o Options) (*Console, error) {
	if o.Store == nil || o.Audit == nil || o.Journal == nil {
		return nil, errors.New("console: Options.Store, Audit and Journal are required")
	}
	c := &Console{opts: o, log: cmp.Or(o.Logger, slog.Default()), auth: newAuth(o)}
	c.live.c = c
	if err := c.routes(); err != nil {
		return nil, err
	}
	return c, nil
}

// Handler returns the console's HTTP handler, to mount at /.
func (c *Console) Handler() http.Handler { return c.mux }

// LoginLink returns a link that logs its first user in as an owner, once,
// within the next linkLifetime: a program prints it where only the person
// who started it sees it.
func (c *Console) LoginLink() string { return c.opts.URL + "/login?once=" + c.auth.newLink() }

// Start starts the heartbeat: every few seconds the console tells the
// store (store.Pending.Beat) that it is served at Options.URL, so that a
// call waiting for approval in any process sharing the store waits for it.
// With a Feed, it also starts keeping the results of this server's calls
// (the latest, up to keptBytes), which the calls pages show. It follows
// package lifecycle's rules.
func (c *Console) Start(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != 0 {
		return errors.New("console: Start called twice, or after Stop")
	}
	c.state = 1
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Go(func() { c.beat(ctx) })
	if c.opts.Feed != nil {
		sub := c.opts.Feed.Subscribe(0)
		c.wg.Go(func() { c.keepResults(ctx, sub) })
	}
	return nil
}

// beat beats the heartbeat until ctx ends.
func (c *Console) beat(ctx context.Context) {
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		if err := c.opts.Store.Pending().Beat(ctx, c.opts.URL); err != nil && ctx.Err() == nil {
			c.log.Warn("console heartbeat: calls that need approval may not wait for the console", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop stops the heartbeat and waits for it to end (a beat being written
// has until ctx ends); the pages stay served (the HTTP server stops them).
func (c *Console) Stop(ctx context.Context) error {
	c.mu.Lock()
	c.state = 2
	cancel := c.cancel
	c.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	return lifecycle.Drain(ctx, &c.wg, func() {})
}
