package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/invoke"
)

// Approval over MCP takes two rounds, as the protocol's multi-round-trip
// requests have it: a call that needs approval ends with an input request
// (an elicitation form) and a signed request state naming the exact action;
// the client asks its user and calls again with the answer and the state.
// The answer counts only for the same action: the state's fingerprint must
// match the call's. Clients on older protocol versions get the same flow
// from the SDK, which asks them directly and calls the handler again.

// The answers a person can give in the approval form: each says how far
// it reaches (see invoke.Grant).
const (
	answerOnce      = "allow once"
	answerSession   = "allow for this session"
	answerWorkspace = "allow in this workspace"
	answerDeny      = "deny"
	// approvalInput is the id of the input request.
	approvalInput = "approval"
)

// approvalForm is the schema of the elicitation form for c: answers for
// the session and the workspace are choices only when they are offered,
// and the form says what each covers and how long it holds.
func approvalForm(c invoke.Confirmation) map[string]any {
	decisions := []string{answerOnce, answerSession, answerWorkspace, answerDeny}
	about := "Allow this call once; allow " + c.Always + " for this session (until this MCP session ends, kept in memory only); " +
		"allow it in this workspace (kept for every later session and process until revoked with toolbelt approvals revoke); or deny it."
	if c.Always == "" {
		decisions = []string{answerOnce, answerDeny}
		about = "Allow this call once, or deny it. Only once is offered: " + c.NoAlways + "."
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type": "string", "title": "Decision",
				"enum":        decisions,
				"description": about,
			},
			"reason": map[string]any{
				"type": "string", "title": "Reason",
				"description": "Why you deny it; the model is told.",
			},
		},
		"required": []string{"decision"},
	}
}

// round is what one round of a tools/call knows about approval: the answer
// the client sent (second round), and the question to send (first round).
type round struct {
	req *sdk.CallToolRequest
	// answer is the client's answer, for the action named by answeredFor.
	answer      *sdk.ElicitResult
	answeredFor string
	// asked is set when the call needs an answer the client was not asked
	// for yet, under the input id input (approvalInput, askInput, a tool's
	// request's fingerprint); state binds it to the action or question.
	asked sdk.InputRequest
	input string
	state string
}

type roundKey struct{}

// newRound reads the answer a retried call carries, if its state verifies.
func (s *Server) newRound(req *sdk.CallToolRequest) *round {
	r := &round{req: req}
	if resp, ok := req.Params.InputResponses[approvalInput].(*sdk.ElicitResult); ok {
		if fp, ok := s.verify(req.Params.RequestState); ok {
			r.answer, r.answeredFor = resp, fp
		}
	}
	return r
}

// sign makes the request state for an action's fingerprint.
func (s *Server) sign(fp string) string {
	mac := hmac.New(sha256.New, s.key[:])
	mac.Write([]byte(fp))
	return fp + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// verify returns the fingerprint a request state names, if it was signed here.
func (s *Server) verify(state string) (string, bool) {
	fp, sig, ok := strings.Cut(state, ".")
	if !ok {
		return "", false
	}
	return fp, hmac.Equal([]byte(s.sign(fp)), []byte(fp+"."+sig))
}

// Confirm answers for the person behind the MCP client: with the answer the
// call carries when it is for this very action, else by handing the question
// to the client (invoke.ErrPending). A client that cannot ask its user
// (no elicitation) gets the fallback: Options.Fallback when set, else
// ConfirmFallback's answer, deny by default.
func (s *Server) Confirm(ctx context.Context, c invoke.Confirmation) (invoke.Answer, error) {
	r, _ := ctx.Value(roundKey{}).(*round)
	if r == nil || !canElicit(r.req) {
		switch {
		case s.opts.Fallback != nil:
			return s.opts.Fallback.Confirm(ctx, c)
		case s.opts.ConfirmFallback == "allow":
			return invoke.Answer{Allow: true, Blanket: true, By: "mcp fallback (allow)"}, nil
		}
		return invoke.Answer{By: "mcp fallback (deny)"}, &invoke.NoOneToAsk{Why: "the MCP client cannot ask its user: it does not support elicitation"}
	}
	by := clientName(r.req)
	if r.answer != nil && r.answeredFor == c.Fingerprint {
		if r.answer.Action != "accept" {
			return invoke.Answer{Reason: "the user " + r.answer.Action + "d the request", By: by}, nil
		}
		decision, _ := r.answer.Content["decision"].(string)
		reason, _ := r.answer.Content["reason"].(string)
		switch decision {
		case answerOnce:
			return invoke.Answer{Allow: true, By: by}, nil
		case answerSession:
			return invoke.Answer{Allow: true, Grant: invoke.GrantSession, By: by}, nil
		case answerWorkspace:
			return invoke.Answer{Allow: true, Grant: invoke.GrantWorkspace, By: by}, nil
		}
		return invoke.Answer{Reason: reason, By: by}, nil
	}
	r.asked, r.input = &sdk.ElicitParams{Mode: "form", Message: approvalMessage(c), RequestedSchema: approvalForm(c)}, approvalInput
	r.state = s.sign(c.Fingerprint)
	return invoke.Answer{}, fmt.Errorf("asked %s: %w", by, invoke.ErrPending)
}

// Patience is the fallback's, when it waits longer than the runner's
// ConfirmTimeout (see invoke.Patient); questions to the client itself
// return at once.
func (s *Server) Patience() time.Duration {
	if p, ok := s.opts.Fallback.(invoke.Patient); ok {
		return p.Patience()
	}
	return 0
}

func canElicit(req *sdk.CallToolRequest) bool {
	if req.Session == nil {
		return false
	}
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

// approvalMessage says what the person is asked to approve.
func approvalMessage(c invoke.Confirmation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Allow %s (%s risk)? %s\n", c.Tool, c.Risk, c.Reason)
	if c.Message != "" {
		b.WriteString(c.Message + "\n")
	}
	if e := c.Effects; e != nil {
		if e.Summary != "" {
			fmt.Fprintf(&b, "It would %s.\n", strings.TrimSuffix(e.Summary, "."))
		}
		if e.Command != "" {
			fmt.Fprintf(&b, "Command: %s\nDirectory: %s\n", e.Command, e.Workdir)
		}
		if e.Diff != "" {
			b.WriteString(content.Head(e.Diff, 4000, "\n… (diff cut)") + "\n")
		}
	}
	if c.Always != "" {
		fmt.Fprintf(&b, "Allowing it for this session or in this workspace covers %s; %q holds until this MCP session ends, %q is kept until revoked.\n", c.Always, answerSession, answerWorkspace)
	} else {
		fmt.Fprintf(&b, "Only once is offered: %s.\n", c.NoAlways)
	}
	fmt.Fprintf(&b, "Arguments: %s", content.Head(string(c.Args), 1000, "…"))
	return b.String()
}
