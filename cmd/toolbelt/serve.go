package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/console"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// serveFlags are the flags of the MCP servers.
type serveFlags struct {
	workspaceFlags
	modeFlags
	Profile string `help:"Offer only the tools of this profile (minimal, coding, messaging, full)."`
	Compact bool   `help:"Offer tool_search, tool_describe and tool_call instead of every tool (also: mcp.compact, or mcp.compactAbove tools)."`
}

// shutdownGrace is how long in-flight calls have to finish when the server
// is asked to stop; then they are cancelled.
const shutdownGrace = 10 * time.Second

// mcpServer makes the MCP server the config describes, for the workspace,
// in the run's pipeline root: it opens the store once the server has given
// its first answers, works the async tools' jobs, runs due schedules when
// schedules is set (but with cron.disabled) and keeps the directory tools in step with their
// folders. MCP clients are on channel mcp, and the owner only when the
// configuration says so; each call then runs for its client's session
// (and, over HTTP, its token's principal). A canvasBase other than "" is
// the URL the root's canvas is served at, set before the server resolves
// its tools (the canvas tool is offered only where a canvas is served).
func (e *env) mcpServer(f serveFlags, schedules bool, canvasBase string) (*mcp.Server, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	if f.Profile != "" && !catalog.IsProfile(f.Profile) {
		return nil, fmt.Errorf("unknown profile %q", f.Profile)
	}
	cfg.MCP.Compact = cfg.MCP.Compact || f.Compact
	ws, err := f.dir(e)
	if err != nil {
		return nil, err
	}
	// stderr: stdout is the stdio transport's.
	where, err := e.describeStore()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "toolbelt: workspace %s\ntoolbelt: state in %s\n", ws, where)
	started := make(chan struct{})
	e.serving = serving{workJobs: true, schedules: schedules, tools: true, early: true, storeAfter: started}
	tb, err := e.root(pipelineRoot, ws)
	if err != nil {
		return nil, err
	}
	if e.gateway != nil {
		tb.SetGateway(e.gateway)
	}
	if cv := tb.Canvas(); cv != nil && canvasBase != "" {
		cv.SetBase(canvasBase) // the console serves it, behind its login
	}
	var opts []invoke.Option
	if f.Profile != "" {
		opts = append(opts, invoke.WithSelection(registry.Profile(f.Profile)))
	}
	srv, err := tb.MCPServer(opts...)
	if err != nil {
		return nil, err
	}
	go e.afterFirstAnswer(srv, started)
	return srv, nil
}

// afterFirstAnswer does, once the server has given its first answers (or
// a second after its tools can be listed: awaitFirstAnswer), what a start
// can leave for later: opening the store (closing started; unless a call
// needed it sooner), the server's pace of garbage collection
// (gcHeadroom), giving the memory of the start's garbage back to the
// system, the search for what interrupted writes left in the workspace,
// which took up to a second in a large one, and the recovery of the
// changes killed processes left unfinished there (intents.Recovery; a
// call that comes first waits for it). None of them competes with the
// first answers for the CPU.
func (e *env) afterFirstAnswer(srv *mcp.Server, started chan struct{}) {
	awaitFirstAnswer(srv.FirstAnswer(), srv.ToolsReady(), startGCFor)
	close(started)
	if e.startDone != nil {
		e.startDone()
		debug.FreeOSMemory()
	}
	e.removeStaleTemp(srv.Runner().Context(), false)
	e.tb.SettleInterrupted()
}

// awaitFirstAnswer returns once first is closed, or wait after ready is:
// the second without an answer counts from when tools can be listed, not
// from the start. Until the imported servers have listed their tools a
// client's tools/list waits for them; on a busy machine importing 1,000
// tools, a second from the start had let the work that waits for the
// first answer (the schema check of the imported tools, the store's open,
// the normal pace of collection) run inside the start, and the check was
// a quarter of Toolbelt's CPU there (bench/HISTORY.md, third pass, part 3).
// An imported server whose start hangs does not hold that work back for
// longer than firstAnswerCap waits.
func awaitFirstAnswer(first, ready <-chan struct{}, wait time.Duration) {
	limit := time.NewTimer(firstAnswerCap * wait)
	defer limit.Stop()
	select {
	case <-first:
		return
	case <-limit.C:
		return
	case <-ready:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-first:
	case <-t.C:
	}
}

// firstAnswerCap bounds awaitFirstAnswer's wait for the tools, in waits.
const firstAnswerCap = 10

// staleTempScan bounds the search for temporary files of interrupted
// writes; it goes on beside the server, and an agent run waits for it
// staleTempWait at most.
const (
	staleTempScan = 5 * time.Second
	staleTempWait = time.Second
)

// removeStaleTemp removes, as a server or an agent (run, chat) starts, the
// temporary files that atomic writes interrupted earlier (a killed process)
// left in the workspace. A server does not wait for it: the search never
// takes a write that begins beside it for a leftover.
func (e *env) removeStaleTemp(tc *tool.Context, wait bool) {
	l, ok := tc.FS.(*fsbridge.Local)
	if !ok {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), staleTempScan)
		defer cancel()
		removed, err := l.RemoveStaleTemp(ctx)
		if len(removed) > 0 {
			e.log.Info("removed temporary files of interrupted writes", "files", removed)
		}
		if err != nil {
			e.log.Warn("stopped looking for temporary files of interrupted writes", "after", staleTempScan, "err", err)
		}
	}()
	if !wait {
		return
	}
	select {
	case <-done:
	case <-time.After(staleTempWait):
	}
}

type mcpCmd struct {
	Stdio   mcpStdioCmd   `cmd:"" default:"withargs" help:"Serve the tools over stdio (the default); logs go to stderr."`
	Servers mcpServersCmd `cmd:"" help:"Start the MCP servers toolbelt.yaml imports and show their state."`
	Add     mcpAddCmd     `cmd:"" help:"Import another MCP server: add it to toolbelt.yaml (-- COMMAND ARGS… or --url URL) and check that it starts."`
	Login   mcpLoginCmd   `cmd:"" help:"Sign in to an imported server that uses OAuth (in a browser; the tokens are kept encrypted in the store)."`
	Logout  mcpLogoutCmd  `cmd:"" help:"Forget the tokens of an imported server that uses OAuth."`
}

type mcpServersCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *mcpServersCmd) Run(e *env) error {
	if _, err := e.registry(); err != nil { // starts the imports
		return err
	}
	status := e.tb.ImportStatus()
	cfg, err := e.config()
	if err != nil {
		return err
	}
	for i, s := range status {
		if status[i].Auth, err = client.AuthState(context.Background(), s.Name, cfg.MCPServers[s.Name], e.tb.Tokens()); err != nil {
			return err
		}
	}
	if c.JSON {
		if status == nil {
			status = []client.ServerStatus{}
		}
		return writeJSON(e.stdout, status)
	}
	if len(status) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No MCP servers are configured (mcpServers in toolbelt.yaml).")
		return err
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tTOOLS\tRESTARTS\tAUTH\tNOTE")
	for _, s := range status {
		note := s.LastError
		switch n := len(s.Skipped); {
		case n == 1:
			note = strings.TrimSpace(note + " 1 tool skipped")
		case n > 1:
			note = strings.TrimSpace(note + fmt.Sprintf(" %d tools skipped", n))
		}
		tableRow(tw, s.Name, s.Transport, string(s.State), strconv.Itoa(s.Tools), strconv.Itoa(s.Restarts), s.Auth, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(table.String()) { // no padding after the last cell
		if _, err := io.WriteString(e.stdout, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

type mcpStdioCmd struct {
	serveFlags
}

func (c *mcpStdioCmd) Run(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	srv, err := e.mcpServer(c.serveFlags, false, "")
	if err != nil {
		return err
	}
	defer srv.Close()
	if isTerminal(e.stdin) {
		_ = e.tb.AwaitImports(context.Background()) // to count their tools
		e.explainStdio(srv)
	}
	ctx, stop := e.interruptible()
	defer stop()
	return srv.ServeStdio(ctx, mcp.StdioOptions{MaxLineBytes: cfg.MCP.MaxMessageBytes, Grace: shutdownGrace})
}

// explainStdio tells a person who started toolbelt mcp at a terminal what
// it is waiting for, on stderr (stdout is the protocol's).
func (e *env) explainStdio(srv *mcp.Server) {
	argv, note := stdioCommand()
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellWord(a)
	}
	exe := strings.Join(words, " ")
	ws := shellWord(srv.Runner().Context().Workspace)
	fmt.Fprintf(e.stderr, `toolbelt mcp speaks MCP (JSON-RPC) on stdin and stdout, for an MCP client that starts it;
it is not meant to be typed at. It serves %d tools for the workspace %s.
  Try it:            npx @modelcontextprotocol/inspector %s mcp --workspace %s
  Claude Code:       claude mcp add toolbelt -- %s mcp --workspace %s
  Over HTTP instead: toolbelt serve
Waiting for a client on stdin; Ctrl-C stops.
`, len(srv.Listed()), ws, exe, ws, exe, ws)
	if note != "" {
		fmt.Fprintf(e.stderr, "Note: %s\n", note)
	}
}

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%,", r))
	}) < 0
	if plain {
		return s
	}
	return shellQuote(s)
}

type serveCmd struct {
	serveFlags
	Addr string `help:"Address to listen on (default: the config's mcp.addr, else 127.0.0.1:7420)."`
}

func (c *serveCmd) Run(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	addr := cmp.Or(c.Addr, cfg.MCP.Addr, mcp.DefaultAddr)
	m := cfg.MCP
	o := mcp.HTTPOptions{
		Token: cmp.Or(os.Getenv("TOOLBELT_MCP_TOKEN"), m.Token), AllowedHosts: m.AllowedHosts, AllowedOrigins: m.AllowedOrigins,
		MaxBodyBytes: int64(m.MaxMessageBytes), MaxSessions: m.MaxSessions, SessionIdleTimeout: m.SessionIdleTimeout.D(),
		BodyTimeout: m.BodyTimeout.D(), ReadHeaderTimeout: m.ReadHeaderTimeout.D(), MaxConnections: m.MaxConnections,
	}
	for _, t := range m.Tokens {
		secret, err := t.Secret(os.Getenv)
		if err != nil {
			return err
		}
		o.Tokens = append(o.Tokens, mcp.Token{Token: secret, Principal: t.Principal, Owner: t.Owner})
	}
	if a := m.OAuth; a.Issuer != "" {
		o.OAuth = &mcp.OAuth{Issuer: a.Issuer, JWKSURL: a.JWKSURL, Resource: a.Resource, Scopes: a.Scopes,
			Principals: a.Principals, PrincipalClaim: a.PrincipalClaim, OwnerScope: a.OwnerScope}
	}
	// Off loopback a static token is still needed: the console logs in
	// with one.
	if err := mcp.CheckListen(addr, cmp.Or(o.Token, firstToken(o.Tokens))); err != nil {
		return err
	}
	// It listens first: the async tools' webhook URLs are made from its
	// address, unless jobs.publicURL says otherwise.
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is already in use (another toolbelt serve?): listen elsewhere with --addr %s, or set mcp.addr in toolbelt.yaml", addr, nextPort(addr))
	}
	if err != nil {
		return err
	}
	defer ln.Close()
	o.Addr = ln.Addr().String()
	cfg.Jobs.PublicURL = cmp.Or(cfg.Jobs.PublicURL, "http://"+reachable(o.Addr))
	base := "http://" + reachable(o.Addr)
	e.gateway = &serveGateway{e: e, cfg: cfg, started: time.Now(), base: base, addr: o.Addr, restart: make(chan struct{}, 1)}
	srv, err := e.mcpServer(c.serveFlags, true, base+"/canvas/")
	if err != nil {
		return err
	}
	defer srv.Close()
	mux := http.NewServeMux()
	withToken := o.Token != "" || len(o.Tokens) > 0
	mux.Handle("/mcp", srv.Handler(o))
	if o.OAuth != nil {
		mux.Handle("GET "+o.OAuth.MetadataPath(), o.Guard(o.OAuth.MetadataHandler()))
	}
	if q := e.tb.Jobs(); q != nil {
		// Async tools' webhooks, verified by the queue (Standard Webhooks).
		for _, p := range q.WebhookPaths() {
			if p == "/mcp" || p == "/" {
				return fmt.Errorf("an async tool's webhookPath %s is the server's own path: choose another, such as /webhooks/NAME", p)
			}
			mux.Handle("POST "+p, q.WebhookHandler())
		}
	}
	stopNodes, err := e.serveNodes(mux, reachable(o.Addr))
	if err != nil {
		return err
	}
	defer stopNodes(context.Background())
	stopChannels, err := e.serveChannels(cfg, mux)
	if err != nil {
		return err
	}
	defer stopChannels(context.Background())
	con, err := e.tb.Console(console.Options{
		Token: o.Token, Tokens: consoleTokens(o.Tokens), Owners: cfg.Console.Owners, AuditHead: cfg.Console.AuditHead,
		URL: base, Endpoint: base + "/mcp", Version: buildVersion(),
	})
	if err != nil {
		return err
	}
	if err := con.Start(context.Background()); err != nil {
		return err
	}
	defer con.Stop(context.Background())
	mux.Handle("/", o.Guard(withTextFront(con.Handler(), func(host string) string {
		return frontPage(host, withToken, len(srv.Listed()))
	})))
	hs := o.HTTPServer(mux)
	_ = e.tb.AwaitImports(context.Background()) // to count their tools
	// Before the banner, which says Ctrl-C stops the server.
	ctx, stop := e.interruptible()
	defer stop()
	e.printServing(ln.Addr().String(), withToken, srv, con)

	served := make(chan error, 1)
	go func() { served <- hs.Serve(mcp.LimitListener(ln, o.MaxConnections)) }()
	var restarting bool
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	case <-e.gateway.restart:
		restarting = true
	}
	fmt.Fprintln(e.stderr, "toolbelt: stopping; calls in flight have", shutdownGrace, "to finish")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if restarting {
		return restartServer{addr: o.Addr}
	}
	return nil
}

// restartServer is how serve's Run ends when the gateway tool restarts the
// server: the command then runs again, listening at addr.
type restartServer struct{ addr string }

func (r restartServer) Error() string { return "the server restarts, listening at " + r.addr }

func firstToken(tokens []mcp.Token) string {
	if len(tokens) == 0 {
		return ""
	}
	return tokens[0].Token
}

// consoleTokens are the console's principals: those of mcp.tokens.
func consoleTokens(tokens []mcp.Token) []console.Token {
	var out []console.Token
	for _, t := range tokens {
		out = append(out, console.Token{Token: t.Token, Principal: t.Principal})
	}
	return out
}

// withTextFront answers GET / with the plain-text front page for a client
// that does not ask for HTML (curl, a script), and passes the rest to the
// console.
func withTextFront(con http.Handler, page func(host string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" && !strings.Contains(r.Header.Get("Accept"), "text/html") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, page(r.Host))
			return
		}
		con.ServeHTTP(w, r)
	})
}

// printConsole says where the console is, in the banner's list, and how to
// log in: from this machine without logging in, or, when logging in takes
// a token, with a one-time link printed after the list (login).
func (e *env) printConsole(base string, withToken bool, con *console.Console) (login string) {
	if !withToken {
		fmt.Fprintf(e.stdout, "  console    %s/ to watch calls, approve and undo (from this machine, no login)\n", base)
		return ""
	}
	fmt.Fprintf(e.stdout, "  console    %s/ to watch calls, approve and undo\n", base)
	return fmt.Sprintf("\nLog in to the console once with this link (valid 15 minutes, one use):\n  %s\n", con.LoginLink())
}

// frontPage is what GET / answers: what is served where.
func frontPage(host string, withToken bool, tools int) string {
	auth := ""
	if withToken {
		auth = " (with the header Authorization: Bearer <token>)"
	}
	return fmt.Sprintf(`Toolbelt %s: an MCP server offering %d tools.

  MCP (streamable HTTP)  http://%s/mcp%s
  console                http://%s/ (in a browser)

Connect an MCP client to the /mcp endpoint, for example:
  claude mcp add --transport http toolbelt http://%s/mcp
  npx @modelcontextprotocol/inspector   (then choose Streamable HTTP and the URL above)
`, buildVersion(), tools, host, auth, host, host)
}

// nextPort returns addr with the port after its own, to suggest.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n <= 0 || n >= 65535 {
		return net.JoinHostPort(host, "7421")
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// reachable returns the address clients should use for a server listening
// on addr: the same, or for a wildcard address (0.0.0.0, ::) this machine's
// first non-loopback address, which other machines can reach.
func reachable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return addr
	}
	ifaces, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range ifaces {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() && n.IP.To4() != nil {
				return net.JoinHostPort(n.IP.String(), port)
			}
		}
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// printServing says where the server listens, how to connect a client,
// and where the console is.
func (e *env) printServing(addr string, withToken bool, srv *mcp.Server, con *console.Console) {
	reach := reachable(addr)
	endpoint := "http://" + reach + "/mcp"
	tc := srv.Runner().Context()
	tools := srv.Listed()
	col := colorsFor(e.stdout)
	fmt.Fprintf(e.stdout, "%s %s\n", col.bold("Toolbelt MCP server listening on"), endpoint)
	if reach != addr {
		_, port, _ := net.SplitHostPort(addr)
		fmt.Fprintf(e.stdout, "  (on every interface, %s; on this machine also http://127.0.0.1:%s/mcp)\n", addr, port)
	}
	data, dir, _ := e.storeDSN(os.Getenv)
	state := redacted(data)
	if dir != "" && realpath.Within(dir, tc.Workspace) {
		state += " (inside the workspace, hidden from the tools)"
	}
	fmt.Fprintf(e.stdout, "  workspace  %s\n  state      %s\n  tools      %d offered\n", tc.Workspace, state, len(tools))
	e.printMode(col)
	login := e.printConsole("http://"+reach, withToken, con)
	remote := map[string]any{"type": "http", "url": endpoint}
	if withToken {
		remote["headers"] = map[string]string{"Authorization": "Bearer ${TOOLBELT_MCP_TOKEN}"}
	}
	argv, note := stdioCommand()
	stdio := struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{argv[0], append(argv[1:], "mcp", "--workspace", tc.Workspace)}
	snippet := func(v any) string {
		b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"toolbelt": v}}, "  ", "  ")
		return "  " + string(b)
	}
	fmt.Fprintf(e.stdout, "\nConnect Claude Code (.mcp.json) or another client over HTTP:\n%s\n", snippet(remote))
	fmt.Fprintf(e.stdout, "\nOr start it over stdio (Claude Desktop's claude_desktop_config.json):\n%s\n", snippet(stdio))
	if note != "" {
		fmt.Fprintf(e.stdout, "  (%s)\n", note)
	}
	fmt.Fprint(e.stdout, login)
	fmt.Fprintf(e.stdout, "\nCtrl-C stops the server.\n")
}

// isGoRunBinary reports whether the program was built by `go run` into a
// temporary directory, whose path would be useless in a client's config.
func isGoRunBinary(path string) bool {
	return strings.Contains(path, string(os.PathSeparator)+"go-build")
}

// redacted hides the password of a database URL.
func redacted(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return dsn
}
