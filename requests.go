package toolbelt

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// ToolRequests returns what answers tools' requests (package interact)
// where no MCP client does — the CLI, the agent loop: a form is asked
// field by field of asker (the person at the terminal; nil: nobody, and
// the request fails saying so), a completion comes from the configured
// model (model, or TOOLBELT_MODEL). toolRequests in toolbelt.yaml governs
// them, and every request is recorded in its call's audit record.
func (tb *Toolbelt) ToolRequests(asker ask.Asker) interact.Client {
	return interact.Govern(localRequests{cfg: tb.cfg, asker: asker}, toolRules(tb.cfg))
}

// toolRules are cfg's toolRequests.
func toolRules(cfg *config.Config) interact.Rules {
	return interact.Rules{Elicitation: cfg.ToolRequests.Elicitation, Sampling: cfg.ToolRequests.Sampling}
}

// localRequests answers requests with the person at a terminal and the
// configured model.
type localRequests struct {
	cfg   *config.Config
	asker ask.Asker
}

// Sample asks the configured model.
func (l localRequests) Sample(ctx context.Context, p interact.Prompt) (interact.Completion, error) {
	model := cmp.Or(os.Getenv("TOOLBELT_MODEL"), l.cfg.Model)
	if model == "" {
		return interact.Completion{}, fmt.Errorf("%w: no model is configured to answer requests for a completion (set model in toolbelt.yaml, or TOOLBELT_MODEL)", interact.ErrUnsupported)
	}
	client, err := ModelClient(l.cfg, model, "")
	if err != nil {
		return interact.Completion{}, fmt.Errorf("model %s: %w", model, err)
	}
	req := llm.Request{System: p.SystemPrompt, MaxTokens: cmp.Or(p.MaxTokens, interact.DefaultMaxTokens)}
	for _, m := range p.Messages {
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: []llm.Block{{Type: llm.BlockText, Text: m.Text}}})
	}
	msg, err := client.Stream(ctx, req, nil)
	if err != nil {
		return interact.Completion{}, fmt.Errorf("model %s: %w", model, err)
	}
	return interact.Completion{Role: "assistant", Text: msg.Text(), Model: cmp.Or(msg.Model, client.Model()), StopReason: msg.StopReason, By: "model " + model}, nil
}

// Elicit asks the person each field of the form as a question: a choice
// for enums and booleans, words for the rest, converted to the field's
// type. A question declined declines the form; a field left blank takes
// its default, or is left out.
func (l localRequests) Elicit(ctx context.Context, f interact.Form) (interact.Reply, error) {
	if l.asker == nil {
		return interact.Reply{}, fmt.Errorf("%w: nobody is at a terminal to fill in a form", interact.ErrUnsupported)
	}
	if f.Mode == interact.ModeURL {
		return l.elicitURL(ctx, f)
	}
	props, _ := f.Schema["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := f.Schema["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	content := map[string]any{}
	by := ""
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		field, _ := props[name].(map[string]any)
		q, labels := fieldQuestion(f.Message, name, field)
		for try := 1; ; try++ {
			if try > maxTries {
				return interact.Reply{}, fmt.Errorf("field %s of the form was not answered in %d tries", name, maxTries)
			}
			a, err := l.asker.Ask(ctx, q)
			if err != nil {
				return interact.Reply{}, err
			}
			by = a.By
			if a.Declined {
				return interact.Reply{Action: interact.Decline, By: by}, nil
			}
			v, ok, msg := fieldValue(field, labels, a)
			if msg != "" {
				q.Question = msg + "\n" + q.Question
				continue
			}
			if !ok {
				if d, has := field["default"]; has {
					v, ok = d, true
				}
			}
			if ok {
				content[name] = v
			} else if required[name] {
				q.Question = name + " is required.\n" + q.Question
				continue
			}
			break
		}
	}
	return interact.Reply{Action: interact.Accept, Content: content, By: by}, nil
}

// URLOpener is an ask.Asker that can also open an address in the
// person's browser (the CLI's terminal); a url-mode request offers to
// when the asker is one.
type URLOpener interface {
	OpenURL(url string) error
}

// The choices of a url-mode request at the terminal.
const (
	urlDone    = "Done"
	urlOpen    = "Open it in my browser"
	urlDecline = "Decline"
	urlCancel  = "Cancel"
)

// elicitURL shows the person the message and the address of a url-mode
// request and asks whether they completed what it asks there: done
// (accept), decline or cancel. The address is opened only when the person
// chooses to (and the asker can open one); a request its asker says is
// complete ends the question as accepted.
func (l localRequests) elicitURL(ctx context.Context, f interact.Form) (interact.Reply, error) {
	opener, canOpen := l.asker.(URLOpener)
	q := ask.Question{Question: f.Message + "\nGo to this address to continue (Toolbelt opens nothing unless you choose to):\n  " + f.URL + "\nChoose Done once you have completed it there."}
	q.Options = append(q.Options, ask.Option{Label: urlDone, Description: "I completed it at the address"})
	if canOpen {
		q.Options = append(q.Options, ask.Option{Label: urlOpen, Description: "open the address, then ask me again"})
	}
	q.Options = append(q.Options, ask.Option{Label: urlDecline, Description: "I will not do it"}, ask.Option{Label: urlCancel, Description: "not now"})
	actx, stop := context.WithCancel(ctx)
	defer stop()
	if f.Completed != nil {
		go func() {
			select {
			case <-f.Completed:
				stop()
			case <-actx.Done():
			}
		}()
	}
	completed := func() bool {
		select {
		case <-f.Completed: // a nil channel never is
			return true
		default:
			return false
		}
	}
	for try := 1; try <= maxTries; try++ {
		a, err := l.asker.Ask(actx, q)
		switch {
		case completed():
			return interact.Reply{Action: interact.Accept, By: "completed at the address"}, nil
		case err != nil:
			return interact.Reply{}, err
		case a.Declined:
			return interact.Reply{Action: interact.Decline, By: a.By}, nil
		}
		choice := ""
		if len(a.Chosen) > 0 {
			choice = a.Chosen[0]
		}
		switch choice {
		case urlDone:
			return interact.Reply{Action: interact.Accept, By: a.By}, nil
		case urlDecline:
			return interact.Reply{Action: interact.Decline, By: a.By}, nil
		case urlCancel:
			return interact.Reply{Action: interact.Cancel, By: a.By}, nil
		case urlOpen:
			if canOpen {
				if err := opener.OpenURL(f.URL); err != nil {
					q.Question = fmt.Sprintf("The address could not be opened (%v): open it yourself.\n", err) + q.Question
				}
				continue
			}
		}
	}
	return interact.Reply{}, fmt.Errorf("the request to go to %s was not answered in %d tries", f.URL, maxTries)
}

// maxTries is how many times a field is asked again after an answer that
// does not fit it.
const maxTries = 3

// fieldQuestion is the question for a form's field, and the values its
// options stand for (by label).
func fieldQuestion(message, name string, field map[string]any) (ask.Question, map[string]any) {
	title, _ := field["title"].(string)
	text := message + "\n" + cmp.Or(title, name)
	if d, _ := field["description"].(string); d != "" {
		text += ": " + d
	}
	if d, ok := field["default"]; ok {
		text += fmt.Sprintf(" (default %v)", d)
	}
	q := ask.Question{Question: text}
	labels := map[string]any{}
	add := func(label string, v any) {
		q.Options = append(q.Options, ask.Option{Label: label})
		labels[label] = v
	}
	options := func(s map[string]any) {
		names, _ := s["enumNames"].([]any)
		if e, ok := s["enum"].([]any); ok {
			for i, v := range e {
				label := fmt.Sprint(v)
				if i < len(names) {
					label = fmt.Sprint(names[i])
				}
				add(label, v)
			}
		}
		for _, key := range []string{"oneOf", "anyOf"} {
			if cs, ok := s[key].([]any); ok {
				for _, c := range cs {
					if c, ok := c.(map[string]any); ok {
						add(fmt.Sprint(cmp.Or(c["title"], c["const"])), c["const"])
					}
				}
			}
		}
	}
	switch field["type"] {
	case "boolean":
		add("yes", true)
		add("no", false)
	case "array":
		items, _ := field["items"].(map[string]any)
		options(items)
		q.Multiple = true
	default:
		options(field)
	}
	// A blank answer takes the default: words are allowed beside options.
	q.AllowText = len(q.Options) == 0 || field["default"] != nil
	return q, labels
}

// fieldValue converts an answer to the field's type: ok is false for a
// blank answer, msg says what was wrong with one that does not convert.
func fieldValue(field map[string]any, labels map[string]any, a ask.Answer) (v any, ok bool, msg string) {
	if field["type"] == "array" {
		var out []any
		for _, c := range a.Chosen {
			out = append(out, labels[c])
		}
		return out, len(out) > 0, ""
	}
	if len(a.Chosen) > 0 {
		return labels[a.Chosen[0]], true, ""
	}
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return nil, false, ""
	}
	switch field["type"] {
	case "integer":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, false, fmt.Sprintf("%q is not a whole number.", text)
		}
		return n, true, ""
	case "number":
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, false, fmt.Sprintf("%q is not a number.", text)
		}
		return n, true, ""
	case "boolean":
		return nil, false, "answer yes or no."
	}
	if len(labels) > 0 {
		return nil, false, fmt.Sprintf("%q is not one of the options.", text)
	}
	return text, true, ""
}
