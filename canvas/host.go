// Package canvas is the canvas host: for each session, a page that shows
// what the agent presents (an HTML page, a workspace file with live
// reload, a URL) and the A2UI surfaces it pushes, rendered by a small
// script from the protocol's standard catalog. Pages follow the canvas
// live (server-sent events); what people do on a surface (a button
// pressed) comes back as an Action to the host's listeners.
//
// Nothing a model sends runs as script: A2UI text and data are set as
// text and attributes, presented HTML is served under a CSP sandbox
// without scripts, and only Eval — which the canvas tool asks approval
// for — runs a model's JavaScript.
package canvas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/toolbelt/toolbelt/internal/randid"
)

// Host keeps the canvases of every session and serves them (Handler). It
// is safe for concurrent use.
type Host struct {
	mu        sync.Mutex
	base      string
	canvases  map[string]*canvasState
	listeners map[int]func(Action)
	nextID    int
}

// New returns a host whose canvas URLs start with base (such as
// "http://127.0.0.1:7420/canvas/"); SetBase changes it.
func New(base string) *Host {
	return &Host{base: base, canvases: map[string]*canvasState{}, listeners: map[int]func(Action){}}
}

// SetBase sets the URL the host is served at, once a front door knows
// it.
func (h *Host) SetBase(base string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.base = base
}

// Served reports whether a front door serves h (its URL is set).
func (h *Host) Served() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.base != ""
}

// URL returns the URL of session's canvas.
func (h *Host) URL(session string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.TrimSuffix(h.base, "/") + "/" + url.PathEscape(session) + "/"
}

// View is what a canvas shows besides its surfaces.
type View struct {
	// Kind is "" (nothing), "html", "file" or "url".
	Kind string `json:"kind"`
	// File is the presented file, relative to Dir; URL the page navigated
	// to.
	File string `json:"file,omitempty"`
	URL  string `json:"url,omitempty"`
	// Hidden: hide was called; present or navigate shows it again.
	Hidden bool `json:"hidden"`
	// Rev changes whenever the page should be loaded again (a new
	// presentation, the presented file changed).
	Rev int `json:"rev"`
}

// canvasState is one session's canvas.
type canvasState struct {
	view     View
	html     string // Kind html
	files    fs.FS  // Kind file: the presented file's directory
	watcher  *fsnotify.Watcher
	surfaces surfaces
	rev      int
	subs     map[chan event]struct{}
	evals    map[string]chan evalResult
}

// event is one server-sent event to a page.
type event struct {
	name string
	data []byte
}

// State is what a page draws: the view and the surfaces.
type State struct {
	Rev      int        `json:"rev"`
	View     View       `json:"view"`
	Surfaces []*Surface `json:"surfaces"`
}

// canvas returns session's canvas, made on first use; h.mu is held.
func (h *Host) canvas(session string) *canvasState {
	c, ok := h.canvases[session]
	if !ok {
		c = &canvasState{subs: map[chan event]struct{}{}, evals: map[string]chan evalResult{}}
		h.canvases[session] = c
	}
	return c
}

// changed sends c's state to its pages; h.mu is held.
func (c *canvasState) changed() {
	c.rev++
	b, _ := json.Marshal(c.state())
	c.send(event{"state", b})
}

func (c *canvasState) state() State {
	return State{Rev: c.rev, View: c.view, Surfaces: c.surfaces.list()}
}

// send hands e to every page, dropping it for a page too slow to take it
// (it gets the whole state again when it reconnects); h.mu is held.
func (c *canvasState) send(e event) {
	for ch := range c.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// State returns session's canvas as its pages draw it.
func (h *Host) State(session string) State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.canvas(session).state()
}

// Present shows html on session's canvas.
func (h *Host) Present(session, html string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	c.stopWatching()
	c.html, c.files = html, nil
	c.view = View{Kind: "html", Rev: c.view.Rev + 1}
	c.changed()
}

// PresentFile shows the file name of files (the presented file's
// directory, whose other files — styles, images — are served too) on
// session's canvas. With watch (the directory's path on disk) set, the
// canvas loads it again whenever a file there changes.
func (h *Host) PresentFile(session string, files fs.FS, name, watch string) error {
	var w *fsnotify.Watcher
	if watch != "" {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			return err
		}
		if err := w.Add(watch); err != nil {
			w.Close()
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	c.stopWatching()
	c.html, c.files, c.watcher = "", files, w
	c.view = View{Kind: "file", File: name, Rev: c.view.Rev + 1}
	c.changed()
	if w != nil {
		go h.watch(c, w)
	}
	return nil
}

// watch reloads c's presented file when its directory changes,
// until w is closed.
func (h *Host) watch(c *canvasState, w *fsnotify.Watcher) {
	for {
		select {
		case _, ok := <-w.Events:
			if !ok {
				return
			}
			h.mu.Lock()
			if c.watcher == w {
				c.view.Rev++
				c.changed()
			}
			h.mu.Unlock()
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
		}
	}
}

func (c *canvasState) stopWatching() {
	if c.watcher != nil {
		c.watcher.Close()
		c.watcher = nil
	}
}

// Navigate shows the page at u (http or https) on session's canvas.
func (h *Host) Navigate(session, u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("url %q: give an absolute http or https URL", u)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	c.stopWatching()
	c.html, c.files = "", nil
	c.view = View{Kind: "url", URL: p.String(), Rev: c.view.Rev + 1}
	c.changed()
	return nil
}

// Hide hides what session's canvas presents (its surfaces stay).
func (h *Host) Hide(session string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	c.view.Hidden = true
	c.changed()
}

// Push validates every line of jsonl (one A2UI message per line, v0.8
// or v0.9) and, when all are valid and apply, applies them to session's
// surfaces at once. Otherwise it returns a *PushError naming each line
// and field at fault and the surfaces stay as they were. It returns the
// surfaces' ids after the push.
func (h *Host) Push(session, jsonl string) ([]string, error) {
	msgs, err := parse(jsonl)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	next := c.surfaces.clone()
	if err := next.apply(msgs); err != nil {
		return nil, err
	}
	c.surfaces = next
	c.view.Hidden = false
	c.changed()
	return next.order, nil
}

// Reset deletes every surface of session's canvas.
func (h *Host) Reset(session string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	c.surfaces = surfaces{}
	c.changed()
}

// evalResult is what a page answered to an eval.
type evalResult struct {
	Value string `json:"value"`
	Error string `json:"error"`
}

// ErrNoPage is Eval's error when no page shows the canvas.
var ErrNoPage = errors.New("no page shows this canvas: open its URL in a browser first")

// Eval runs js in the pages that show session's canvas and returns what
// the first to answer returned (as text) or threw, or ErrNoPage.
func (h *Host) Eval(ctx context.Context, session, js string) (string, error) {
	id := randid.New("", 12)
	ch := make(chan evalResult, 1)
	h.mu.Lock()
	c := h.canvas(session)
	if len(c.subs) == 0 {
		h.mu.Unlock()
		return "", ErrNoPage
	}
	c.evals[id] = ch
	b, _ := json.Marshal(map[string]string{"id": id, "js": js})
	c.send(event{"eval", b})
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(c.evals, id)
		h.mu.Unlock()
	}()
	select {
	case r := <-ch:
		if r.Error != "" {
			return "", fmt.Errorf("the script threw: %s", r.Error)
		}
		return r.Value, nil
	case <-ctx.Done():
		return "", fmt.Errorf("no page answered: %w", ctx.Err())
	}
}

// answer delivers a page's answer to eval id.
func (h *Host) answer(session, id string, r evalResult) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.canvases[session]
	if !ok {
		return false
	}
	ch, ok := c.evals[id]
	if ok {
		select {
		case ch <- r:
		default:
		}
	}
	return ok
}

// subscribe registers a page of session: it receives the state now and
// every change after. Call the returned function when the page goes.
func (h *Host) subscribe(session string) (<-chan event, func()) {
	ch := make(chan event, 16)
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.canvas(session)
	b, _ := json.Marshal(c.state())
	ch <- event{"state", b}
	c.subs[ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(c.subs, ch)
	}
}

// Action is what a person did on a surface: pressed a button whose
// action is the event Name, with the Context the button's action
// gathered from the surface's data model.
type Action struct {
	Session   string         `json:"session"`
	URL       string         `json:"url"`
	SurfaceID string         `json:"surfaceId"`
	Component string         `json:"sourceComponentId"`
	Name      string         `json:"name"`
	Context   map[string]any `json:"context,omitempty"`
	Time      time.Time      `json:"timestamp"`
}

// Message words a for the agent of its session.
func (a Action) Message() string {
	s := fmt.Sprintf("[Canvas: the user triggered %q on surface %q (component %q) of %s.]", a.Name, a.SurfaceID, a.Component, a.URL)
	if len(a.Context) > 0 {
		s += "\nContext: " + compactJSON(a.Context)
	}
	return s
}

// Listen calls fn with every action people take on any canvas of h,
// until the returned function is called.
func (h *Host) Listen(fn func(Action)) (stop func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.nextID
	h.nextID++
	h.listeners[id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.listeners, id)
	}
}

// act checks that a names a button of a surface of its session whose
// action is a.Name, and hands it to the listeners.
func (h *Host) act(a Action) error {
	h.mu.Lock()
	c, ok := h.canvases[a.Session]
	var sf *Surface
	if ok {
		sf = c.surfaces.byID[a.SurfaceID]
	}
	if sf == nil {
		h.mu.Unlock()
		return fmt.Errorf("no surface %q on this canvas", a.SurfaceID)
	}
	if name := eventName(sf.Components[a.Component]); name == "" || name != a.Name {
		h.mu.Unlock()
		return fmt.Errorf("component %q of surface %q has no action %q", a.Component, a.SurfaceID, a.Name)
	}
	fns := make([]func(Action), 0, len(h.listeners))
	for _, fn := range h.listeners {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	a.URL = h.URL(a.Session)
	for _, fn := range fns {
		fn(a)
	}
	return nil
}

// eventName is the server event a component's action sends, "" when it
// has none.
func eventName(c map[string]any) string {
	a, _ := c["action"].(map[string]any)
	e, _ := a["event"].(map[string]any)
	name, _ := e["name"].(string)
	return name
}

// Close stops watching presented files and ends every page's stream.
func (h *Host) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.canvases {
		c.stopWatching()
		for ch := range c.subs {
			close(ch)
		}
		c.subs = map[chan event]struct{}{}
	}
	return nil
}

// presentedFile reads the file name of session's presented directory.
func (h *Host) presentedFile(session, name string) ([]byte, error) {
	h.mu.Lock()
	var files fs.FS
	if c, ok := h.canvases[session]; ok && c.view.Kind == "file" {
		files = c.files
	}
	h.mu.Unlock()
	if files == nil || !fs.ValidPath(name) {
		return nil, fs.ErrNotExist
	}
	f, err := files.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() || st.Size() > maxFile {
		return nil, fs.ErrNotExist
	}
	return io.ReadAll(io.LimitReader(f, maxFile))
}

// maxFile is the largest presented file (or file next to it) served.
const maxFile = 64 << 20

// presentedHTML returns the HTML session presents.
func (h *Host) presentedHTML(session string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.canvases[session]
	if !ok || c.view.Kind != "html" {
		return "", false
	}
	return c.html, true
}
