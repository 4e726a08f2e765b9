package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
)

// DefaultSnapshotChars is the default of the snapshot's maxChars: under
// the pipeline's cut (40,000), with the untrusted-content wrapper.
const DefaultSnapshotChars = 20_000

// refs binds a tab's element refs ("e12") to DOM nodes by their backend
// node id: a node keeps its ref in every snapshot while it is the same
// node, and a ref whose node was replaced or removed is stale.
type refs struct {
	next   int
	byNode map[cdp.BackendNodeID]string
	byRef  map[string]cdp.BackendNodeID
}

// of returns the ref of the node id, giving it one if it has none.
func (r *refs) of(id cdp.BackendNodeID) string {
	if ref, ok := r.byNode[id]; ok {
		return ref
	}
	if r.byNode == nil {
		r.byNode, r.byRef = map[cdp.BackendNodeID]string{}, map[string]cdp.BackendNodeID{}
	}
	r.next++
	ref := "e" + strconv.Itoa(r.next)
	r.byNode[id], r.byRef[ref] = ref, id
	return ref
}

// staleRef is the error of a ref that names no element of the page now.
type staleRef struct{ ref, why string }

func (e *staleRef) Error() string {
	return fmt.Sprintf("ref %s is stale (%s): take a new snapshot (action snapshot) and use its refs", e.ref, e.why)
}

// element resolves a ref of the tab's last snapshots to its DOM node, or
// says it is stale: unknown to the tab, from a page since left, or its
// node removed from the document.
func (t *tab) element(ctx context.Context, ref string) (cdp.BackendNodeID, runtime.RemoteObjectID, error) {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "ref=")
	id, ok := t.refs.byRef[ref]
	if !ok {
		return 0, "", &staleRef{ref, "no snapshot of this tab gave it"}
	}
	res, err := call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id})
	if err != nil || res.Object == nil {
		if ctx.Err() != nil {
			return 0, "", ctx.Err()
		}
		return 0, "", &staleRef{ref, "its element is gone from the page"}
	}
	connected, err := callOnObject[bool](ctx, t, res.Object.ObjectID, `function(){return this.isConnected}`)
	if err != nil {
		return 0, "", err
	}
	if !connected {
		return 0, "", &staleRef{ref, "its element was removed from the page"}
	}
	return id, res.Object.ObjectID, nil
}

// callOnObject calls the JavaScript function fn with the object as this
// and args, awaiting a promise, and decodes its result into T.
func callOnObject[T any](ctx context.Context, t *tab, obj runtime.RemoteObjectID, fn string, args ...any) (T, error) {
	var v T
	params := runtime.CallFunctionOnParams{FunctionDeclaration: fn, ObjectID: obj, ReturnByValue: new(true), AwaitPromise: new(true)}
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return v, err
		}
		params.Arguments = append(params.Arguments, &runtime.CallArgument{Value: b})
	}
	res, err := call(ctx, t, runtime.CallFunctionOn, params)
	if err != nil {
		return v, err
	}
	if res.ExceptionDetails != nil {
		return v, fmt.Errorf("the page's script failed: %s", exceptionText(res.ExceptionDetails))
	}
	if res.Result != nil && len(res.Result.Value) > 0 {
		if err := json.Unmarshal(res.Result.Value, &v); err != nil {
			return v, fmt.Errorf("decoding the script's result: %w", err)
		}
	}
	return v, nil
}

// exceptionText says what a script's exception was.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// snapshot renders the tab's accessibility tree as text, one line per
// meaningful node, each node with a DOM element carrying its ref; from the
// node of ref when it is set.
func (t *tab) snapshot(ctx context.Context, ref string) (string, error) {
	res, err := call(ctx, t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return "", fmt.Errorf("reading the accessibility tree: %w", err)
	}
	if len(res.Nodes) == 0 {
		return "", nil
	}
	byID := make(map[accessibility.NodeID]*accessibility.Node, len(res.Nodes))
	for _, n := range res.Nodes {
		byID[n.NodeID] = n
	}
	root := res.Nodes[0]
	if ref != "" {
		id, _, err := t.element(ctx, ref)
		if err != nil {
			return "", err
		}
		root = nil
		for _, n := range res.Nodes {
			if n.BackendDOMNodeID == id {
				root = n
				break
			}
		}
		if root == nil {
			return "", fmt.Errorf("ref %s has no part in the accessibility tree (hidden, or not rendered): take a snapshot of the whole page", ref)
		}
	}
	var b strings.Builder
	t.render(&b, byID, root, 0, "")
	return b.String(), nil
}

// render writes node n and its descendants at depth, leaving out nodes
// that say nothing (ignored, generic containers without a name, text that
// repeats its parent's name) but not their children.
func (t *tab) render(b *strings.Builder, byID map[accessibility.NodeID]*accessibility.Node, n *accessibility.Node, depth int, parentName string) {
	role, name := axString(n.Role), axString(n.Name)
	shown := !n.Ignored && !silent[role] && !(transparent[role] && name == "") &&
		!(role == "StaticText" && (name == "" || name == parentName))
	next := depth
	if shown {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString("- ")
		if role == "StaticText" {
			role = "text"
		}
		b.WriteString(role)
		if name != "" {
			b.WriteString(" " + strconv.Quote(name))
		}
		if v := axString(n.Value); v != "" {
			b.WriteString(" value=" + strconv.Quote(v))
		}
		for _, s := range states(n) {
			b.WriteString(" [" + s + "]")
		}
		if n.BackendDOMNodeID != 0 && role != "text" {
			b.WriteString(" [ref=" + t.refs.of(n.BackendDOMNodeID) + "]")
		}
		b.WriteByte('\n')
		next = depth + 1
		parentName = name
		if v := axString(n.Value); v != "" {
			parentName = v // a field's text repeats its value
		}
	}
	for _, id := range n.ChildIDs {
		if c := byID[id]; c != nil {
			t.render(b, byID, c, next, parentName)
		}
	}
}

// silent are the roles a snapshot never shows (their children it does):
// the document (its title heads the snapshot) and the text's inline boxes.
var silent = map[string]bool{"RootWebArea": true, "InlineTextBox": true}

// transparent are the roles a snapshot shows only with a name: containers
// that say nothing more than their children.
var transparent = map[string]bool{"generic": true, "none": true, "LineBreak": true, "LabelText": true, "MenuListPopup": true, "group": true}

// stateNames are the properties a snapshot line shows, in this order.
var stateNames = []accessibility.PropertyName{
	accessibility.PropertyNameLevel, accessibility.PropertyNameChecked, accessibility.PropertyNamePressed,
	accessibility.PropertyNameSelected, accessibility.PropertyNameExpanded, accessibility.PropertyNameDisabled,
	accessibility.PropertyNameRequired, accessibility.PropertyNameReadonly, accessibility.PropertyNameInvalid,
	accessibility.PropertyNameFocused, accessibility.PropertyNameURL,
}

// states renders the states of n that are set: "checked", "level=2",
// "url=https://…".
func states(n *accessibility.Node) []string {
	var out []string
	for _, want := range stateNames {
		for _, p := range n.Properties {
			if p.Name != want {
				continue
			}
			switch v := axString(p.Value); v {
			case "", "false":
			case "true":
				out = append(out, string(want))
			default:
				out = append(out, string(want)+"="+v)
			}
		}
	}
	return out
}

// axString returns an accessibility value as text.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(v.Value))
}

// part returns the part of text from offset, at most max bytes, cut at a
// line's end (or, in a line longer than max, at a character's start).
// next is where the following part starts, 0 when this is the last.
func part(text string, offset, max int) (out string, next int) {
	if offset >= len(text) {
		return "", 0
	}
	text = text[offset:]
	if len(text) <= max {
		return text, 0
	}
	cut := strings.LastIndexByte(text[:max], '\n') + 1
	if cut <= 0 {
		for cut = max; cut > 0 && !utf8.RuneStart(text[cut]); cut-- {
		}
	}
	return text[:cut], offset + cut
}
