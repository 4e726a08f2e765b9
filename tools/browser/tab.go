package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/toolbelt/toolbelt/tool"
)

// maxConsole is how many console messages a tab keeps, the newest.
const maxConsole = 200

// tab is one tab of a session's browser: its chromedp context, the refs of
// its snapshots, what its console said, and the dialog it has open.
type tab struct {
	id     target.ID
	ctx    context.Context
	cancel context.CancelFunc
	refs   refs

	mu sync.Mutex
	// life is the life of the tab's renderer: it ends when the renderer
	// crashes (crashed), and a new one begins when the tab navigates.
	life    context.Context
	endLife context.CancelFunc
	crashed bool
	console []string
	dialog  *page.EventJavascriptDialogOpening // open now; nil when none
	answer  *dialogAnswer                      // for the next dialog, armed by the dialog action
	dialogs chan struct{}                      // signalled when a dialog is held open
}

// dialogAnswer is how to answer a dialog: accept it (with the text for a
// prompt) or dismiss it.
type dialogAnswer struct {
	accept     bool
	promptText string
}

// newTab opens a tab in the session's browser, without making it current.
func (s *session) newTab() (*tab, error) {
	if len(s.tabs) >= s.m.opts.MaxTabs {
		return nil, fmt.Errorf("the browser has %d tabs open, its limit: close one (action close, targetId) first", len(s.tabs))
	}
	ctx, cancel := chromedp.NewContext(s.ctx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	t := &tab{id: chromedp.FromContext(ctx).Target.TargetID, ctx: ctx, cancel: cancel, dialogs: make(chan struct{}, 1)}
	t.life, t.endLife = context.WithCancel(ctx)
	t.listen()
	s.tabs = append(s.tabs, t)
	return t, nil
}

// listen keeps the tab's console messages and uncaught exceptions, answers
// or holds its dialogs, and notes when its renderer crashes, until the tab
// closes.
func (t *tab) listen() {
	crashes := chromedp.Events(t.ctx, inspector.TargetCrashed)
	go func() {
		for _, err := range crashes {
			if err != nil {
				return
			}
			t.mu.Lock()
			t.crashed = true
			t.endLife()
			t.mu.Unlock()
		}
	}()
	logs := chromedp.Events(t.ctx, runtime.ConsoleAPICalled)
	exceptions := chromedp.Events(t.ctx, runtime.ExceptionThrown)
	dialogs := chromedp.Events(t.ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			args := make([]string, len(ev.Args))
			for i, a := range ev.Args {
				args[i] = remoteText(a)
			}
			t.log(string(ev.Type) + ": " + strings.Join(args, " "))
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			msg := ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
				msg = ex.Description
			}
			t.log("exception: " + msg)
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			t.opened(&ev)
		}
	}()
}

// remoteText renders a console argument: its value, or its description.
func remoteText(o *runtime.RemoteObject) string {
	if o.Type == runtime.RemoteObjectTypeString {
		var s string
		if err := json.Unmarshal(o.Value, &s); err == nil {
			return s
		}
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return o.Description
}

// log keeps one console line, dropping the oldest beyond maxConsole.
func (t *tab) log(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.console = append(t.console, line)
	if n := len(t.console) - maxConsole; n > 0 {
		t.console = t.console[n:]
	}
}

// opened handles a dialog that opened: answered at once when the dialog
// action armed an answer, else held open for it.
func (t *tab) opened(ev *page.EventJavascriptDialogOpening) {
	t.mu.Lock()
	a := t.answer
	t.answer = nil
	if a == nil {
		t.dialog = ev
	}
	t.mu.Unlock()
	if a != nil {
		go t.handleDialog(t.ctx, *a)
		return
	}
	select {
	case t.dialogs <- struct{}{}:
	default:
	}
}

// openDialog returns the dialog the page holds open, nil when none.
func (t *tab) openDialog() *page.EventJavascriptDialogOpening {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dialog
}

// dialogNote tells of the dialog the page holds open, "" when none.
func (t *tab) dialogNote() string {
	d := t.openDialog()
	if d == nil {
		return ""
	}
	return fmt.Sprintf("\nThe page opened a %s dialog and waits for an answer: %q. Answer it with action dialog (accept, promptText).", d.Type, d.Message)
}

// handleDialog answers the open dialog.
func (t *tab) handleDialog(ctx context.Context, a dialogAnswer) error {
	_, err := call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: a.accept, PromptText: a.promptText})
	return err
}

// info returns the tab's address and title ("" when unknown).
func (t *tab) info(ctx context.Context) (url, title string) {
	res, err := call(ctx, t, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.id})
	if err != nil || res.TargetInfo == nil {
		return "", ""
	}
	return res.TargetInfo.URL, res.TargetInfo.Title
}

// tab returns the tab of targetId, or the current one for "". Tabs that
// closed themselves (window.close) are forgotten first.
func (s *session) tab(targetID string) (*tab, error) {
	for _, t := range slices.Clone(s.tabs) {
		if t.ctx.Err() != nil {
			s.closeTab(t)
		}
	}
	if targetID == "" {
		if s.current == nil {
			return nil, errNoTab
		}
		return s.current, nil
	}
	for _, t := range s.tabs {
		if string(t.id) == targetID || strings.HasPrefix(string(t.id), strings.ToUpper(targetID)) && len(targetID) >= 6 {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no tab has targetId %q: list the tabs with action tabs", targetID)
}

// errNoTab is the error of an action on the current tab when none is open.
var errNoTab = fmt.Errorf("no tab is open: open one with action open and a url")

// closeTab closes t and forgets it; the last tab opened before it becomes
// current when t was.
func (s *session) closeTab(t *tab) {
	t.cancel()
	for i, x := range s.tabs {
		if x == t {
			s.tabs = append(s.tabs[:i], s.tabs[i+1:]...)
			break
		}
	}
	if s.current == t {
		s.current = nil
		if n := len(s.tabs); n > 0 {
			s.current = s.tabs[n-1]
		}
	}
}

// run runs the action a in the tab, stopped also when ctx (the call's)
// ends — a call's cancellation or timeout stops the action, not the tab —
// or when the tab's renderer crashes, which it then says.
func run[T any](ctx context.Context, t *tab, a chromedp.Action[T]) (T, error) {
	life, err := t.alive()
	if err != nil {
		var zero T
		return zero, err
	}
	c, cancel := context.WithCancel(t.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	defer context.AfterFunc(life, cancel)()
	res, err := chromedp.Run(c, a)
	if _, crashed := t.alive(); err != nil && crashed != nil {
		return res, crashed
	}
	return res, err
}

// alive returns the life of the tab's renderer, or the error that tells
// the model its page crashed and how to go on.
func (t *tab) alive() (context.Context, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.crashed {
		return nil, tool.InputErrorf("the page in tab %s crashed (its renderer died: out of memory, or a fault of the page); the browser runs on. Navigate the tab again (action navigate with a url) to load a page in it, or close it (action close) and open another", t.id)
	}
	return t.life, nil
}

// revive begins a new life of a crashed tab's renderer, for a navigation.
func (t *tab) revive() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.crashed {
		t.crashed = false
		t.life, t.endLife = context.WithCancel(t.ctx)
	}
}

// isCrashed reports whether the tab's renderer crashed.
func (t *tab) isCrashed() bool {
	_, err := t.alive()
	return err != nil
}

// call runs a protocol command in the tab, as run does.
func call[P, R any](ctx context.Context, t *tab, cmd cdp.Command[P, R], params P) (R, error) {
	return run(ctx, t, func(ctx context.Context, tg *chromedp.Target) (R, error) {
		return cdp.Call(ctx, tg, cmd, params)
	})
}
