package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

type sessionsRewindCmd struct {
	Key          string `arg:"" help:"The session's key, or an MCP session's (the sessionKey of its audit records): its calls are its turns, and only their files are rewound."`
	To           int    `help:"The turn to go back to: it and the turns after it are taken back (without --to, the turns are listed)." placeholder:"N"`
	Files        bool   `help:"Take back only the files the turns' calls changed, not the conversation."`
	Conversation bool   `help:"Take back only the conversation, not the files."`
	JSON         bool   `name:"json" help:"Print the turns, or what the rewind did, as JSON."`
	workspaceFlags
}

// Run lists the session's turns, or takes the session back to before turn
// --to: the files its calls changed (undone together; refused, with
// nothing changed, when one changed since by someone else) and its
// conversation. The rewind is recorded in the audit log.
func (c *sessionsRewindCmd) Run(e *env) error {
	ws, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	ctx := context.Background()
	info, err := st.Sessions().Info(ctx, c.Key)
	if errors.Is(err, store.ErrNoSession) {
		return c.rewindCalls(e, err)
	}
	if err != nil {
		return fmt.Errorf("%w; toolbelt sessions lists them", err)
	}
	transcript, err := host.ReadTranscript(ctx, st.Sessions(), c.Key)
	if err != nil {
		return err
	}
	ws = cmp.Or(info.Workspace, ws)
	if c.To == 0 {
		return c.list(e, ws, toolbelt.Turns(transcript))
	}
	if info.Status == store.SessionRunning {
		return fmt.Errorf("session %s is running: it was not rewound. Rewind it once its run has ended", termsafe.Line(c.Key))
	}
	both := c.Files == c.Conversation
	rep, err := e.tb.Rewind(ctx, toolbelt.Rewind{
		Session: c.Key, Kept: true, Transcript: transcript, To: c.To, Files: both || c.Files, Conversation: both || c.Conversation,
		Workspace: ws, Caller: tool.Identity{Channel: "cli", Owner: true},
	})
	if err != nil {
		return rewindFailed(e, err)
	}
	if c.JSON {
		return writeJSON(e.stdout, rep)
	}
	printRewind(e.stdout, e.stderr, rep, both || c.Conversation)
	return nil
}

// list prints turns, with the files their calls changed in ws.
func (c *sessionsRewindCmd) list(e *env, ws string, turns []toolbelt.Turn) error {
	if err := e.tb.TurnFiles(context.Background(), ws, turns); err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, turns)
	}
	return printTurns(e.stdout, turns)
}

// rewindCalls lists or rewinds a session the store does not keep: an MCP
// session, whose calls, each a turn, the audit log has. Only their files
// are taken back (the client keeps the conversation). noSession is the
// store's answer, for a key no MCP call used either.
func (c *sessionsRewindCmd) rewindCalls(e *env, noSession error) error {
	ctx := context.Background()
	turns, ws, err := e.tb.CallTurns(ctx, c.Key)
	if err != nil {
		return err
	}
	if len(turns) == 0 {
		return fmt.Errorf("%w; toolbelt sessions lists them, toolbelt audit --json names the sessionKey of MCP sessions", noSession)
	}
	if c.To == 0 {
		return c.list(e, ws, turns)
	}
	rep, err := e.tb.Rewind(ctx, toolbelt.Rewind{
		Session: c.Key, Turns: turns, To: c.To, Files: !c.Conversation, Conversation: c.Conversation,
		Workspace: ws, Caller: tool.Identity{Channel: "cli", Owner: true},
	})
	if err != nil {
		return rewindFailed(e, err)
	}
	if c.JSON {
		return writeJSON(e.stdout, rep)
	}
	printRewind(e.stdout, e.stderr, rep, false)
	return nil
}

// rewindFailed says why a rewind changed nothing: files changed since by
// someone else (exit code 1, as an undo's conflict), or a usage mistake.
func rewindFailed(e *env, err error) error {
	var conflict *undo.ConflictError
	if errors.As(err, &conflict) {
		fmt.Fprintln(e.stderr, termsafe.Text("toolbelt: nothing was rewound: "+err.Error()))
		return exitCode(exitToolError)
	}
	return err
}

// printTurns lists turns for people: number, time, the prompt's first
// words, the files their calls changed and the shell commands they ran.
func printTurns(w io.Writer, turns []toolbelt.Turn) error {
	if len(turns) == 0 {
		_, err := fmt.Fprintln(w, "No turns yet.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TURN\tTIME\tPROMPT\tFILES CHANGED")
	for _, t := range turns {
		files := orDash(strings.Join(t.Files, ", "))
		if len(t.Shell) > 0 {
			files += fmt.Sprintf(" (+ %d shell command(s), not covered)", len(t.Shell))
		}
		tableRow(tw, strconv.Itoa(t.N), t.Time.Local().Format(time.TimeOnly), clipLine(t.Prompt, 50), files)
	}
	return tw.Flush()
}

// printRewind says what a rewind did: the files put back (on out), the
// conversation kept, and the shell commands whose changes stay.
func printRewind(out, errOut io.Writer, rep toolbelt.RewindReport, conversation bool) {
	if len(rep.Undo.Files) > 0 {
		fmt.Fprintln(out, termsafe.Text(rep.Undo.String()))
	} else {
		fmt.Fprintln(out, "No file to put back: the turns changed none through the file tools.")
	}
	if conversation {
		fmt.Fprintf(out, "Rewound the conversation to before turn %d (%d message(s) kept).\n", rep.To, rep.Keep)
	}
	if len(rep.NotCovered) > 0 {
		fmt.Fprintln(errOut, "toolbelt: not covered by the rewind — what these shell commands changed stays:")
		for _, c := range rep.NotCovered {
			fmt.Fprintln(errOut, "  "+clipLine(c, 200))
		}
	}
}

// rewindArgs reads chat's /rewind N [files|conversation|both].
func rewindArgs(arg string) (to int, files, conversation bool, err error) {
	f := strings.Fields(arg)
	if len(f) == 0 || len(f) > 2 {
		return 0, false, false, errors.New("use /rewind to list the turns, /rewind N [files|conversation|both] to go back to before turn N")
	}
	if to, err = strconv.Atoi(f[0]); err != nil || to < 1 {
		return 0, false, false, fmt.Errorf("/rewind %s: the turn is a number from 1 (/rewind lists them)", f[0])
	}
	what := "both"
	if len(f) == 2 {
		what = f[1]
	}
	switch what {
	case "both":
		return to, true, true, nil
	case "files":
		return to, true, false, nil
	case "conversation":
		return to, false, true, nil
	}
	return 0, false, false, fmt.Errorf("/rewind %s: say files, conversation or both", arg)
}

// rewind is chat's /rewind: with no argument it lists the turns of the
// chat's session (spec, whose conversation is transcript); with N it takes
// the session back to before turn N. It returns how many messages of the
// conversation to go on with, and true, when the conversation was rewound.
func (c *chatCmd) rewind(e *env, ar *agentRun, spec host.Spec, transcript []llm.Message, arg string) (int, bool) {
	ctx := context.Background()
	if strings.TrimSpace(arg) == "" {
		turns := toolbelt.Turns(transcript)
		if err := e.tb.TurnFiles(ctx, ar.tc.Workspace, turns); err != nil {
			printError(e.stderr, err)
			return 0, false
		}
		if err := printTurns(e.stdout, turns); err != nil {
			printError(e.stderr, err)
		}
		return 0, false
	}
	to, files, conversation, err := rewindArgs(arg)
	if err != nil {
		printError(e.stderr, err)
		return 0, false
	}
	rep, err := e.tb.Rewind(ctx, toolbelt.Rewind{
		Session: spec.Key, Kept: !spec.Transient, Transcript: transcript, To: to, Files: files, Conversation: conversation,
		Workspace: ar.tc.Workspace, Caller: ar.tc.Identity,
	})
	if err != nil {
		if err := rewindFailed(e, err); !isExit(err) {
			printError(e.stderr, err)
		}
		return 0, false
	}
	printRewind(e.stdout, e.stderr, rep, conversation)
	return rep.Keep, conversation
}
