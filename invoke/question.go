package invoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// during is what a call's tool told the pipeline while it ran, for the
// call's audit record: the questions it asked (tool.Ask), the hosts its
// work used (tool.RecordHosts) and the requests it made of the caller's
// side (interact.Record). Its work may tell it from several
// goroutines at once. A request made outside the runner has none: what
// it is told is dropped.
type during struct {
	mu        sync.Mutex
	questions []audit.Question
	hosts     []tool.HostUse
	requests  []audit.Request
}

func (d *during) question(q audit.Question) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.questions = append(d.questions, q)
}

func (d *during) host(h tool.HostUse) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hosts = append(d.hosts, h)
}

func (d *during) request(r audit.Request) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requests = append(d.requests, r)
}

// fill puts what the call told into its audit record.
func (d *during) fill(rec *audit.Record) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rec.Questions = append(rec.Questions, d.questions...)
	rec.Network = append(rec.Network, d.hosts...)
	rec.Requests = append(rec.Requests, d.requests...)
}

// asker is how the call of req puts a question to a person while it runs
// (tool.Ask): through the runner's confirmer, as the call's own approval
// was, with the same grants, and recorded in the call's audit record.
func (r *Runner) asker(req *Request) tool.Asker {
	return func(ctx context.Context, q tool.Question) tool.Reply {
		c := r.ask(ctx, req, q)
		req.during.question(audit.Question{Message: q.Message, Confirmation: audit.Confirmation{Asked: c.Asked, Answer: c.Answer, By: c.By, At: c.At, Reason: c.Reason}})
		allow := c.Answer == "timeout" && r.cfg.ConfirmOnTimeout == "allow" && !q.PersonOnly
		switch c.Answer {
		case "allow-once", "allow-session", "allow-workspace", "allowed-before", AnswerModeAllow:
			allow = true
		}
		return tool.Reply{Allow: allow, Answer: c.Answer, By: c.By, Reason: c.Reason}
	}
}

// ask puts q to the confirmer, unless the call's permission mode answers
// it (dontAsk denies, bypass allows) or an earlier answer for the session
// or workspace holds — neither for a PersonOnly question but dontAsk's
// denial — and says what came of it. Nobody to ask, a question
// that can only be answered after the call (ErrPending: an MCP client
// answers between calls) and a failure to ask are "none", with the reason.
func (r *Runner) ask(ctx context.Context, req *Request, q tool.Question) ConfirmRecord {
	fp := questionFingerprint(req, q.Action)
	switch {
	case req.Mode == policy.ModeDontAsk:
		return ConfirmRecord{Answer: AnswerModeDeny, By: "dontAsk mode", At: time.Now(), Reason: "in dontAsk mode what would ask is denied without asking"}
	case req.Mode == policy.ModeBypass && !q.PersonOnly:
		return ConfirmRecord{Answer: AnswerModeAllow, By: "bypass mode", At: time.Now()}
	case q.Always != "" && !q.PersonOnly && r.approved(ctx, req, fp):
		return ConfirmRecord{Answer: "allowed-before", At: time.Now()}
	case r.confirmer == nil:
		return ConfirmRecord{Answer: "none", At: time.Now(), Reason: "no one is available to answer"}
	}
	c := Confirmation{
		CallID: req.Call.ID, Tool: req.Tool.Name, Args: req.Call.Arguments, Risk: req.Risk, Reason: q.Reason,
		Message: q.Message, Fingerprint: fp, Always: q.Always, Caller: req.Context.Identity,
	}
	switch {
	case q.PersonOnly:
		c.Always, c.NoAlways = "", "this needs a person's answer every time"
	case q.Always == "":
		c.NoAlways = "the tool offers this answer once only"
	}
	a, late, err := r.put(ctx, c)
	rec := ConfirmRecord{Asked: true, By: a.By, At: time.Now()}
	var none *NoOneToAsk
	switch {
	case ctx.Err() != nil:
		rec.Answer, rec.Reason = "none", "the call ended before anyone answered"
	case late != nil:
		rec.Answer, rec.Reason = "timeout", late.Error()
	case errors.As(err, &none):
		rec.Asked, rec.Answer, rec.Reason = false, "none", none.Why
	case errors.Is(err, ErrPending):
		rec.Asked, rec.Answer, rec.Reason = false, "none", "this confirmer answers only between calls, not while one runs"
	case err != nil:
		req.logger().Warn("asking a question for a call failed", "tool", req.Tool.Name, "call", req.Call.ID, "err", err)
		rec.Answer, rec.Reason = "none", "asking failed"
	case !a.Allow:
		rec.Answer, rec.Reason = "deny", a.Reason
	case c.Always == "":
		rec.Answer = "allow-once"
	default:
		rec.Answer = r.grant(ctx, req, fp, "", a)
	}
	return rec
}

// put asks the confirmer about c, within the time a person has to answer
// (Config.ConfirmTimeout, or a Patient confirmer's patience when longer);
// late is set when nobody answered in that time.
func (r *Runner) put(ctx context.Context, c Confirmation) (a Answer, late *NoAnswer, err error) {
	wait := r.cfg.ConfirmTimeout
	if p, ok := r.confirmer.(Patient); ok {
		wait = max(wait, p.Patience())
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	a, err = r.confirmer.Confirm(cctx, c)
	switch {
	case errors.As(err, &late):
	case ctx.Err() == nil && cctx.Err() != nil:
		late = &NoAnswer{Within: wait}
	}
	return a, late, err
}

// questionFingerprint identifies the action a question of req's tool
// approves, in the call's workspace: what a grant for the session or the
// workspace holds for. It never equals a call's fingerprint.
func questionFingerprint(req *Request, action string) string {
	h := sha256.New()
	fmt.Fprintf(h, "question\ntool=%d:%s\naction=%d:%s\n", len(req.Tool.Name), req.Tool.Name, len(action), action)
	if req.Context != nil {
		fmt.Fprintf(h, "workspace=%d:%s\n", len(req.Context.Workspace), req.Context.Workspace)
	}
	return hex.EncodeToString(h.Sum(nil))
}
