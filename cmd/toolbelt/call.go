package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

type callCmd struct {
	Tool           string        `arg:"" optional:"" help:"Tool name (id or alias)."`
	Args           string        `help:"Arguments as a JSON object. Without --args or --args-file they are read from stdin when it is not a terminal." placeholder:"JSON"`
	ArgsFile       string        `help:"Read the arguments from FILE ('-' for stdin)." placeholder:"FILE"`
	Batch          string        `help:"Run the calls in FILE ('-' for stdin), a JSON array of {\"id\",\"name\",\"arguments\"}, as one model turn; prints the result messages as JSON." placeholder:"FILE"`
	ID             string        `help:"Tool-call id (default: a new one, unique across processes and time; an id you choose is yours to keep unique)."`
	JSON           bool          `name:"json" help:"Print the result message as JSON."`
	Timeout        time.Duration `help:"Time limit for the call, e.g. 2s or 5m (default: the tool's own, else 5m; at most 1h)."`
	MaxResultChars int           `help:"Cap the result's text at N characters (default 40000); the rest is kept and read with result_read." placeholder:"N"`
	workspaceFlags
	runFlags
	modeFlags
}

func (c *callCmd) Run(e *env) error {
	switch {
	case c.Batch != "" && (c.Tool != "" || c.Args != "" || c.ArgsFile != ""):
		return fmt.Errorf("--batch takes its calls from FILE: do not also give a tool, --args or --args-file")
	case c.Batch == "" && c.Tool == "":
		return fmt.Errorf("name the tool to call, or give --batch FILE")
	case c.Args != "" && c.ArgsFile != "":
		return fmt.Errorf("give the arguments once: --args or --args-file, not both")
	case c.Timeout < 0 || c.MaxResultChars < 0:
		return fmt.Errorf("--timeout and --max-result-chars must not be negative")
	}
	tc, err := c.runContext(e)
	if err != nil {
		return err
	}
	ctx, stop := e.interruptible()
	defer stop()
	// What a call leaves running is stopped when toolbelt call exits: its
	// tools must not promise that it goes on in the background.
	ctx = tool.WithForeground(ctx)
	runner, closer, err := e.runner(tc, c.runFlags, invoke.Config{MaxResultChars: c.MaxResultChars})
	if err != nil {
		return err
	}
	defer closer.Close()
	var opts []invoke.CallOption
	if c.Timeout > 0 {
		opts = append(opts, invoke.Timeout(c.Timeout))
	}
	if c.DryRun {
		opts = append(opts, invoke.DryRun())
	}
	term := terminalOf(closer)
	if c.Batch != "" {
		return c.runBatch(ctx, e, runner, opts, term)
	}
	args, err := c.arguments(e)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(args)) > 0 && !json.Valid(args) {
		return fmt.Errorf("arguments are not valid JSON: %v; give a JSON object, such as --args '{\"path\": \"notes.txt\"}'", invoke.SyntaxError(args))
	}
	id := c.ID
	if id == "" {
		id = tool.NewCallID("cli")
	}
	// On a terminal, a call that takes a while shows a spinner on stderr,
	// with the tool's latest progress.
	spin := e.startSpinner("Running " + c.Tool + "…")
	if term != nil {
		term.spin = spin
	}
	opts = append(opts, invoke.OnUpdate(func(r tool.Result) {
		for _, b := range r.Content {
			if b.Type == tool.TextContent && strings.TrimSpace(b.Text) != "" {
				spin.Set(c.Tool + ": " + b.Text)
			}
		}
	}))
	msg := runner.Run(ctx, tool.Call{ID: id, Name: c.Tool, Arguments: args}, opts...)
	spin.Stop()
	if c.JSON {
		if err := writeJSON(e.stdout, msg); err != nil {
			return err
		}
	} else {
		if err := printContent(e, msg); err != nil {
			return err
		}
		c.explain(ctx, e, tc, msg, term != nil || c.Yes)
	}
	if msg.IsError {
		return exitCode(exitToolError)
	}
	return nil
}

// explain adds, on stderr, what a person needs next: the call id to undo
// the file changes the call made, or how to approve a call that was
// blocked because nobody could be asked.
func (c *callCmd) explain(ctx context.Context, e *env, tc *tool.Context, msg tool.ResultMessage, canAsk bool) {
	if j, ok := tc.Journal.(*store.Journal); ok && !c.DryRun {
		if changes, err := j.Changes(ctx, msg.ToolCallID); err == nil && len(changes) > 0 {
			what := "a file"
			if len(changes) > 1 {
				what = fmt.Sprintf("files (%d changes)", len(changes))
			}
			fmt.Fprintf(e.stderr, "toolbelt: call %s changed %s; 'toolbelt undo %s' takes the changes back.\n", msg.ToolCallID, what, msg.ToolCallID)
		}
	}
	if !msg.IsError || canAsk || len(msg.Content) == 0 {
		return
	}
	var env tool.Envelope
	if json.Unmarshal([]byte(msg.Content[0].Text), &env) == nil && env.Status == "blocked" && strings.Contains(env.Reason, "no one is available to approve it") {
		fmt.Fprintln(e.stderr, "toolbelt: there is no terminal to ask for approval on, and no console is open. To run this call, approve it with --yes (the audit log records it as approved by --yes), run toolbelt from a terminal, approve it in the console of toolbelt serve, or change what needs approval in toolbelt.yaml (confirm.medium, tools.ask; see docs/config.md).")
	}
}

// arguments returns the call's arguments from --args, --args-file or stdin.
func (c *callCmd) arguments(e *env) (json.RawMessage, error) {
	switch {
	case c.Args != "":
		return json.RawMessage(c.Args), nil
	case c.ArgsFile != "":
		return readInput(e, c.ArgsFile)
	case isTerminal(e.stdin):
		return nil, nil
	}
	b, err := io.ReadAll(e.stdin)
	if err != nil {
		return nil, fmt.Errorf("reading arguments from stdin: %w", err)
	}
	return b, nil
}

func (c *callCmd) runBatch(ctx context.Context, e *env, runner *invoke.Runner, opts []invoke.CallOption, term *terminal) error {
	b, err := readInput(e, c.Batch)
	if err != nil {
		return err
	}
	var calls []tool.Call
	if err := json.Unmarshal(b, &calls); err != nil {
		return fmt.Errorf("batch %s: want a JSON array of {\"id\",\"name\",\"arguments\"}: %w", c.Batch, err)
	}
	seen := map[string]bool{}
	for i := range calls {
		if strings.TrimSpace(calls[i].Name) == "" {
			return fmt.Errorf("batch %s: call %d has no name", c.Batch, i)
		}
		if calls[i].ID == "" {
			calls[i].ID = tool.NewCallID("cli")
		}
		if seen[calls[i].ID] {
			return fmt.Errorf("batch %s: call id %q is used twice", c.Batch, calls[i].ID)
		}
		seen[calls[i].ID] = true
	}
	spin := e.startSpinner(fmt.Sprintf("Running %d calls…", len(calls)))
	if term != nil {
		term.spin = spin
	}
	msgs := runner.RunBatch(ctx, calls, opts...)
	spin.Stop()
	if err := writeJSON(e.stdout, msgs); err != nil {
		return err
	}
	for _, m := range msgs {
		if m.IsError {
			return exitCode(exitToolError)
		}
	}
	return nil
}

// readInput reads a file, or stdin for "-".
func readInput(e *env, name string) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// printContent prints a result for people: text blocks as they are, images
// and audio as a line saying what they are. An error result goes to stderr.
func printContent(e *env, msg tool.ResultMessage) error {
	w := e.stdout
	if msg.IsError {
		w = e.stderr
	}
	for _, c := range msg.Content {
		var err error
		switch c.Type {
		case tool.ImageContent, tool.AudioContent:
			_, err = fmt.Fprintf(w, "[%s %s, %d bytes base64]\n", c.Type, termsafe.Line(c.MIMEType), len(c.Data))
		case tool.ResourceContent:
			_, err = fmt.Fprintln(w, termsafe.Text(c.Describe()))
		default:
			text := c.Text
			if env, ok := tool.ParseEnvelope(text); ok {
				text = envelopeForPeople(env)
			}
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			// What a tool returns comes from outside: its escapes are shown.
			_, err = io.WriteString(w, termsafe.Text(text))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// envelopeForPeople says what an envelope (the JSON a model reads when a
// call did not run normally) means, in the words it carries; --json shows
// the envelope itself.
func envelopeForPeople(env tool.Envelope) string {
	switch env.Status {
	case "blocked":
		return "Blocked: " + env.Reason
	case "pending":
		return env.Message
	}
	if env.Suggestion != "" {
		return env.Error + "\nSuggestion: " + env.Suggestion
	}
	return env.Error
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
