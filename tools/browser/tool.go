package browser

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// args are the browser tool's arguments, named as OpenClaw's browser tool
// names them.
type args struct {
	Action     string   `json:"action" enum:"status,start,stop,tabs,open,focus,close,navigate,snapshot,screenshot,act,console,pdf,upload,dialog" jsonschema:"status: whether the browser runs, its tabs. start/stop: start or stop this session's browser. tabs: list the tabs. open: a new tab at url. focus: make the tab targetId current. close: close the tab targetId (default: the current one). navigate: go to url in the current tab. snapshot: the page as an accessibility tree with element refs. screenshot: an image of the page or of the element ref. act: do kind on an element (ref). console: the page's console messages. pdf: print the page to path. upload: set the file input ref to paths. dialog: answer the page's dialog (accept, promptText)."`
	URL        string   `json:"url,omitempty" jsonschema:"open, navigate: the http:// or https:// address. screenshot: a page to picture in a tab of its own, closed after (the tabs open are left as they are)." maxLength:"8192"`
	TargetID   string   `json:"targetId,omitempty" jsonschema:"The tab (from tabs or open); default: the current tab."`
	Ref        string   `json:"ref,omitempty" jsonschema:"An element's ref from the latest snapshot (e12): act, screenshot, upload, and snapshot of one part of the page."`
	Kind       string   `json:"kind,omitempty" enum:"click,type,press,hover,select,fill,drag,scroll,wait,evaluate" jsonschema:"act: what to do. click, hover, scroll (into view; without ref: one screen down), type (text, keys typed), fill (text replaces the value), press (key), select (values), drag (ref onto endRef), wait (for text to appear, or timeMs), evaluate (fn)."`
	Text       string   `json:"text,omitempty" jsonschema:"type, fill: the text. wait: the text to wait for."`
	Key        string   `json:"key,omitempty" jsonschema:"press: the key, e.g. Enter, Tab, Escape, ArrowDown, Backspace, a."`
	Values     []string `json:"values,omitempty" jsonschema:"select: the options to select, by value or label."`
	EndRef     string   `json:"endRef,omitempty" jsonschema:"drag: the element to drop on."`
	Fn         string   `json:"fn,omitempty" jsonschema:"evaluate: a JavaScript function, e.g. '() => document.title' or, with ref, '(el) => el.textContent'." maxLength:"100000"`
	TimeMs     int      `json:"timeMs,omitempty" jsonschema:"wait: how long to wait, in milliseconds (at most 30000)." minimum:"0" maximum:"30000"`
	Submit     bool     `json:"submit,omitempty" jsonschema:"type: press Enter after the text."`
	FullPage   bool     `json:"fullPage,omitempty" jsonschema:"screenshot: the whole page, not only the viewport."`
	Type       string   `json:"type,omitempty" enum:"png,jpeg" jsonschema:"screenshot: the image format (default png)."`
	Width      int      `json:"width,omitempty" minimum:"200" maximum:"3840" jsonschema:"screenshot with url: the viewport's width in pixels (default 1280)."`
	Height     int      `json:"height,omitempty" minimum:"200" maximum:"3840" jsonschema:"screenshot with url: the viewport's height in pixels (default 800)."`
	MaxChars   int      `json:"maxChars,omitempty" jsonschema:"snapshot: the most characters to return (default 20000)." minimum:"100" maximum:"200000"`
	Offset     int      `json:"offset,omitempty" jsonschema:"snapshot: where to start, from the notice of a snapshot that was cut." minimum:"0"`
	Path       string   `json:"path,omitempty" jsonschema:"pdf: the file to write, relative to the workspace (default page.pdf)."`
	Paths      []string `json:"paths,omitempty" jsonschema:"upload: the workspace files to put in the file input ref."`
	Accept     *bool    `json:"accept,omitempty" jsonschema:"dialog: accept (true, the default) or dismiss (false) the open dialog, or the next one."`
	PromptText string   `json:"promptText,omitempty" jsonschema:"dialog: the answer to a prompt."`
}

const description = "Drive a headless Chromium: open pages (the web; this machine's and private hosts only when tools.browser.allowHosts lists them, or as this session's preview), read them as an accessibility tree whose elements have refs (snapshot), act on an element by its ref (click, type, fill, press, select, hover, drag, scroll, wait, evaluate), take screenshots, read the console, print to PDF, upload workspace files, answer dialogs. One browser per session. Take a new snapshot after the page changes: an old ref may be stale."

// Register adds the browser tool, run by m, to reg. When Chromium is not
// installed the tool is listed as unavailable, the reason saying how to
// install it.
func Register(reg *registry.Registry, m *Manager) error {
	return reg.RegisterFactory(func(tc *tool.Context) (*tool.Tool, error) {
		if err := m.Available(); err != nil {
			return nil, err
		}
		t, err := tool.New("browser", description, func(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
			return m.call(ctx, in, inv.Context)
		})
		if err != nil {
			return nil, err
		}
		t.Preview, err = tool.NewPreview("browser", func(ctx context.Context, in args, inv tool.Invocation) (tool.Effects, error) {
			return m.preview(ctx, in, inv.Context)
		})
		return &t, err
	}, tool.Meta{
		ID: "browser", Label: "Browser", Description: description, Section: "ui",
		OpenWorld: true, ExternalContent: true, Source: tool.SourceCore, Settings: &Config{},
	})
}

// call runs one call of the tool for the session of tc.
func (m *Manager) call(ctx context.Context, in args, tc *tool.Context) (tool.Result, error) {
	settings, err := loadSettings(tc.Config)
	if err != nil {
		return tool.Result{}, err
	}
	s, err := m.session(tc.SessionKey)
	if err != nil {
		return tool.Result{}, err
	}
	defer s.mu.Unlock()
	s.settings = settings
	switch in.Action {
	case "status":
		return s.status(ctx), nil
	case "stop":
		kept := s.kept
		if err := s.stop(); err != nil {
			return tool.Result{}, err
		}
		if kept {
			return own("Stopped the browser of this session; its profile is kept (tools.browser.keepProfile) for its next start."), nil
		}
		return own("Stopped the browser of this session; its profile is removed."), nil
	}
	s.workspace = tc.Workspace
	defer s.used()
	err = s.ensure()
	stopped := s.stopped
	s.stopped = ""
	if err != nil {
		return tool.Result{}, err
	}
	if err := s.reguard(); err != nil {
		return tool.Result{}, err
	}
	if err := s.downloads(ctx); err != nil {
		return tool.Result{}, err
	}
	res, err := s.do(ctx, in, tc)
	if stopped != "" {
		res.Content = append([]tool.Content{{Type: tool.TextContent, Origin: tool.OwnWords(),
			Text: "Note: this session's browser " + stopped + " and was started again: the tabs and refs from before are gone.\n"}}, res.Content...)
	}
	return res, err
}

// do runs one action in the session's running browser.
func (s *session) do(ctx context.Context, in args, tc *tool.Context) (tool.Result, error) {
	switch in.Action {
	case "start":
		return own("The browser runs: open a page with action open and a url."), nil
	case "tabs":
		return s.listTabs(ctx), nil
	case "open":
		return s.open(ctx, in.URL)
	case "focus":
		t, err := s.tab(in.TargetID)
		if err != nil {
			return tool.Result{}, tool.InputErrorf("%v", err)
		}
		s.current = t
		return s.done(ctx, t, "Tab "+string(t.id)+" is current."), nil
	case "screenshot":
		if in.URL != "" || in.Width != 0 || in.Height != 0 {
			return s.screenshotAt(ctx, in)
		}
	case "close":
		t, err := s.tab(in.TargetID)
		if err != nil {
			return tool.Result{}, tool.InputErrorf("%v", err)
		}
		s.closeTab(t)
		return own(fmt.Sprintf("Closed tab %s; %d open.", t.id, len(s.tabs))), nil
	}
	t, err := s.tab(in.TargetID)
	if err != nil {
		if in.Action == "navigate" && in.TargetID == "" {
			return s.open(ctx, in.URL)
		}
		return tool.Result{}, tool.InputErrorf("%v", err)
	}
	switch in.Action {
	case "navigate":
		return s.navigate(ctx, t, in.URL)
	case "snapshot":
		return t.snapshotResult(ctx, in)
	case "screenshot":
		return t.screenshotResult(ctx, in)
	case "act":
		return s.act(ctx, t, in)
	case "console":
		return s.consoleResult(t), nil
	case "pdf":
		return t.pdf(ctx, in.Path, tc)
	case "upload":
		return t.upload(ctx, in, tc)
	case "dialog":
		return t.answerDialog(ctx, in)
	}
	return tool.Result{}, tool.InputErrorf("unknown action %q", in.Action)
}

// own is a result of the tool's own words.
func own(text string) tool.Result {
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text, Origin: tool.OwnWords()}}}
}

// done is the result of an action on t: what was done, and the page it
// left the tab on.
func (s *session) done(ctx context.Context, t *tab, what string) tool.Result {
	url, title := t.info(ctx)
	return tool.Result{Content: []tool.Content{
		{Type: tool.TextContent, Text: what, Origin: tool.OwnWords()},
		{Type: tool.TextContent, Text: fmt.Sprintf("Page: %s\nURL: %s", oneLine(title), url), Origin: tool.FromOutside("browser " + url)},
	}}
}

// external is a result of text from the pages (titles, addresses).
func external(text string) tool.Result {
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text}}}
}

// status says whether the session's browser runs, and its tabs.
func (s *session) status(ctx context.Context) tool.Result {
	switch {
	case s.ctx == nil:
		return own("The browser is not running; any action (or start) starts it.")
	case !s.running():
		return own("The browser stopped (crashed, or its process was killed); the next action starts it again.")
	}
	return external(fmt.Sprintf("The browser runs (pid %d), %d of at most %d tabs open.\n", s.pid, len(s.tabs), s.m.opts.MaxTabs) + s.tabLines(ctx))
}

// listTabs lists the session's tabs.
func (s *session) listTabs(ctx context.Context) tool.Result {
	if len(s.tabs) == 0 {
		return own("No tab is open: open one with action open and a url.")
	}
	return external(s.tabLines(ctx))
}

// tabLines renders the tabs, one a line: the current one marked, its
// targetId, title and address.
func (s *session) tabLines(ctx context.Context) string {
	var b strings.Builder
	for _, t := range s.tabs {
		mark := "  "
		if t == s.current {
			mark = "* "
		}
		if t.isCrashed() {
			fmt.Fprintf(&b, "%stargetId=%s crashed: navigate it again or close it\n", mark, t.id)
			continue
		}
		url, title := t.info(ctx)
		fmt.Fprintf(&b, "%stargetId=%s %q %s\n", mark, t.id, oneLine(title), url)
	}
	return b.String()
}

// oneLine keeps text on one line, for a title in a result's header.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
