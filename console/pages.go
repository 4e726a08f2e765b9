package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/policy"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// Page is one page of the console (see the package documentation, "Adding
// a page").
type Page struct {
	// Pattern is the page's http.ServeMux pattern, without the method: it
	// answers GET.
	Pattern string
	// Nav is the page's link text in the navigation; "" keeps it out.
	Nav string
	// Template is its file under templates/, which defines "title" and
	// "content".
	Template string
	// Load returns what the template gets as .Data.
	Load func(r *http.Request, u User) (any, error)
}

// Action is a form's target: a POST that changes something.
type Action struct {
	// Pattern is the action's http.ServeMux pattern, without the method.
	Pattern string
	// Owner says only owners may do it; a viewer gets 403.
	Owner bool
	// Do does it and answers, once the CSRF token and the role are
	// checked.
	Do func(w http.ResponseWriter, r *http.Request, u User)
}

// ErrNotFound is what a page's Load returns for an item that does not
// exist: the page answers 404.
var ErrNotFound = errors.New("not found")

// pages are the console's pages, in the navigation's order.
func (c *Console) pages() []Page {
	return []Page{
		{Pattern: "/{$}", Nav: "Home", Template: "home.html", Load: c.loadHome},
		{Pattern: "/calls", Nav: "Calls", Template: "calls.html", Load: c.loadCalls},
		{Pattern: "/calls/{id}", Template: "call.html", Load: c.loadCall},
		{Pattern: "/approvals", Nav: "Approvals", Template: "approvals.html", Load: c.loadApprovals},
		{Pattern: "/approvals/{id}", Template: "approvals.html", Load: c.loadApproval},
		{Pattern: "/audit", Nav: "Audit", Template: "audit.html", Load: c.loadAudit},
		{Pattern: "/numbers", Nav: "Numbers", Template: "numbers.html", Load: c.loadNumbers},
		{Pattern: "/sessions", Nav: "Sessions", Template: "sessions.html", Load: c.loadSessions},
		{Pattern: "/sessions/{key...}", Template: "session.html", Load: c.loadSession},
		{Pattern: "/jobs", Nav: "Jobs", Template: "jobs.html", Load: c.loadJobs},
		{Pattern: "/schedules", Nav: "Schedules", Template: "schedules.html", Load: c.loadSchedules},
		{Pattern: "/schedules/{id}", Template: "schedule.html", Load: c.loadSchedule},
		{Pattern: "/nodes", Nav: "Nodes", Template: "nodes.html", Load: c.loadNodes},
		{Pattern: "/tools", Nav: "Tools", Template: "tools.html", Load: c.loadTools},
		{Pattern: "/tools/{name}", Template: "tool.html", Load: c.loadTool},
		{Pattern: "/config", Nav: "Configuration", Template: "config.html", Load: c.loadConfig},
		{Pattern: "/mode", Nav: "Mode", Template: "mode.html", Load: c.loadMode},
	}
}

// actions are the console's actions.
func (c *Console) actions() []Action {
	return []Action{
		{Pattern: "/approvals/{id}", Owner: true, Do: c.decide},
		{Pattern: "/calls/{id}/undo", Owner: true, Do: c.undo},
		{Pattern: "/jobs/{id}/cancel", Owner: true, Do: c.cancelJob},
		{Pattern: "/jobs/{id}/retry", Owner: true, Do: c.retryJob},
		{Pattern: "/mode", Owner: true, Do: c.switchMode},
		{Pattern: "/nodes/pairings/{code}/approve", Owner: true, Do: c.approveNode},
		{Pattern: "/nodes/pairings/{code}/reject", Owner: true, Do: c.rejectNode},
		{Pattern: "/nodes/{id}/remove", Owner: true, Do: c.removeNode},
	}
}

// View is what a page's template gets.
type View struct {
	// Data is what the page's Load returned.
	Data any
	// User is who looks at the page; CSRF their session's token, which
	// forms carry ({{template "csrf" .}}).
	User User
	CSRF string
	// Nav are the navigation's links; Path the page's own path.
	Nav  []NavLink
	Path string
	// Flash is a message from the action that led here (?flash=).
	Flash string
	// Version names the program.
	Version string
	// Mode is the permission mode calls run in now, which the header
	// shows; "" when the console has none to show.
	Mode policy.Mode
}

// NavLink is a link of the navigation.
type NavLink struct {
	Text, Href string
	// Current marks the page shown.
	Current bool
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"ago":       ago,
	"duration":  audit.Rounded,
	"time":      func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"caller":    caller,
	"lines":     func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") },
	"diffClass": diffClass,
	"json": func(v any) (string, error) {
		b, err := json.MarshalIndent(v, "", "  ")
		return string(b), err
	},
}

// routes parses the templates and builds the mux.
func (c *Console) routes() error {
	c.mux = http.NewServeMux()
	c.tmpl = map[string]*template.Template{}
	assets, _ := fs.Sub(assetFiles, "assets")
	c.mux.Handle("GET /assets/", http.StripPrefix("/assets/", cacheable(http.FileServerFS(assets))))
	c.mux.HandleFunc("GET /login", c.loginPage)
	c.mux.HandleFunc("POST /login", c.login)
	c.mux.HandleFunc("POST /logout", c.logout)
	for _, p := range c.pages() {
		if p.Nav != "" {
			c.nav = append(c.nav, NavLink{Text: p.Nav, Href: strings.TrimSuffix(p.Pattern, "{$}")})
		}
		if err := c.parse(p.Template); err != nil {
			return err
		}
		c.mux.Handle("GET "+p.Pattern, c.page(p))
	}
	for _, a := range c.actions() {
		c.mux.Handle("POST "+a.Pattern, c.action(a))
	}
	c.mux.Handle("GET /calls/events", c.loggedIn(c.callEvents))
	if c.opts.Canvas != nil {
		canvas := http.StripPrefix("/canvas", c.opts.Canvas)
		c.mux.Handle("/canvas/", c.loggedIn(func(w http.ResponseWriter, r *http.Request, _ visitor) { canvas.ServeHTTP(w, r) }))
	}
	if err := c.parse("error.html"); err != nil {
		return err
	}
	return c.parse("login.html")
}

// parse parses a page's template with the layout and the partials.
func (c *Console) parse(name string) error {
	t, err := template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/partials.html", "templates/"+name)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	c.tmpl[name] = t
	return nil
}

// cacheable lets browsers keep the assets for an hour.
func cacheable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// loggedIn calls h for a logged-in visitor; others go to the login page
// (a browser) or get 401.
func (c *Console) loggedIn(h func(w http.ResponseWriter, r *http.Request, v visitor)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := c.auth.who(w, r)
		if !ok {
			c.toLogin(w, r)
			return
		}
		h(w, r, v)
	})
}

// toLogin sends a visitor who is not logged in to the login page.
func (c *Console) toLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolbelt"`)
		http.Error(w, "unauthorized: log in to the console (/login), or send Authorization: Bearer <token>", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// page serves a page.
func (c *Console) page(p Page) http.Handler {
	return c.loggedIn(func(w http.ResponseWriter, r *http.Request, v visitor) {
		data, err := p.Load(r, v.user)
		switch {
		case errors.Is(err, ErrNotFound):
			c.render(w, r, v, http.StatusNotFound, "error.html", err)
		case err != nil:
			c.log.Error("console page", "path", r.URL.Path, "err", err)
			c.render(w, r, v, http.StatusInternalServerError, "error.html", err)
		default:
			c.render(w, r, v, http.StatusOK, p.Template, data)
		}
	})
}

// action serves an action: the CSRF token and the role are checked first.
func (c *Console) action(a Action) http.Handler {
	return c.loggedIn(func(w http.ResponseWriter, r *http.Request, v visitor) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		switch {
		case !v.checkCSRF(r):
			http.Error(w, "forbidden: this request carries no valid CSRF token. Reload the page and submit the form again.", http.StatusForbidden)
		case a.Owner && !v.user.Owner:
			http.Error(w, fmt.Sprintf("forbidden: %s is a viewer; only an owner may do this (console.owners lists them)", v.user.Name), http.StatusForbidden)
		default:
			a.Do(w, r, v.user)
		}
	})
}

// render executes a page's template into the layout.
func (c *Console) render(w http.ResponseWriter, r *http.Request, v visitor, status int, name string, data any) {
	view := View{Data: data, User: v.user, Path: r.URL.Path, Flash: r.URL.Query().Get("flash"), Version: c.opts.Version}
	if v.session != nil {
		view.CSRF = v.session.csrf
	}
	if v.user.Name != "" {
		view.Mode = c.mode()
	}
	for _, l := range c.nav {
		l.Current = l.Href == r.URL.Path || l.Href != "/" && strings.HasPrefix(r.URL.Path, l.Href+"/")
		view.Nav = append(view.Nav, l)
	}
	var b bytes.Buffer
	if err := c.tmpl[name].ExecuteTemplate(&b, "layout", view); err != nil {
		c.log.Error("console template", "template", name, "err", err)
		http.Error(w, "the page could not be shown: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// redirect answers an action by going back to a page, with a message.
func redirect(w http.ResponseWriter, r *http.Request, to, flash string) {
	if flash != "" {
		sep := "?"
		if strings.Contains(to, "?") {
			sep = "&"
		}
		to += sep + "flash=" + url.QueryEscape(flash)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// loginPage shows the login form, or logs in with a one-time link.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if once := r.URL.Query().Get("once"); once != "" {
		if !c.auth.useLink(once) {
			c.showLogin(w, r, http.StatusForbidden, "This login link was used already or has expired. Log in with the token, or restart toolbelt serve for a new link.")
			return
		}
		id, _ := c.auth.newSession(User{Name: "owner", Owner: true})
		setCookie(w, r, id)
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.showLogin(w, r, http.StatusOK, "")
}

// login logs in with a token from the form.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	u, ok := c.auth.byToken(r.PostFormValue("token"))
	if !ok {
		c.showLogin(w, r, http.StatusUnauthorized, "That token is not one of the console's tokens (mcp.token, mcp.tokens).")
		return
	}
	id, _ := c.auth.newSession(u)
	setCookie(w, r, id)
	next := r.PostFormValue("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(cookieName); err == nil {
		if s, ok := c.auth.session(ck.Value); ok && !(visitor{s.user, s}).checkCSRF(r) {
			http.Error(w, "forbidden: this request carries no valid CSRF token. Reload the page and submit the form again.", http.StatusForbidden)
			return
		}
		c.auth.endSession(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// loginView is the login page's data.
type loginView struct {
	Problem, Next string
	Open          bool // no token: only loopback requests are let in
}

func (c *Console) showLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	data := loginView{Problem: problem, Next: r.URL.Query().Get("next"), Open: c.auth.open}
	c.render(w, r, visitor{}, status, "login.html", data)
}

// diffClass is the CSS class of a diff's line.
func diffClass(line string) string {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "diff "):
		return "file"
	case strings.HasPrefix(line, "+"):
		return "add"
	case strings.HasPrefix(line, "-"):
		return "del"
	case strings.HasPrefix(line, "@@"):
		return "hunk"
	}
	return ""
}

// ago says how long ago t was, for people.
func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
