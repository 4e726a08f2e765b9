package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
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
	if c.Batch != "" {
		return c.runBatch(ctx, e, runner, opts)
	}
	args, err := c.arguments(e)
	if err != nil {
		return err
	}
	id := c.ID
	if id == "" {
		id = tool.NewCallID("cli")
	}
	msg := runner.Run(ctx, tool.Call{ID: id, Name: c.Tool, Arguments: args}, opts...)
	if c.JSON {
		if err := writeJSON(e.stdout, msg); err != nil {
			return err
		}
	} else if err := printContent(e, msg); err != nil {
		return err
	}
	if msg.IsError {
		return exitCode(exitToolError)
	}
	return nil
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

func (c *callCmd) runBatch(ctx context.Context, e *env, runner *invoke.Runner, opts []invoke.CallOption) error {
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
	msgs := runner.RunBatch(ctx, calls, opts...)
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
// as a line saying what they are. An error result goes to stderr.
func printContent(e *env, msg tool.ResultMessage) error {
	w := e.stdout
	if msg.IsError {
		w = e.stderr
	}
	for _, c := range msg.Content {
		var err error
		switch c.Type {
		case tool.ImageContent:
			_, err = fmt.Fprintf(w, "[image %s, %d bytes base64]\n", c.MIMEType, len(c.Data))
		default:
			text := c.Text
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			_, err = io.WriteString(w, text)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
