package toolbelt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// DefaultApprovalTimeout is how long a call waits for the console's
// decision when console.approvalTimeout is not set.
const DefaultApprovalTimeout = 5 * time.Minute

// NoConsole is why a call that needs approval, with nobody else to ask,
// is blocked at once when no console is open.
const NoConsole = "no console is open: start `toolbelt serve` and approve it in its console, or run with --yes"

// consoleSlack is how much longer than the approval timeout the runner
// lets the console confirmer wait, so that its own expiry, which says
// where nobody answered, comes first.
const consoleSlack = time.Minute

// consoleConfirmer asks the console: the call is put in the store's queue
// of pending approvals (store.Pending) and waits for a decision there, up
// to console.approvalTimeout, when a console is open (it beat its
// heartbeat lately); when none is, the call is blocked at once
// (NoConsole). It is the confirmer of the root's runners that have no
// other (Options.Confirm nil: toolbelt run without a terminal, cron,
// sub-agents) and of MCP clients that cannot ask their users.
type consoleConfirmer struct{ tb *Toolbelt }

// timeout is how long a call waits for the console's decision.
func (c consoleConfirmer) timeout() time.Duration {
	return cmp.Or(c.tb.cfg.Console.ApprovalTimeout.D(), DefaultApprovalTimeout)
}

// Patience lets the console confirmer wait past the runner's
// ConfirmTimeout (see invoke.Patient).
func (c consoleConfirmer) Patience() time.Duration { return c.timeout() + consoleSlack }

// Confirm puts the call in the queue and waits for the console's
// decision; a decision's grant holds as the terminal's does, and By is
// who decided. No decision in time is an invoke.NoAnswer; when ctx ends
// first, the request is cancelled.
func (c consoleConfirmer) Confirm(ctx context.Context, conf invoke.Confirmation) (invoke.Answer, error) {
	q := c.tb.st.Pending()
	url, live, err := q.Console(ctx)
	if err != nil {
		return invoke.Answer{}, err
	}
	if !live {
		return invoke.Answer{}, &invoke.NoOneToAsk{Why: NoConsole}
	}
	p := pendingOf(conf, time.Now().Add(c.timeout()))
	if err := q.Add(ctx, p); err != nil {
		return invoke.Answer{}, err
	}
	c.tb.feed.Publish(feed.Event{Kind: feed.Waiting, CallID: conf.CallID, PendingID: p.ID, URL: strings.TrimSuffix(url, "/") + "/approvals/" + p.ID})
	id := p.ID
	if p, err = q.Await(ctx, id); err != nil {
		if ctx.Err() != nil {
			if cerr := q.Cancel(context.WithoutCancel(ctx), id); cerr != nil && !errors.Is(cerr, store.ErrDecided) {
				c.tb.log.Warn("cancelling a pending approval", "id", id, "err", cerr)
			}
		}
		return invoke.Answer{}, err
	}
	switch p.State {
	case store.PendingAllowed:
		return invoke.Answer{Allow: true, Grant: grantOf(p.Grant), By: p.By}, nil
	case store.PendingDenied:
		return invoke.Answer{Reason: p.DenyReason, By: p.By}, nil
	case store.PendingExpired:
		return invoke.Answer{}, &invoke.NoAnswer{Where: "in the console", Within: c.timeout()}
	}
	return invoke.Answer{}, fmt.Errorf("pending approval %s ended %s", id, p.State)
}

// pendingOf is the pending approval of the call conf asks about, which
// expires at expires.
func pendingOf(conf invoke.Confirmation, expires time.Time) store.PendingApproval {
	return store.PendingApproval{
		ID: randid.New("appr-", 8), CallID: conf.CallID, Workspace: tool.ResolveDir(conf.Caller.Workspace), Tool: conf.Tool,
		Args: audit.Redact(conf.Args), Caller: conf.Caller, Reason: conf.Reason, Message: conf.Message,
		Always: conf.Always, NoAlways: conf.NoAlways, Effects: effectsText(conf.Effects), Expires: expires,
	}
}

// effectsText is what a person must see of a call's effects to decide:
// what it would do, the command with where and how it runs, and the diff.
func effectsText(e *tool.Effects) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range e.Facts() {
		fmt.Fprintf(&b, "%s: %s\n", f.Label, f.Value)
	}
	if e.Diff != "" {
		b.WriteString("\n" + e.Diff)
	}
	return b.String()
}

// grantOf is the invoke.Grant of a decision's grant.
func grantOf(g string) invoke.Grant {
	switch g {
	case store.GrantSession:
		return invoke.GrantSession
	case store.GrantWorkspace:
		return invoke.GrantWorkspace
	}
	return invoke.GrantOnce
}
