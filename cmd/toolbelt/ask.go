package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// Ask puts the model's question (ask_user) to the person at the terminal,
// as Confirm asks for approval: one question at a time, the spinner
// paused, every line the model wrote shown with its escapes visible, and
// the read stopped when ctx ends (the question's timeout). The person
// answers with the numbers of options, their own words where allowed, or
// an empty line to decline.
func (t *terminal) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	defer t.hold(ctx)()
	fmt.Fprint(t.tty, t.describeQuestion(q))
	prompt := t.col.bold(answerPrompt(q))
	for range 3 {
		line, err := t.readLine(ctx, prompt)
		if err != nil {
			return ask.Answer{}, err
		}
		if line == "" {
			return ask.Answer{Declined: true, By: t.who}, nil
		}
		if a, ok := parseAnswer(q, line); ok {
			a.By = t.who
			return a, nil
		}
		fmt.Fprintf(t.tty, "Please answer %s.\n", strings.TrimSuffix(answerPrompt(q), ": "))
	}
	return ask.Answer{Declined: true, By: t.who}, nil
}

// describeQuestion renders the question and its numbered options.
func (t *terminal) describeQuestion(q ask.Question) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", t.col.bold("Question from the model:"))
	for line := range strings.Lines(q.Question) {
		fmt.Fprintf(&b, "  %s\n", termsafe.Line(strings.TrimSuffix(line, "\n")))
	}
	for i, o := range q.Options {
		fmt.Fprintf(&b, "  %d. %s", i+1, termsafe.Line(o.Label))
		if o.Description != "" {
			fmt.Fprintf(&b, " — %s", termsafe.Line(o.Description))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// answerPrompt says how to answer q.
func answerPrompt(q ask.Question) string {
	switch {
	case len(q.Options) == 0:
		return "Your answer (empty to decline): "
	case q.Multiple && q.AllowText:
		return "Numbers separated by commas, or your own answer (empty to decline): "
	case q.Multiple:
		return "Numbers separated by commas (empty to decline): "
	case q.AllowText:
		return "A number, or your own answer (empty to decline): "
	}
	return "A number (empty to decline): "
}

// parseAnswer reads line as the numbers of options (several when q allows
// it), else as the person's own words when q allows them.
func parseAnswer(q ask.Question, line string) (ask.Answer, bool) {
	if chosen, ok := optionNumbers(q, line); ok {
		return ask.Answer{Chosen: chosen}, true
	}
	if q.FreeText() {
		return ask.Answer{Text: line}, true
	}
	return ask.Answer{}, false
}

// optionNumbers reads line as option numbers ("2", "1, 3"), returning the
// chosen labels in the order offered.
func optionNumbers(q ask.Question, line string) ([]string, bool) {
	if len(q.Options) == 0 {
		return nil, false
	}
	fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 || len(fields) > 1 && !q.Multiple {
		return nil, false
	}
	picked := make([]bool, len(q.Options))
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(q.Options) {
			return nil, false
		}
		picked[n-1] = true
	}
	var chosen []string
	for i, p := range picked {
		if p {
			chosen = append(chosen, q.Options[i].Label)
		}
	}
	return chosen, true
}
