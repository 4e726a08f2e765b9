package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

type pageArgs struct {
	N int `json:"n"`
}

// page is the text of page n: 3000 bytes, about 1000 tokens.
func page(n int) string {
	return strings.Repeat(fmt.Sprintf("page-%d ", n), 3000/len(fmt.Sprintf("page-%d ", n)))
}

// pager is a runner with one tool, page, that returns page(n).
func pager(t *testing.T) *invoke.Runner {
	reg := registry.New()
	pg := tool.Must(tool.New("page", "Read a page.", func(ctx context.Context, in pageArgs, inv tool.Invocation) (tool.Result, error) {
		return tool.Text(page(in.N)), nil
	}))
	pg.Meta = tool.Meta{ReadOnly: true}
	if err := reg.Register(pg); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, nil)
}

// TestCompaction: a run that reads page after page nears its 5000-token
// window; the loop has the model summarize the older turns and goes on
// with the summary, the recent turns whole and older tool results cut to
// a result_read handle that reads them whole. The transcript keeps every
// message and marks the compaction.
func TestCompaction(t *testing.T) {
	var turns []llmtest.Response
	for n := 1; n <= 7; n++ {
		turns = append(turns, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: fmt.Sprintf("c%d", n), Name: "page", Args: fmt.Sprintf(`{"n":%d}`, n)})})
	}
	turns = append(turns, llmtest.Response{Body: llmtest.Chat("", "done")})
	var summaries []llmtest.Response
	for n := 1; n <= 4; n++ {
		summaries = append(summaries, llmtest.Response{Body: llmtest.Chat("", fmt.Sprintf("SUMMARY-%d of the pages so far", n))})
	}
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You compact a conversation", Responses: summaries}, llmtest.Route{Responses: turns})
	a := newAgent(t, "openai/x", s, pager(t))
	a.Compaction = &agent.Compaction{Window: 5000}
	var compactions []llm.Message
	a.OnEvent = func(e agent.Event) {
		if e.Type == agent.EventCompaction {
			compactions = append(compactions, *e.Message)
		}
	}
	// The pre_compact hook sees each compaction before the summary is made.
	var pre []agent.PreCompact
	a.Hooks.PreCompact = func(_ context.Context, e agent.PreCompact) error {
		if len(pre) != len(compactions) {
			t.Errorf("pre_compact ran after compaction %d", len(compactions))
		}
		pre = append(pre, e)
		return nil
	}
	tr, err := a.Run(context.Background(), nil, llm.UserText("read pages 1 to 7"))
	if err != nil {
		t.Fatal(err)
	}
	if len(compactions) == 0 {
		t.Fatal("no compaction event")
	}
	if len(pre) != len(compactions) {
		t.Fatalf("pre_compact ran %d times for %d compactions", len(pre), len(compactions))
	}
	for i, e := range pre {
		if c := compactions[i].Compaction; e.Trigger != "auto" || len(e.Messages) != c.Summarized || e.Tokens != c.TokensBefore {
			t.Errorf("pre_compact %d saw trigger %q, %d messages, %d tokens; the compaction summarized %d of %d tokens", i, e.Trigger, len(e.Messages), e.Tokens, c.Summarized, c.TokensBefore)
		}
	}
	// The transcript keeps every message, the compactions marked in it.
	var marked []llm.Message
	results := map[int]llm.Message{}
	for _, m := range tr {
		switch {
		case m.Compaction != nil:
			marked = append(marked, m)
		case m.Role == llm.RoleToolResult:
			results[len(results)+1] = m
		}
	}
	if len(marked) != len(compactions) || len(results) != 7 || tr[len(tr)-1].Text() != "done" {
		t.Fatalf("transcript has %d compactions (events %d), %d results, last %q", len(marked), len(compactions), len(results), tr[len(tr)-1].Text())
	}
	for n, r := range results {
		if r.Text() != page(n) {
			t.Errorf("the transcript's result %d is not whole: %.80q", n, r.Text())
		}
	}
	first := compactions[0]
	c := first.Compaction
	if !strings.Contains(first.Text(), "SUMMARY-1") || c.Summarized == 0 || c.TokensAfter >= c.TokensBefore || c.TokensBefore < 4000 {
		t.Fatalf("first compaction %+v: %q", c, first.Text())
	}
	// The summarizer read the older turns; the next model call got the
	// summary instead of them, older results cut, recent ones whole.
	reqs := s.Requests()
	i := 0
	for !strings.Contains(string(reqs[i].Body), "You compact a conversation") {
		i++
	}
	summarized, next := string(reqs[i].Body), string(reqs[i+1].Body)
	if !strings.Contains(summarized, "read pages 1 to 7") || !strings.Contains(summarized, "page-1 page-1") {
		t.Errorf("the summarizer was not sent the older turns: %.300s", summarized)
	}
	if !strings.Contains(next, "SUMMARY-1") || strings.Contains(next, "read pages 1 to 7") || strings.Contains(next, "page-1 page-1") {
		t.Errorf("the call after the compaction was not sent the summary in place of the older turns: %.300s", next)
	}
	elided := results[2]
	handle := fmt.Sprintf(`call result_read with {\"callId\":\"%s\"}`, elided.CallID)
	if !strings.Contains(next, handle) || strings.Contains(next, page(2)) || !strings.Contains(next, page(5)) {
		t.Errorf("older results not cut to a handle (%s) or recent ones not whole: %.300s", handle, next)
	}
	out, found, err := a.Runner.Output(context.Background(), tool.Identity{}, elided.CallID)
	if err != nil || !found || out.Text != page(2) || out.Origin == nil || !out.Origin.External {
		t.Errorf("the cut result is not kept whole for result_read: found %v, origin %+v, err %v", found, out.Origin, err)
	}
}

// TestCompactionNotNeeded: a conversation well inside its window is sent
// whole and never summarized.
func TestCompactionNotNeeded(t *testing.T) {
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "page", Args: `{"n":1}`})}, llmtest.Response{Body: llmtest.Chat("", "done")})
	a := newAgent(t, "openai/x", s, pager(t))
	a.Compaction = &agent.Compaction{Window: 100000}
	tr, err := a.Run(context.Background(), nil, llm.UserText("read page 1"))
	if err != nil || len(tr) != 4 || len(s.Requests()) != 2 || !strings.Contains(string(s.Requests()[1].Body), "page-1 page-1") {
		t.Fatalf("err %v, %d messages, %d requests", err, len(tr), len(s.Requests()))
	}
}

// TestCompactionThatFailsGoesOn: a summary the provider refuses while the
// conversation still fits its window is reported, and the run goes on
// uncompacted to its answer.
func TestCompactionThatFailsGoesOn(t *testing.T) {
	var turns []llmtest.Response
	for n := 1; n <= 5; n++ {
		turns = append(turns, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: fmt.Sprintf("c%d", n), Name: "page", Args: fmt.Sprintf(`{"n":%d}`, n)})})
	}
	turns = append(turns, llmtest.Response{Body: llmtest.Chat("", "done")})
	refused := llmtest.Response{Status: 400, Body: `{"error":{"message":"summaries are off today","type":"invalid_request_error"}}`}
	s := llmtest.NewRouted(t, llmtest.Route{Match: "You compact a conversation", Responses: []llmtest.Response{refused, refused}}, llmtest.Route{Responses: turns})
	a := newAgent(t, "openai/x", s, pager(t))
	a.Compaction = &agent.Compaction{Window: 6000}
	var failed []string
	a.OnEvent = func(e agent.Event) {
		if e.Type == agent.EventCompaction {
			failed = append(failed, e.Error)
		}
	}
	tr, err := a.Run(context.Background(), nil, llm.UserText("read pages 1 to 5"))
	if err != nil || tr[len(tr)-1].Text() != "done" {
		t.Fatalf("err %v, last message %q", err, tr[len(tr)-1].Text())
	}
	if len(failed) == 0 || !strings.Contains(failed[0], "compacting the conversation") {
		t.Errorf("compaction events %q, want the failure reported", failed)
	}
}

// TestCompactionSurvivesResume: a kept transcript with a compaction in it,
// read back from its JSON, is sent from its summary on: the summarized
// messages stay in the transcript and out of the request.
func TestCompactionSurvivesResume(t *testing.T) {
	summary := llm.UserText("SUMMARY of the old turns")
	summary.Compaction = &llm.Compaction{FirstKept: 2, ElideBefore: 2, Summarized: 2}
	kept, err := json.Marshal([]llm.Message{llm.UserText("OLD-PROMPT"), {Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "OLD-ANSWER"}}},
		llm.UserText("RECENT-PROMPT"), {Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "RECENT-ANSWER"}}}, summary})
	if err != nil {
		t.Fatal(err)
	}
	var history []llm.Message
	if err := json.Unmarshal(kept, &history); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "ok")})
	a := newAgent(t, "openai/x", s, pager(t))
	tr, err := a.Run(context.Background(), history, llm.UserText("NEXT"))
	if err != nil || len(tr) != 7 {
		t.Fatalf("err %v, %d messages", err, len(tr))
	}
	body := string(s.Requests()[0].Body)
	at := func(s string) int { return strings.Index(body, s) }
	if at("OLD-") >= 0 || at("SUMMARY") < 0 || at("SUMMARY") > at("RECENT-PROMPT") || at("RECENT-ANSWER") > at("NEXT") {
		t.Errorf("the request is not the summary, then the kept turns, then the prompt: %s", body)
	}
}
