// Package ask is the ask_user tool: the model asks the person it works for
// a question mid-task, with choices or for a free answer, and gets the
// answer back as the call's result.
//
// Who answers is the front door's business: it sets an [Asker] on the tool
// context ([AskerService]) — the terminal in toolbelt chat and run, the MCP
// client by elicitation. Where none is set, nobody can answer and the tool
// is unavailable, with that reason. An Asker that learns only when asked
// that nobody can answer (an MCP client without elicitation) returns
// [ErrNobodyToAsk], and the call says so at once.
package ask

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Name is the tool's name.
const Name = "ask_user"

// Question is what the model asks: its arguments.
type Question struct {
	Question string `json:"question" jsonschema:"The question, in one or a few sentences: what you need to know and why." minLength:"1"`
	// Options are the choices offered, in order.
	Options []Option `json:"options,omitempty" jsonschema:"Choices to offer, each with a short label and an optional description. Leave out for a free answer."`
	// Multiple lets the person choose several options.
	Multiple bool `json:"multiple,omitempty" jsonschema:"Let the person choose several options."`
	// AllowText lets the person answer in their own words besides (or
	// instead of) the options. Without options the answer is always text.
	AllowText bool `json:"allowText,omitempty" jsonschema:"Let the person answer in their own words instead of choosing."`
}

// Option is one choice.
type Option struct {
	Label       string `json:"label" jsonschema:"The choice, in a few words." minLength:"1"`
	Description string `json:"description,omitempty" jsonschema:"What choosing it means."`
}

// FreeText reports whether the person may answer in words: when the model
// allows it, or offers no options.
func (q Question) FreeText() bool { return q.AllowText || len(q.Options) == 0 }

// Labels returns the options' labels, in order.
func (q Question) Labels() []string {
	out := make([]string, len(q.Options))
	for i, o := range q.Options {
		out[i] = o.Label
	}
	return out
}

// Answer is what the person said.
type Answer struct {
	// Chosen are the labels of the options chosen, in the order offered.
	Chosen []string `json:"chosen,omitempty"`
	// Text is the person's own words.
	Text string `json:"text,omitempty"`
	// Declined says the person chose not to answer.
	Declined bool `json:"declined,omitempty"`
	// By says who answered ("terminal (ada)", "mcp client claude-code").
	By string `json:"by"`
}

// Asker puts a question to a person and returns the answer. Ask returns
// when the person answers, or when ctx ends (with ctx's error).
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// AskerService is the key of the Asker a tool context carries.
var AskerService = tool.NewService[Asker]()

// ErrNobodyToAsk matches the error of an Asker that finds, when asked, that
// nobody can answer; its message says why.
var ErrNobodyToAsk = errors.New("nobody can answer questions here")

// ErrHandedOver matches the error of an Asker that handed the question to
// a client that asks its user and makes the call again with the answer (an
// MCP client, by elicitation): this call ends without one.
var ErrHandedOver = errors.New("the question was handed to the client to ask its user")

// Settings are the tool's settings, tools.ask_user in toolbelt.yaml.
type Settings struct {
	// Timeout is how long a question waits for its answer ("5m", the
	// default; at most MaxTimeout).
	Timeout string `json:"timeout,omitempty"`
}

// DefaultTimeout is how long a question waits for its answer unless
// tools.ask_user.timeout says otherwise; MaxTimeout is the longest it may.
const (
	DefaultTimeout = 5 * time.Minute
	MaxTimeout     = time.Hour
)

// CheckSettings refuses a timeout that is not a positive duration of at
// most MaxTimeout.
func (s *Settings) CheckSettings() error {
	_, err := s.timeout()
	return err
}

func (s *Settings) timeout() (time.Duration, error) {
	if s.Timeout == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(s.Timeout)
	if err != nil || d <= 0 || d > MaxTimeout {
		return 0, &tool.SettingError{Key: Name + ".timeout", Msg: fmt.Sprintf("is %q: give a duration above 0 and at most %s, such as 5m", s.Timeout, MaxTimeout)}
	}
	return d, nil
}

const description = "Ask the person you work for a question and wait for the answer: to choose between approaches, " +
	"to confirm what they meant, or to get something only they know. Offer options when the answer is one of a few " +
	"choices (multiple to allow several, allowText to also allow their own words); leave options out for a free answer. " +
	"Ask only what you cannot find out yourself. If nobody answers in time, go on without the answer or stop and say what you need."

// Register adds ask_user to reg.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(factory, tool.Meta{
		ID: Name, Label: "Ask the User", Description: description, ReadOnly: true, Source: tool.SourceCore,
		// The question's own timeout (Settings) ends the wait first.
		Timeout: MaxTimeout + time.Minute, Settings: &Settings{}, SettingsKey: Name,
	})
}

// factory makes ask_user for a context whose front door can ask someone.
func factory(tc *tool.Context) (*tool.Tool, error) {
	asker, ok := AskerService.Get(tc)
	if !ok {
		return nil, &tool.NotHere{Reason: "nobody can answer questions here: ask_user needs a person at a terminal (toolbelt chat, run or call) or an MCP client that supports elicitation"}
	}
	var s Settings
	if err := tc.Config.Decode(Name, &s); err != nil {
		return nil, err
	}
	wait, err := s.timeout()
	if err != nil {
		return nil, err
	}
	t, err := tool.New(Name, description, func(ctx context.Context, q Question, inv tool.Invocation) (tool.Result, error) {
		return ask(ctx, asker, q, wait)
	})
	return &t, err
}

// ask puts q to asker, waiting at most wait for the answer.
func ask(ctx context.Context, asker Asker, q Question, wait time.Duration) (tool.Result, error) {
	if err := check(q); err != nil {
		return tool.Result{}, err
	}
	actx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	a, err := asker.Ask(actx, q)
	switch {
	case errors.Is(err, ErrHandedOver):
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: err.Error() + "; the answer comes with the call made again.", Origin: tool.OwnWords()}},
			Details: Details{Question: q.Question, HandedOver: true}}, nil
	case errors.Is(err, ErrNobodyToAsk):
		return tool.Errorf("Nobody can answer your question here: %v. Go on without the answer, or stop and say what you need.", err), nil
	case err != nil && ctx.Err() == nil && actx.Err() != nil:
		return unanswered(q, wait), nil
	case err != nil:
		return tool.Result{}, err
	}
	return answered(q, a), nil
}

// check refuses options a person could not tell apart.
func check(q Question) error {
	seen := map[string]bool{}
	for _, o := range q.Options {
		k := strings.ToLower(strings.TrimSpace(o.Label))
		if seen[k] {
			return tool.InputErrorf("option %q is offered twice: give each option its own label", o.Label)
		}
		seen[k] = true
	}
	return nil
}

// Details are the result's details, and what the audit keeps of the call.
type Details struct {
	Question string `json:"question"`
	Answer   Answer `json:"answer"`
	// Answered is false when nobody answered in time.
	Answered bool `json:"answered"`
	// HandedOver says the question went to a client that calls again with
	// the answer (see ErrHandedOver).
	HandedOver bool `json:"handedOver,omitempty"`
}

// AuditNote says what the person answered, for the call's audit record.
func (d Details) AuditNote() string {
	switch {
	case d.HandedOver:
		return "handed to the client to ask its user"
	case !d.Answered:
		return "nobody answered"
	case d.Answer.Declined:
		return "declined to answer (" + d.Answer.By + ")"
	}
	var parts []string
	if len(d.Answer.Chosen) > 0 {
		parts = append(parts, "chose "+strings.Join(quoted(d.Answer.Chosen), ", "))
	}
	if d.Answer.Text != "" {
		parts = append(parts, "answered "+fmt.Sprintf("%q", d.Answer.Text))
	}
	return strings.Join(parts, " and ") + " (" + d.Answer.By + ")"
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// answered is the result of an answered question: the answer in words for
// the model, structured in the details.
func answered(q Question, a Answer) tool.Result {
	d := Details{Question: q.Question, Answer: a, Answered: true}
	var text string
	switch {
	case a.Declined:
		text = "The person declined to answer. Do not ask the same again; go on without it or ask something else."
	default:
		text = "The person " + strings.TrimSuffix(d.AuditNote(), " ("+a.By+")") + "."
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text, Origin: tool.OwnWords()}}, Details: d}
}

// unanswered is the result of a question nobody answered in time.
func unanswered(q Question, wait time.Duration) tool.Result {
	text := fmt.Sprintf("Nobody answered your question within %s. Go on without the answer if you can, or stop and say what you need to know.", wait)
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: text, Origin: tool.OwnWords()}}, Details: Details{Question: q.Question}}
}
