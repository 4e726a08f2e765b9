package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// round is what one round of a tools/call knows about the answers the
// client gave and the question to ask it: the answers of earlier rounds
// (signed into the request state, so that a call that asks several
// things, one per round, keeps what was answered), and the answer this
// round carries for the question the state names.
type round struct {
	req *sdk.CallToolRequest
	// answers are the client's answers, by the fingerprint of what they
	// answer (an action, a question, a tool's request).
	answers map[string]sdk.InputResponse
	// asked is set when the call needs an answer the client was not asked
	// for yet, under the input id input (approvalInput, askInput, a tool's
	// request's fingerprint); state binds it to the action or question.
	asked sdk.InputRequest
	input string
	state string
}

type roundKey struct{}

// pending is what a request state says: the question asked (its input id
// and fingerprint) and the answers of earlier rounds.
type pending struct {
	Input   string                     `json:"i"`
	For     string                     `json:"f"`
	Answers map[string]json.RawMessage `json:"a,omitempty"`
}

// newRound reads the answers a retried call carries, if its state
// verifies: the earlier rounds' from the state, and the one for the
// question the state names.
func (s *Server) newRound(req *sdk.CallToolRequest) *round {
	r := &round{req: req, answers: map[string]sdk.InputResponse{}}
	signed, ok := s.verify(req.Params.RequestState)
	if !ok {
		return r
	}
	b, err := base64.RawURLEncoding.DecodeString(signed)
	var p pending
	if err != nil || json.Unmarshal(b, &p) != nil {
		return r
	}
	if len(p.Answers) > 0 {
		raw, _ := json.Marshal(p.Answers)
		var earlier sdk.InputResponseMap
		if json.Unmarshal(raw, &earlier) == nil {
			maps.Copy(r.answers, earlier)
		}
	}
	if resp, ok := req.Params.InputResponses[p.Input]; ok {
		r.answers[p.For] = resp
	}
	return r
}

// handOver makes the call ask the client ir under the input id input, for
// the action or question fp: the request state names it and carries the
// answers given so far.
func (s *Server) handOver(r *round, input, fp string, ir sdk.InputRequest) error {
	if r.asked != nil {
		return errors.New("the call already asks its MCP client something this round")
	}
	p := pending{Input: input, For: fp, Answers: map[string]json.RawMessage{}}
	for k, v := range r.answers {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		p.Answers[k] = b
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	r.asked, r.input, r.state = ir, input, s.sign(base64.RawURLEncoding.EncodeToString(b))
	return nil
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
	if answer, ok := r.answers[c.Fingerprint].(*sdk.ElicitResult); ok {
		if answer.Action != "accept" {
			return invoke.Answer{Reason: "the user " + answer.Action + "d the request", By: by}, nil
		}
		decision, _ := answer.Content["decision"].(string)
		reason, _ := answer.Content["reason"].(string)
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
	if err := s.handOver(r, approvalInput, c.Fingerprint, &sdk.ElicitParams{Mode: "form", Message: approvalMessage(c), RequestedSchema: approvalForm(c)}); err != nil {
		return invoke.Answer{}, err
	}
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
