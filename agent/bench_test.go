package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/provider"
)

// instant is a model that answers at once: a call of read until turns
// calls were made, then text.
type instant struct {
	turns int
	made  int
}

func (m *instant) Provider() llm.Provider { p, _ := llm.LookupProvider("anthropic"); return p }
func (m *instant) Model() string          { return "instant" }
func (m *instant) Target() provider.Target {
	t, _ := provider.ParseTarget("anthropic")
	return t
}

func (m *instant) Stream(_ context.Context, req llm.Request, on func(llm.Event)) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: "instant", StopReason: "toolUse"}
	if m.made < m.turns {
		m.made++
		msg.Content = []llm.Block{{Type: llm.BlockToolCall, ID: "toolu_1", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}
		return msg, nil
	}
	msg.StopReason = "stop"
	msg.Content = []llm.Block{{Type: llm.BlockText, Text: "done"}}
	return msg, nil
}

// BenchmarkTurn is the loop's cost per turn without the model: a turn with
// one call of a tool that returns at once, through the whole pipeline,
// with an event subscriber.
func BenchmarkTurn(b *testing.B) {
	runner, _ := tools(b)
	const turns = 20
	a := &agent.Agent{Runner: runner, MaxTurns: turns + 1, OnEvent: func(agent.Event) {}}
	b.ReportAllocs()
	for b.Loop() {
		a.Client = &instant{turns: turns}
		tr, err := a.Run(context.Background(), nil, llm.UserText("go"))
		if err != nil || len(tr) != 2*turns+2 {
			b.Fatalf("%d messages, %v", len(tr), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(turns+1))/1000, "µs/turn")
}

// BenchmarkFirstToolStart is the time from the arrival of a call's last
// argument fragment (its last toolcall_delta) to the start of its tool,
// against a local Anthropic replay server: the rest of the stream is read,
// the call repaired and handed to the pipeline.
func BenchmarkFirstToolStart(b *testing.B) {
	runner, _ := tools(b)
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		s := llmtest.New(b, llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "read", Args: `{"path":"a.txt"}`})},
			llmtest.Response{Body: llmtest.Anthropic("", "done")})
		a := newAgent(b, "anthropic/x", s, runner)
		var last, start time.Time
		a.OnEvent = func(e agent.Event) {
			switch {
			case e.Type == agent.EventMessageUpdate && e.Delta.Type == llm.EventToolCallDelta:
				last = time.Now()
			case e.Type == agent.EventToolStart && start.IsZero():
				start = time.Now()
			}
		}
		b.StartTimer()
		if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
			b.Fatal(err)
		}
		total += start.Sub(last)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-to-tool-start")
}
