package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/toolbelt/toolbelt/tool"
)

// The bounds of act's wait.
const (
	defaultWait = 10 * time.Second
	maxWait     = 30 * time.Second
)

// act does in.Kind on the element in.Ref of the tab t.
func (s *session) act(ctx context.Context, t *tab, in args) (tool.Result, error) {
	needsRef := map[string]bool{"click": true, "hover": true, "fill": true, "select": true, "drag": true, "type": true}
	if needsRef[in.Kind] && in.Ref == "" {
		return tool.Result{}, tool.InputErrorf("act %s needs ref: an element's ref from the latest snapshot", in.Kind)
	}
	var obj runtime.RemoteObjectID
	if in.Ref != "" {
		var err error
		if _, obj, err = t.element(ctx, in.Ref); err != nil {
			return tool.Result{}, inputError(err)
		}
	}
	var (
		what string
		err  error
	)
	switch in.Kind {
	case "click":
		what, err = "Clicked "+in.Ref+".", t.click(ctx, obj)
	case "hover":
		what, err = "Hovered over "+in.Ref+".", t.hover(ctx, obj)
	case "type":
		what, err = fmt.Sprintf("Typed %d characters into %s.", len([]rune(in.Text)), in.Ref), t.typeText(ctx, obj, in.Text, in.Submit)
	case "fill":
		what, err = "Filled "+in.Ref+".", t.fill(ctx, obj, in.Text)
	case "press":
		what, err = "Pressed "+in.Key+".", t.press(ctx, obj, in.Key)
	case "select":
		what, err = t.selectValues(ctx, obj, in.Ref, in.Values)
	case "drag":
		what, err = "Dragged "+in.Ref+" onto "+in.EndRef+".", t.drag(ctx, obj, in.EndRef)
	case "scroll":
		what, err = "Scrolled.", t.scroll(ctx, obj)
	case "wait":
		what, err = t.wait(ctx, in.Text, in.TimeMs)
	case "evaluate":
		return t.evaluate(ctx, obj, in.Fn)
	default:
		return tool.Result{}, tool.InputErrorf("act needs kind: click, type, press, hover, select, fill, drag, scroll, wait or evaluate")
	}
	if err != nil {
		return tool.Result{}, inputError(err)
	}
	return s.done(ctx, t, what+t.dialogNote()), nil
}

// inputError makes err one the model can act on: a stale ref, a page's
// refusal, an element that cannot be used.
func inputError(err error) error {
	if tool.IsInputError(err) || err == context.Canceled || err == context.DeadlineExceeded {
		return err
	}
	return tool.InputErrorf("%v", err)
}

// center scrolls the element into view and returns its center in the
// viewport, refusing an element with no size (hidden).
func (t *tab) center(ctx context.Context, obj runtime.RemoteObjectID) (x, y float64, err error) {
	p, err := callOnObject[struct{ X, Y, W, H float64 }](ctx, t, obj, `function(){
		this.scrollIntoView({block: "center", inline: "center"});
		const r = this.getBoundingClientRect();
		return {X: r.left + r.width/2, Y: r.top + r.height/2, W: r.width, H: r.height};
	}`)
	if err != nil {
		return 0, 0, err
	}
	if p.W == 0 || p.H == 0 {
		return 0, 0, fmt.Errorf("the element is not visible (it has no size): take a new snapshot")
	}
	return p.X, p.Y, nil
}

// mouse sends mouse events at (x, y): a move, then each of the types.
func (t *tab) mouse(ctx context.Context, x, y float64, types ...input.DispatchMouseEventType) error {
	for _, typ := range append([]input.DispatchMouseEventType{input.DispatchMouseEventTypeMouseMoved}, types...) {
		p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
		if typ != input.DispatchMouseEventTypeMouseMoved {
			p.Button, p.ClickCount = input.MouseButtonLeft, 1
		}
		if typ == input.DispatchMouseEventTypeMousePressed {
			p.Buttons = 1
		}
		if err := t.send(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// send dispatches one mouse event.
func (t *tab) send(ctx context.Context, p input.DispatchMouseEventParams) error {
	_, err := call(ctx, t, input.DispatchMouseEvent, p)
	return err
}

// click clicks the element's center.
func (t *tab) click(ctx context.Context, obj runtime.RemoteObjectID) error {
	x, y, err := t.center(ctx, obj)
	if err != nil {
		return err
	}
	return t.whileDialogs(ctx, func(ctx context.Context) error {
		return t.mouse(ctx, x, y, input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased)
	})
}

// whileDialogs runs f, which may make the page open a dialog: the page
// then stops until the dialog is answered, so f is given up on (its events
// were sent) once one opens, and the dialog is left for the dialog action.
func (t *tab) whileDialogs(ctx context.Context, f func(context.Context) error) error {
	if t.openDialog() != nil {
		return fmt.Errorf("the page has a dialog open: %s", t.dialogNote())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	select { // a signal left from a dialog answered already
	case <-t.dialogs:
	default:
	}
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		return err
	case <-t.dialogs:
		cancel()
		<-done
		return nil
	}
}

// hover moves the mouse over the element.
func (t *tab) hover(ctx context.Context, obj runtime.RemoteObjectID) error {
	x, y, err := t.center(ctx, obj)
	if err != nil {
		return err
	}
	return t.mouse(ctx, x, y)
}

// focus focuses the element.
func (t *tab) focus(ctx context.Context, obj runtime.RemoteObjectID) error {
	_, err := callOnObject[chromedp.Void](ctx, t, obj, `function(){ this.focus(); }`)
	return err
}

// typeText types text into the element as key presses, then Enter when
// submit is set.
func (t *tab) typeText(ctx context.Context, obj runtime.RemoteObjectID, text string, submit bool) error {
	if err := t.focus(ctx, obj); err != nil {
		return err
	}
	if submit {
		text += kb.Enter
	}
	return t.whileDialogs(ctx, func(ctx context.Context) error {
		_, err := run(ctx, t, chromedp.KeyEvent(text))
		return err
	})
}

// fill replaces the value of a form field (or the text of an editable
// element) with text, as input events tell the page.
func (t *tab) fill(ctx context.Context, obj runtime.RemoteObjectID, text string) error {
	ok, err := callOnObject[bool](ctx, t, obj, `function(v){
		if (this.isContentEditable) { this.focus(); this.textContent = v; }
		else if ("value" in this) { this.focus(); this.value = v; }
		else return false;
		this.dispatchEvent(new Event("input", {bubbles: true}));
		this.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	}`, text)
	if err == nil && !ok {
		err = fmt.Errorf("the element is not a form field or editable: fill only those (type, or click, for others)")
	}
	return err
}

// press presses key: on the element when obj is set, else on the focused
// one.
func (t *tab) press(ctx context.Context, obj runtime.RemoteObjectID, key string) error {
	r, ok := keyRune(key)
	if !ok {
		return fmt.Errorf("unknown key %q: use a character or a key name such as Enter, Tab, Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown", key)
	}
	if obj != "" {
		if err := t.focus(ctx, obj); err != nil {
			return err
		}
	}
	return t.whileDialogs(ctx, func(ctx context.Context) error {
		_, err := run(ctx, t, chromedp.KeyEvent(string(r)))
		return err
	})
}

// keyRune returns the rune chromedp types for a key: the key itself when
// it is one character, else the key named so ("Enter", "arrowdown").
func keyRune(key string) (rune, bool) {
	if rs := []rune(key); len(rs) == 1 {
		return rs[0], true
	}
	for r, k := range kb.Keys {
		if strings.EqualFold(k.Key, key) && k.Key != "" {
			return r, true
		}
	}
	return 0, false
}

// selectValues selects the options of a select element whose value or
// label is one of values, and says what it selected.
func (t *tab) selectValues(ctx context.Context, obj runtime.RemoteObjectID, ref string, values []string) (string, error) {
	if len(values) == 0 {
		return "", fmt.Errorf("select needs values: the options' values or labels")
	}
	got, err := callOnObject[[]string](ctx, t, obj, `function(values){
		if (!this.options) return null;
		const chosen = [];
		for (const o of this.options) {
			o.selected = values.includes(o.value) || values.includes(o.label);
			if (o.selected) chosen.push(o.label || o.value);
		}
		this.dispatchEvent(new Event("input", {bubbles: true}));
		this.dispatchEvent(new Event("change", {bubbles: true}));
		return chosen;
	}`, values)
	switch {
	case err != nil:
		return "", err
	case got == nil:
		return "", fmt.Errorf("%s is not a select element", ref)
	case len(got) == 0:
		return "", fmt.Errorf("no option of %s has the value or label %q: take a snapshot to see them", ref, values)
	}
	return fmt.Sprintf("Selected %q in %s.", got, ref), nil
}

// drag drags the element onto the element endRef with the mouse.
func (t *tab) drag(ctx context.Context, obj runtime.RemoteObjectID, endRef string) error {
	if endRef == "" {
		return fmt.Errorf("drag needs endRef: the element to drop on")
	}
	_, end, err := t.element(ctx, endRef)
	if err != nil {
		return err
	}
	x0, y0, err := t.center(ctx, obj)
	if err != nil {
		return err
	}
	if err := t.mouse(ctx, x0, y0, input.DispatchMouseEventTypeMousePressed); err != nil {
		return err
	}
	x1, y1, err := t.center(ctx, end)
	if err != nil {
		return err
	}
	const steps = 5
	for i := 1; i <= steps; i++ {
		f := float64(i) / steps
		p := input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x0 + (x1-x0)*f, Y: y0 + (y1-y0)*f, Button: input.MouseButtonLeft, Buttons: 1}
		if err := t.send(ctx, p); err != nil {
			return err
		}
	}
	return t.send(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: x1, Y: y1, Button: input.MouseButtonLeft, ClickCount: 1})
}

// scroll scrolls the element into view, or the page one screen down.
func (t *tab) scroll(ctx context.Context, obj runtime.RemoteObjectID) error {
	if obj != "" {
		_, err := callOnObject[chromedp.Void](ctx, t, obj, `function(){ this.scrollIntoView({block: "center"}); }`)
		return err
	}
	_, err := run(ctx, t, chromedp.Evaluate[chromedp.Void](`window.scrollBy(0, window.innerHeight * 0.8)`))
	return err
}

// wait waits for text to appear on the page (up to timeMs, default
// defaultWait), or for timeMs.
func (t *tab) wait(ctx context.Context, text string, timeMs int) (string, error) {
	d := min(time.Duration(timeMs)*time.Millisecond, maxWait)
	if text == "" {
		if d == 0 {
			return "", fmt.Errorf("wait needs text (to wait for) or timeMs")
		}
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return fmt.Sprintf("Waited %s.", d), nil
	}
	if d == 0 {
		d = defaultWait
	}
	// Each look evaluates in the page the tab shows then: a navigation
	// while waiting (a form sent) does not stop the wait.
	quoted, _ := json.Marshal(text)
	js := "document.body !== null && document.body.innerText.includes(" + string(quoted) + ")"
	deadline := time.Now().Add(d)
	for {
		found, err := run(ctx, t, chromedp.Evaluate[bool](js))
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err == nil && found {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the text %q did not appear within %s", text, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("The text %q is on the page.", text), nil
}

// evaluate runs the JavaScript function fn in the page (with the element as
// its argument when obj is set) and returns its result as JSON: the page's
// words, external content.
func (t *tab) evaluate(ctx context.Context, obj runtime.RemoteObjectID, fn string) (tool.Result, error) {
	if strings.TrimSpace(fn) == "" {
		return tool.Result{}, tool.InputErrorf("evaluate needs fn: a JavaScript function such as '() => document.title'")
	}
	var (
		out []byte
		err error
	)
	if obj != "" {
		out, err = callOnObject[json.RawMessage](ctx, t, obj, `function(fn){ return (0, eval)("(" + fn + ")")(this); }`, fn)
	} else {
		out, err = run(ctx, t, chromedp.Evaluate[[]byte]("("+fn+")()", chromedp.EvalAwaitPromise))
	}
	if err != nil {
		return tool.Result{}, tool.InputErrorf("evaluate: %v", err)
	}
	if len(out) == 0 {
		out = []byte("undefined")
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: string(out)}}}, nil
}
