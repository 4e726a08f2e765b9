package canvas

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// pageCSP is the canvas page's policy: its own script and styles only;
// eval for the canvas tool's eval action; frames, images and media from
// anywhere (a presented page, a navigated URL, an A2UI image).
const pageCSP = "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src * data: blob:; media-src * data: blob:; frame-src *; connect-src 'self'; base-uri 'none'; form-action 'none'"

// presentedCSP is the policy of presented HTML and files: a sandbox in an
// origin of its own, where no script runs.
const presentedCSP = "sandbox allow-forms allow-popups; script-src 'none'; object-src 'none'"

// maxBody is the most bytes a page may post (an action, an eval's answer).
const maxBody = 1 << 20

// Handler serves the canvases at /<session>/ (mount it with the prefix
// stripped, e.g. http.StripPrefix("/canvas", h.Handler())):
//
//	GET  /<session>/          the page
//	GET  /<session>/events    its live state (server-sent events)
//	GET  /<session>/view      the presented HTML
//	GET  /<session>/files/…   the presented file and its neighbours
//	POST /<session>/action    a person's action on a surface
//	POST /<session>/eval      a page's answer to an eval
//	GET  /<session>/canvas.js, canvas.css   the renderer
func (h *Host) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.EscapedPath(), "/")
		seg, sub, slash := strings.Cut(rest, "/")
		session, err := url.PathUnescape(seg)
		if err != nil || session == "" {
			http.NotFound(w, r)
			return
		}
		if !slash {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusFound)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch {
		case sub == "" && r.Method == http.MethodGet:
			h.page(w, session)
		case sub == "canvas.js" || sub == "canvas.css":
			serveAsset(w, r, sub)
		case sub == "events" && r.Method == http.MethodGet:
			h.events(w, r, session)
		case sub == "view" && r.Method == http.MethodGet:
			h.view(w, session)
		case strings.HasPrefix(sub, "files/") && r.Method == http.MethodGet:
			h.file(w, r, session, strings.TrimPrefix(sub, "files/"))
		case sub == "action" && r.Method == http.MethodPost:
			h.action(w, r, session)
		case sub == "eval" && r.Method == http.MethodPost:
			h.evalAnswer(w, r, session)
		default:
			http.NotFound(w, r)
		}
	})
}

// page serves the canvas page with session's state in it (JSON, its <
// and > escaped, in a data block no browser runs), so that it is drawn
// before the page's load event.
func (h *Host) page(w http.ResponseWriter, session string) {
	b, _ := assets.ReadFile("assets/canvas.html")
	st, _ := json.Marshal(h.State(session))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(bytes.Replace(b, []byte("/*STATE*/"), st, 1))
}

func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	b, _ := assets.ReadFile("assets/" + name)
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

// events streams session's state to a page: the whole state now and on
// every change, and the scripts eval asks it to run.
func (h *Host) events(w http.ResponseWriter, r *http.Request, session string) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, stop := h.subscribe(session)
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
			f.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func (h *Host) view(w http.ResponseWriter, session string) {
	html, ok := h.presentedHTML(session)
	if !ok {
		http.Error(w, "this canvas presents no HTML", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", presentedCSP)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, html)
}

func (h *Host) file(w http.ResponseWriter, r *http.Request, session, name string) {
	name, err := url.PathUnescape(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	b, err := h.presentedFile(session, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Security-Policy", presentedCSP)
	w.Header().Set("Cache-Control", "no-store")
	http.ServeContent(w, r, path.Base(name), time.Time{}, bytes.NewReader(b))
}

// decodeJSON reads a page's JSON post into v. It must say it is JSON, so
// that a page of another origin cannot post it without the CORS preflight
// the host never answers.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "post application/json", http.StatusUnsupportedMediaType)
		return false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func (h *Host) action(w http.ResponseWriter, r *http.Request, session string) {
	var a Action
	if !decodeJSON(w, r, &a) {
		return
	}
	a.Session, a.Time = session, time.Now().UTC()
	if err := h.act(a); err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Host) evalAnswer(w http.ResponseWriter, r *http.Request, session string) {
	var in struct {
		ID string `json:"id"`
		evalResult
	}
	if !decodeJSON(w, r, &in) {
		return
	}
	if !h.answer(session, in.ID, in.evalResult) {
		http.Error(w, "no such eval", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
