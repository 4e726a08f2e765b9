package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// askInput is the id of the input request that carries a question of the
// model's (ask_user) to the client's user.
const askInput = "ask_user"

// Ask puts the model's question (ask_user) to the user behind the MCP
// client, in two rounds as approvals are: the first ends the call with an
// elicitation form and a signed request state naming the question; the
// client asks its user and calls again with the answer, which counts only
// for the same question. A client that cannot ask its user (no
// elicitation) gets ask.ErrNobodyToAsk at once.
func (s *Server) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	r, _ := ctx.Value(roundKey{}).(*round)
	if r == nil || !canElicit(r.req) {
		return ask.Answer{}, fmt.Errorf("%w: the MCP client does not support elicitation", ask.ErrNobodyToAsk)
	}
	by := clientName(r.req)
	fp := questionFingerprint(q)
	if resp, ok := r.answers[fp].(*sdk.ElicitResult); ok {
		return answerOf(q, resp, by), nil
	}
	if err := s.handOver(r, askInput, fp, &sdk.ElicitParams{Mode: "form", Message: q.Question, RequestedSchema: questionForm(q)}); err != nil {
		return ask.Answer{}, err
	}
	return ask.Answer{}, fmt.Errorf("%w: %s", ask.ErrHandedOver, by)
}

// clientName names the client that made the call, for the records.
func clientName(req *sdk.CallToolRequest) string {
	if info := req.Session.InitializeParams(); info != nil && info.ClientInfo != nil {
		return "mcp client " + info.ClientInfo.Name
	}
	return "mcp client"
}

// questionFingerprint names a question, so that an answer counts only for
// the question it was given to.
func questionFingerprint(q ask.Question) string {
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	return "ask-" + hex.EncodeToString(sum[:16])
}

// questionForm is the elicitation form of q: one choice among the options
// (several with multiple, as a multi-select), and a text field where the
// user may answer in words. Options are titled with their descriptions.
func questionForm(q ask.Question) map[string]any {
	props := map[string]any{}
	if len(q.Options) > 0 {
		titled := make([]map[string]any, len(q.Options))
		for i, o := range q.Options {
			title := o.Label
			if o.Description != "" {
				title += " — " + o.Description
			}
			titled[i] = map[string]any{"const": o.Label, "title": title}
		}
		if q.Multiple {
			props["choices"] = map[string]any{"type": "array", "title": "Choices", "items": map[string]any{"anyOf": titled}}
		} else {
			props["choice"] = map[string]any{"type": "string", "title": "Choice", "oneOf": titled}
		}
	}
	if q.FreeText() {
		props["text"] = map[string]any{"type": "string", "title": "Your answer"}
	}
	form := map[string]any{"type": "object", "properties": props}
	if len(q.Options) > 0 && !q.AllowText && !q.Multiple {
		form["required"] = []string{"choice"}
	}
	return form
}

// answerOf reads the client's answer to q: only labels q offered count.
func answerOf(q ask.Question, resp *sdk.ElicitResult, by string) ask.Answer {
	if resp.Action != "accept" {
		return ask.Answer{Declined: true, By: by}
	}
	offered := map[string]bool{}
	for _, l := range q.Labels() {
		offered[l] = true
	}
	a := ask.Answer{By: by}
	var picked []string
	if c, ok := resp.Content["choice"].(string); ok {
		picked = append(picked, c)
	}
	if cs, ok := resp.Content["choices"].([]any); ok {
		for _, c := range cs {
			if s, ok := c.(string); ok {
				picked = append(picked, s)
			}
		}
	}
	for _, l := range q.Labels() {
		for _, p := range picked {
			if p == l && offered[l] {
				a.Chosen = append(a.Chosen, l)
				break
			}
		}
	}
	if t, ok := resp.Content["text"].(string); ok && q.FreeText() {
		a.Text = strings.TrimSpace(t)
	}
	if len(a.Chosen) == 0 && a.Text == "" {
		a.Declined = true
	}
	return a
}
