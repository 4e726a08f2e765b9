package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/invoke"
)

// terminal asks the person at the controlling terminal to approve calls. It
// reads and writes /dev/tty, so arguments piped on stdin and output piped
// from stdout do not get in the way.
type terminal struct {
	mu  sync.Mutex // one question at a time, even for a batch
	tty *os.File
	in  *bufio.Reader
	col colors
	who string
	// lines, when set, is where answers are read instead of the terminal:
	// the chat's standard input, the terminal too, which the chat reads
	// during its turns (steering).
	lines *lineSource
	// spin draws the work under way on the terminal (a spinner), paused
	// while asking; nil when nothing does.
	spin interface {
		Pause()
		Resume()
	}
}

// openTerminal returns a terminal confirmer, or false when there is no
// controlling terminal to ask on.
func openTerminal() (*terminal, bool) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, false
	}
	who := "terminal"
	if u, err := user.Current(); err == nil {
		who += " (" + u.Username + ")"
	}
	return &terminal{tty: tty, in: bufio.NewReader(tty), col: colors{on: os.Getenv("NO_COLOR") == ""}, who: who}, true
}

// hold takes the terminal for one question, until the returned release
// is called: one question at a time, the spinner paused, and the read
// stopped at once when ctx ends (the question is cancelled or expires).
func (t *terminal) hold(ctx context.Context) (release func()) {
	t.mu.Lock()
	if t.spin != nil {
		t.spin.Pause()
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = t.tty.SetReadDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = t.tty.SetReadDeadline(time.Now()) })
	return func() {
		stop()
		_ = t.tty.SetReadDeadline(time.Time{})
		if t.spin != nil {
			t.spin.Resume()
		}
		t.mu.Unlock()
	}
}

// Close closes the terminal.
func (t *terminal) Close() error { return t.tty.Close() }

// Confirm shows the call and asks: once; for this session (the run's, in
// memory); for this workspace (kept in the store until revoked) — the last
// two for what the confirmation says they cover, and not offered when it
// says so; saving the rule the confirmation proposes, shown as it would be
// saved, when it proposes one; or no, with an optional reason passed to
// the model.
func (t *terminal) Confirm(ctx context.Context, c invoke.Confirmation) (invoke.Answer, error) {
	defer t.hold(ctx)()
	fmt.Fprint(t.tty, t.describe(c))
	question, choices := "Allow? [y] once, [s] this session, [w] this workspace (kept until revoked), [n] no: ", "y, s, w or n"
	switch {
	case c.Always == "":
		question, choices = "Allow? [y] once, [n] no: ", "y or n"
	case c.Rule != "":
		question, choices = "Allow? [y] once, [s] this session, [r] save the rule, [w] this workspace (kept until revoked), [n] no: ", "y, s, r, w or n"
	}
	for range 3 {
		line, err := t.readLine(ctx, t.col.bold(question))
		if err != nil {
			return invoke.Answer{}, err
		}
		switch strings.ToLower(line) {
		case "y", "yes":
			return invoke.Answer{Allow: true, By: t.who}, nil
		case "s", "session":
			if c.Always != "" {
				return invoke.Answer{Allow: true, Grant: invoke.GrantSession, By: t.who}, nil
			}
		case "w", "workspace":
			if c.Always != "" {
				return invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: t.who}, nil
			}
		case "r", "rule":
			if c.Rule != "" {
				return invoke.Answer{Allow: true, Grant: invoke.GrantRule, By: t.who}, nil
			}
		case "n", "no", "":
			reason, err := t.readLine(ctx, "Reason, passed on to the model (optional): ")
			if err != nil {
				return invoke.Answer{}, err
			}
			return invoke.Answer{Reason: reason, By: t.who}, nil
		}
		fmt.Fprintf(t.tty, "Please answer %s.\n", choices)
	}
	return invoke.Answer{Reason: "no clear answer", By: t.who}, nil
}

// readLine shows prompt and reads the line typed after it. With a line
// source shared with the chat's steering, the answer is claimed as a
// question's before the prompt shows, so a line typed as soon as it
// appears is the answer, and no line typed before it is.
func (t *terminal) readLine(ctx context.Context, prompt string) (string, error) {
	if t.lines != nil {
		ch, leave := t.lines.askQuestion()
		fmt.Fprint(t.tty, prompt)
		return t.readShared(ctx, ch, leave)
	}
	fmt.Fprint(t.tty, prompt)
	line, err := t.in.ReadString('\n')
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(t.tty)
			return "", ctx.Err()
		}
		if err != io.EOF || line == "" {
			return "", err
		}
	}
	return strings.TrimSpace(line), nil
}

// readShared waits for the answer claimed from t.lines as ch (leave gives
// up the claim).
func (t *terminal) readShared(ctx context.Context, ch <-chan promptLine, leave func()) (string, error) {
	l, err := t.lines.wait(ctx, ch, leave)
	switch {
	case err != nil:
		fmt.Fprintln(t.tty)
		return "", err
	case l.end:
		return "", cmp.Or(l.err, io.EOF)
	}
	return strings.TrimSpace(l.text), nil
}

// describe renders what the person needs to decide. Every field is
// shown on its own line with its escapes visible (termsafe.Line): a tool
// name, a command or a diff cannot redraw the question.
func (t *terminal) describe(c invoke.Confirmation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s (%s risk)\n", t.col.bold("Approval needed:"), t.col.bold(termsafe.Line(c.Tool)), c.Risk)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "  %-11s %s\n", k+":", termsafe.Line(v))
		}
	}
	row("why", c.Reason)
	row("note", c.Message)
	if e := c.Effects; e != nil {
		for _, f := range e.Facts() {
			row(f.Label, f.Value)
		}
	}
	if c.NoAlways != "" {
		row("remember", "only once is offered: "+c.NoAlways)
	} else {
		row("remember", "[s] and [w] cover "+c.Always)
	}
	if c.Rule != "" {
		row("rule", "[r] saves allow "+c.Rule+" for this workspace: the calls it matches run unasked until revoked")
	}
	row("arguments", string(c.Args))
	if c.Effects != nil && c.Effects.Diff != "" {
		b.WriteByte('\n')
		for line := range strings.Lines(c.Effects.Diff) {
			line = termsafe.Line(strings.TrimSuffix(line, "\n"))
			switch {
			case strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++"):
				line = t.col.green(line)
			case strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---"):
				line = t.col.paint("31", line)
			}
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}
