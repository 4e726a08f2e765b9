package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

type chatCmd struct {
	agentFlags
}

const chatHelp = `Type a message and press Enter. Commands:
  /model PROVIDER/MODEL  switch the model (the conversation stays)
  /tools                 list the tools the model can call
  /mode [NAME]           show the permission mode, or switch to NAME
  /undo                  take back the file changes of the last turn's calls
  /rewind [N [WHAT]]     list the turns, or go back to before turn N: its
                         files and conversation and those after it (WHAT:
                         files, conversation or both, the default)
  /help                  this text
  /quit                  leave (so does end of input)
At a terminal, a line typed while a turn runs steers it: the tools still
running stop, and the model reads the line next.
Ctrl-C stops the current turn; at the prompt, it leaves (exit code 130).`

// Run is an interactive session: each line is a message; the answer is
// streamed to stdout as it arrives, the calls shown on stderr as they run.
// The conversation runs in a session host, as toolbelt run's does: a turn
// ends when the session is idle, sub-agents it spawned included (their
// answers come back as follow-ups, and the model answers them).
func (c *chatCmd) Run(e *env) error {
	// With async tools the chat works their jobs; each outcome reaches the
	// conversation as it finishes.
	e.serving.workJobs = true
	// At a terminal, a line typed while a turn runs steers it; the
	// questions asked at the terminal meanwhile read their answers from the
	// same lines, first.
	src, steer := newLineSource(e.stdin), isTerminal(e.stdin)
	if steer {
		e.lines = src
	}
	ar, err := c.setup(e)
	if err != nil {
		return err
	}
	defer ar.closer.Close()
	a, h := ar.agent, ar.host
	h.view.spins = true
	defer h.Close()
	key := c.Session
	if key == "" && c.Agent != "" {
		// An agent's chat is kept as a session of its own, to list and resume.
		key = store.SessionKey(c.Agent, "cli", randid.New("", 6))
		fmt.Fprintf(e.stderr, "toolbelt: session %s (resume it with --session %s)\n", key, key)
	}
	spec, history, err := ar.ownSession(context.Background(), e, key, "cli:chat")
	if err != nil {
		return err
	}
	key = spec.Key
	started := false
	if q := e.tb.Jobs(); q != nil {
		jobsCtx, stopJobs := context.WithCancel(context.Background())
		followed := make(chan struct{})
		go func() {
			defer close(followed)
			followJobs(jobsCtx, h, q, key, time.Now())
		}()
		// Before the host closes: no outcome is delivered to a closed one.
		defer func() { stopJobs(); <-followed }()
	}
	// Ctrl-C cancels the turn that runs; at the prompt, it ends the chat.
	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	atPrompt := make(chan struct{}, 1)
	go func() {
		for range sigs {
			mu.Lock()
			if cancelTurn != nil {
				cancelTurn()
			} else {
				select {
				case atPrompt <- struct{}{}:
				default:
				}
			}
			mu.Unlock()
		}
	}()
	// lastCalls are the calls of the last turn, for /undo; runs started by
	// a finished job's outcome add to them from the host's goroutines.
	var lastCalls []string
	a.OnEvent = func(ev agent.Event) {
		switch ev.Type {
		case agent.EventMessageUpdate:
			if ev.Delta.Type == llm.EventTextDelta {
				// The model's text, its escapes visible.
				fmt.Fprint(e.stdout, termsafe.Text(ev.Delta.Delta))
			}
		case agent.EventMessageEnd:
			if ev.Message.Role == llm.RoleAssistant && ev.Message.Text() != "" {
				fmt.Fprintln(e.stdout)
			}
		case agent.EventToolStart:
			mu.Lock()
			lastCalls = append(lastCalls, ev.CallID)
			mu.Unlock()
		}
		h.view.onCallEvent("", ev)
	}
	fmt.Fprintf(e.stderr, "toolbelt chat with %s — /help for commands.\n", ar.model)
	for {
		fmt.Fprint(e.stderr, "> ")
		var next promptLine
		lines, _ := src.ask()
		select {
		case next = <-lines:
		case <-atPrompt:
			fmt.Fprintln(e.stderr)
			return exitCode(exitInterrupted)
		}
		if next.end {
			fmt.Fprintln(e.stderr)
			return next.err
		}
		line := strings.TrimSpace(next.text)
		switch cmd, arg, _ := strings.Cut(line, " "); {
		case line == "":
			continue
		case cmd == "/quit" || cmd == "/exit":
			return nil
		case cmd == "/help":
			fmt.Fprintln(e.stdout, chatHelp)
			continue
		case cmd == "/tools":
			for _, t := range a.Runner.Tools(nil) {
				fmt.Fprintf(e.stdout, "%-16s %s\n", termsafe.Line(t.Name), firstSentence(t.Description))
			}
			continue
		case cmd == "/model":
			model := strings.TrimSpace(arg)
			client, err := toolbelt.ModelClient(ar.cfg, model, c.BaseURL)
			if err != nil {
				printError(e.stderr, err)
				continue
			}
			compaction, err := agentCompaction(ar.cfg, ar.cfg.Agents[c.Agent], model, model, c.BaseURL)
			if err != nil {
				printError(e.stderr, err)
				continue
			}
			a.Client, a.Compaction, ar.model = client, compaction, model
			fmt.Fprintf(e.stderr, "model: %s\n", ar.model)
			continue
		case cmd == "/mode":
			e.switchMode(c.Agent, arg)
			continue
		case cmd == "/undo":
			mu.Lock()
			calls := slices.Clone(lastCalls)
			mu.Unlock()
			c.undoCalls(e, ar, calls)
			continue
		case cmd == "/rewind":
			transcript := history
			if started {
				transcript, _ = h.Result(key)
			}
			if keep, ok := c.rewind(e, ar, spec, transcript, arg); ok {
				if !started {
					history = history[:keep]
				} else if err := h.Truncate(key, keep); err != nil {
					printError(e.stderr, err)
				}
				mu.Lock()
				lastCalls = nil
				mu.Unlock()
			}
			continue
		case strings.HasPrefix(cmd, "/"):
			fmt.Fprintf(e.stderr, "toolbelt: unknown command %s; /help lists them\n", cmd)
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		lastCalls, cancelTurn = nil, cancel
		mu.Unlock()
		msg := llm.UserText(line)
		if started {
			err = h.Deliver(ctx, key, msg)
		} else {
			spec.Model = ar.model // as /model left it
			err = h.StartSession(ctx, spec, history, msg)
			started = err == nil
		}
		if err == nil && waitTurn(ctx, e, h, a, key, src, steer) != nil {
			h.Abort()
			_ = h.Wait(context.Background())
		}
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		cancel()
		if err == nil {
			_, err = h.Result(key)
		}
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(e.stderr, "\n(stopped)")
		default:
			printError(e.stderr, err)
		}
	}
}

// waitTurn waits until the turn ends. With steer, each line typed
// meanwhile goes to the agent a as a steering message (Agent.Steer): the
// tools still running stop and the model reads it next. A message that
// came as the turn was ending starts the next turn of session key.
func waitTurn(ctx context.Context, e *env, h *runHost, a *agent.Agent, key string, src *lineSource, steer bool) error {
	for {
		if err := waitSteering(ctx, e, h, a, src, steer); err != nil {
			return err
		}
		more := a.Drain()
		if len(more) == 0 {
			return nil
		}
		for _, m := range more {
			if err := h.Deliver(ctx, key, m); err != nil {
				return err
			}
		}
	}
}

// waitSteering waits until h is idle; with steer, the lines typed
// meanwhile steer a, and the /commands typed meanwhile are the prompt's
// first lines once it is back.
func waitSteering(ctx context.Context, e *env, h *runHost, a *agent.Agent, src *lineSource, steer bool) error {
	if !steer {
		return h.Wait(ctx)
	}
	var commands []promptLine
	defer func() { src.putBack(commands...) }()
	done := make(chan error, 1)
	go func() { done <- h.Wait(ctx) }()
	for {
		lines, leave := src.ask()
		select {
		case err := <-done:
			leave()
			return err
		case l := <-lines:
			text := strings.TrimSpace(l.text)
			switch {
			case l.end:
				return <-done
			case text == "":
			case strings.HasPrefix(text, "/"):
				commands = append(commands, l)
				fmt.Fprintf(e.stderr, "toolbelt: %s waits for the prompt: it runs when the turn ends (Ctrl-C stops the turn)\n", termsafe.Line(text))
			default:
				a.Steer(llm.UserText(text))
				fmt.Fprintln(e.stderr, "(steering: the running tools stop; the model reads your message next)")
			}
		}
	}
}

// undoCalls takes back the file changes of calls, newest first, in the
// chat's workspace; each undo of a call that changed files is recorded in
// the audit log, as toolbelt undo records its own.
func (c *chatCmd) undoCalls(e *env, ar *agentRun, calls []string) {
	ctx := context.Background()
	ws := tool.ResolveDir(ar.tc.Workspace)
	undone := 0
	for i := len(calls) - 1; i >= 0; i-- {
		started := time.Now()
		report, err := e.tb.Undo(ctx, ws, calls[i])
		var conflict *undo.ConflictError
		outcome, size := "", 0
		switch {
		case errors.Is(err, undo.ErrNothingToUndo):
			continue // a call of the turn that changed no files
		case errors.As(err, &conflict):
			outcome = "conflict"
			fmt.Fprintln(e.stderr, termsafe.Text(err.Error()))
		case err != nil:
			outcome = "tool"
			printError(e.stderr, err)
		default:
			undone++
			text := report.String()
			size = len(text) + 1
			fmt.Fprintln(e.stdout, termsafe.Text(text))
		}
		rec := undoRecord{callID: calls[i], started: started, workspace: ws, channel: ar.tc.Channel, session: ar.tc.SessionKey,
			owner: ar.tc.Owner, resultBytes: size, outcome: outcome}
		if err := recordUndo(ctx, e, rec); err != nil {
			printError(e.stderr, err)
		}
	}
	if undone == 0 {
		fmt.Fprintln(e.stderr, "toolbelt: the last turn changed no files")
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return clipLine(s, 100)
}
