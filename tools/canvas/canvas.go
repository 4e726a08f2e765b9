// Package canvas is the canvas tool: it shows people what the agent
// presents — a page, a workspace file with live reload, a URL, A2UI
// surfaces — on the session's canvas (package canvas hosts it), runs
// JavaScript there with approval, and takes a picture of it through the
// headless browser.
package canvas

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// HostService is the key of the canvas host a tool context carries; the
// tool is available where it is set.
var HostService = tool.NewService[*canvas.Host]()

// Capture takes a picture of session's canvas in its headless browser:
// width × height pixels (the whole page with fullPage), as "png" or
// "jpeg".
type Capture func(ctx context.Context, session string, o CaptureOptions) ([]byte, error)

// CaptureOptions are a snapshot's size and format.
type CaptureOptions struct {
	Width, Height int
	FullPage      bool
	Type          string
}

// CaptureService is the key of the browser a tool context offers for
// snapshots; without it, snapshot says that no browser is available.
var CaptureService = tool.NewService[Capture]()

// Register adds the canvas tool to reg.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(canvasTool, tool.Meta{
		ID: "canvas", Label: "Canvas", Description: description,
		Risk: tool.RiskLow, Source: tool.SourceCore,
	})
}

const description = "Show people what you build on this session's canvas, a page any browser can open (every action returns its URL). " +
	"present: show html, or the workspace file at path (reloaded live when it or a file next to it changes; its scripts do not run — serve the app and navigate to it for that). " +
	"navigate: show the page at url. hide: hide what is presented. eval: run javaScript in the open canvas page and return its value (needs approval). " +
	"snapshot: a picture of the canvas. a2ui_push: show A2UI surfaces from jsonl, one A2UI message per line, v0.8 (surfaceUpdate, dataModelUpdate, beginRendering, deleteSurface) " +
	"or v0.9 (createSurface, updateComponents, updateDataModel, deleteSurface) with the standard catalog's components; every line is validated first and an invalid push changes nothing. " +
	"When the user presses a button on a surface, its action comes back to you as a message. a2ui_reset: remove every surface."

type args struct {
	Action     string `json:"action" enum:"present,hide,navigate,eval,snapshot,a2ui_push,a2ui_reset" jsonschema:"What to do."`
	HTML       string `json:"html,omitempty" jsonschema:"present: the HTML page to show."`
	Path       string `json:"path,omitempty" jsonschema:"present: a workspace file to show instead of html (e.g. site/index.html)."`
	URL        string `json:"url,omitempty" jsonschema:"navigate: the http(s) URL to show."`
	JavaScript string `json:"javaScript,omitempty" jsonschema:"eval: the JavaScript to run in the canvas page; its value (a promise is awaited) comes back as text."`
	JSONL      string `json:"jsonl,omitempty" jsonschema:"a2ui_push: A2UI messages, one JSON object per line."`
	Type       string `json:"type,omitempty" enum:"png,jpeg" jsonschema:"snapshot: the image format (default png)."`
	Width      int    `json:"width,omitempty" minimum:"200" maximum:"3840" jsonschema:"snapshot: the viewport's width in pixels (default 1280)."`
	Height     int    `json:"height,omitempty" minimum:"200" maximum:"3840" jsonschema:"snapshot: the viewport's height in pixels (default 800)."`
	FullPage   bool   `json:"fullPage,omitempty" jsonschema:"snapshot: the whole page, not only the viewport."`
}

// evalTimeout bounds how long eval waits for the page to answer.
const evalTimeout = 30 * time.Second

func canvasTool(tc *tool.Context) (*tool.Tool, error) {
	h, ok := HostService.Get(tc)
	if !ok || h == nil || !h.Served() {
		return nil, &tool.NotHere{Reason: "no canvas is served here: toolbelt run, chat and serve serve one"}
	}
	t, err := tool.New("canvas", description, func(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
		return do(ctx, h, inv.Context, in)
	})
	if err != nil {
		return nil, err
	}
	t.Preview, err = tool.NewPreview("canvas", func(_ context.Context, in args, inv tool.Invocation) (tool.Effects, error) {
		e := tool.Effects{Summary: in.Action + " on the canvas " + h.URL(Session(inv.Context)), Risk: tool.RiskLow}
		if in.Action == "eval" {
			e.Risk, e.RiskReason = tool.RiskHigh, "eval runs the model's JavaScript in the canvas page a person has open"
			e.Command = in.JavaScript
		}
		return e, nil
	})
	return &t, err
}

// Session names the canvas of the caller: its session, "main" for a
// caller without one.
func Session(tc *tool.Context) string {
	if tc == nil || tc.SessionKey == "" {
		return "main"
	}
	return tc.SessionKey
}

func do(ctx context.Context, h *canvas.Host, tc *tool.Context, in args) (tool.Result, error) {
	session := Session(tc)
	url := h.URL(session)
	done := func(what string, extra map[string]any) (tool.Result, error) {
		out := map[string]any{"url": url, "action": in.Action}
		for k, v := range extra {
			out[k] = v
		}
		r, err := tool.JSON(out)
		r.Content = append([]tool.Content{{Type: tool.TextContent, Text: what + " Open " + url + " to see it."}}, r.Content...)
		return r, err
	}
	switch in.Action {
	case "present":
		return present(ctx, h, tc, session, in, done)
	case "hide":
		h.Hide(session)
		return done("The canvas hides what it presented.", nil)
	case "navigate":
		if err := h.Navigate(session, strings.TrimSpace(in.URL)); err != nil {
			return tool.Result{}, tool.InputErrorf("navigate: %v", err)
		}
		return done("The canvas shows "+in.URL+".", nil)
	case "eval":
		if strings.TrimSpace(in.JavaScript) == "" {
			return tool.Result{}, tool.InputErrorf("eval needs javaScript: the script to run in the canvas page.")
		}
		ctx, cancel := context.WithTimeout(ctx, evalTimeout)
		defer cancel()
		v, err := h.Eval(ctx, session, in.JavaScript)
		if err != nil {
			return tool.Errorf("eval on %s: %v", url, err), nil
		}
		return done("The script returned:\n"+v, map[string]any{"value": v})
	case "snapshot":
		return snapshot(ctx, tc, session, url, in)
	case "a2ui_push":
		ids, err := h.Push(session, in.JSONL)
		if err != nil {
			return tool.Errorf("%v\nFix those lines and push again (%s).", err, url), nil
		}
		return done(fmt.Sprintf("Pushed; the canvas has %d surface(s): %s.", len(ids), strings.Join(ids, ", ")), map[string]any{"surfaces": ids})
	case "a2ui_reset":
		h.Reset(session)
		return done("Every surface is removed.", nil)
	}
	return tool.Result{}, tool.InputErrorf("unknown action %q", in.Action)
}

func present(ctx context.Context, h *canvas.Host, tc *tool.Context, session string, in args, done func(string, map[string]any) (tool.Result, error)) (tool.Result, error) {
	switch {
	case in.HTML != "" && in.Path != "":
		return tool.Result{}, tool.InputErrorf("present takes html or path, not both.")
	case in.HTML != "":
		h.Present(session, in.HTML)
		return done("The canvas shows the HTML (its scripts do not run).", nil)
	case in.Path == "":
		return tool.Result{}, tool.InputErrorf("present needs html (a page) or path (a workspace file).")
	case tc == nil || tc.FS == nil:
		return tool.Result{}, tool.InputErrorf("present path needs a workspace; give html instead.")
	}
	rel, err := tc.FS.Resolve(ctx, in.Path)
	if err != nil {
		return tool.Result{}, tool.InputErrorf("present: %v", err)
	}
	if st, err := tc.FS.Stat(ctx, rel); err != nil || st.IsDir() {
		return tool.Result{}, tool.InputErrorf("present: %s is not a file in the workspace (%v).", in.Path, err)
	}
	dir := path.Dir(filepath.ToSlash(rel))
	watch := ""
	if root := tc.FS.Root(); filepath.IsAbs(root) {
		watch = filepath.Join(root, filepath.FromSlash(dir))
	}
	if err := h.PresentFile(session, bridgeFS{tc.FS, dir}, path.Base(filepath.ToSlash(rel)), watch); err != nil {
		return tool.Result{}, err
	}
	return done("The canvas shows "+rel+" and reloads it when it changes.", map[string]any{"path": rel})
}

// bridgeFS is the directory dir of a workspace's bridge as an fs.FS, so
// that the canvas serves presented files with the bridge's protections
// (protected and hidden paths).
type bridgeFS struct {
	b   fsbridge.Bridge
	dir string
}

func (f bridgeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return f.b.Open(context.Background(), path.Join(f.dir, name))
}

func snapshot(ctx context.Context, tc *tool.Context, session, url string, in args) (tool.Result, error) {
	capture, ok := CaptureService.Get(tc)
	if !ok || capture == nil {
		return tool.Errorf("snapshot needs the headless browser, which is not available here (Debian: apt-get install chromium). Open %s to see the canvas.", url), nil
	}
	o := CaptureOptions{Width: in.Width, Height: in.Height, FullPage: in.FullPage, Type: in.Type}
	if o.Width == 0 {
		o.Width = 1280
	}
	if o.Height == 0 {
		o.Height = 800
	}
	if o.Type == "" {
		o.Type = "png"
	}
	img, err := capture(ctx, session, o)
	if err != nil {
		return tool.Errorf("snapshot of %s: %v", url, err), nil
	}
	return tool.Image("Snapshot of the canvas "+url, img, "image/"+o.Type), nil
}
