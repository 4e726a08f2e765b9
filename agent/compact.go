package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/llm"
)

// Compaction says when and how the loop compacts a conversation that
// nears the model's context window: the model summarizes the older turns,
// the recent ones are kept whole, and tool results older than a few turns
// are cut to their start with a result_read handle. The transcript keeps
// every message; the compaction is a marked message in it (llm.Compaction)
// and an EventCompaction.
type Compaction struct {
	// Window is the model's context window in tokens; 0 turns compaction
	// off.
	Window int
	// Threshold is the share of Window at which the loop compacts
	// (0: DefaultCompactThreshold).
	Threshold float64
	// KeepTurns is how many recent model turns are kept whole
	// (0: DefaultKeepTurns).
	KeepTurns int
	// ToolResultTurns: the results of tool calls older than that many
	// model turns are cut (0: DefaultToolResultTurns).
	ToolResultTurns int
	// Client writes the summary; nil: the agent's.
	Client llm.Client
}

// The defaults of a Compaction's zero fields.
const (
	DefaultCompactThreshold = 0.8
	DefaultKeepTurns        = 4
	DefaultToolResultTurns  = 3
)

// elidedHead is how much of a cut tool result's text stays.
const elidedHead = 300

// summaryPrompt is the summarizer's system prompt.
const summaryPrompt = `You compact a conversation between a user and an AI agent that calls tools, so the agent can go on without the whole of it. Write a summary the agent can work from: the user's goals and requests, what was done and found (files, commands, results, errors), decisions made, and what is still to do. Keep names, paths, ids and numbers exact. Answer with the summary only.`

// compact returns the transcript with a compaction appended when what the
// model would be sent nears the window, and older turns can be summarized.
func (a *Agent) compact(ctx context.Context, turn int, transcript []llm.Message) ([]llm.Message, error) {
	cc := a.Compaction
	if cc == nil || cc.Window <= 0 {
		return transcript, nil
	}
	before := estimateTokens(a.System, modelView(transcript))
	if float64(before) < cmp.Or(cc.Threshold, DefaultCompactThreshold)*float64(cc.Window) {
		return transcript, nil
	}
	live := liveIndexes(transcript)
	var turns []int // the transcript indexes of the live model turns
	for _, i := range live {
		if transcript[i].Role == llm.RoleAssistant {
			turns = append(turns, i)
		}
	}
	keep := cmp.Or(cc.KeepTurns, DefaultKeepTurns)
	if len(turns) <= keep {
		return transcript, nil // nothing old enough to summarize
	}
	cut := turns[len(turns)-keep]
	for cut > live[0] && transcript[cut-1].Role == llm.RoleUser && transcript[cut-1].Compaction == nil {
		cut-- // the user's words before a kept turn stay with it
	}
	elide := 0
	if n := cmp.Or(cc.ToolResultTurns, DefaultToolResultTurns); n < len(turns) {
		elide = turns[len(turns)-n]
	}
	var old []llm.Message
	if c := lastCompaction(transcript); c >= 0 {
		old = append(old, transcript[c])
	}
	for _, i := range live {
		if i < cut {
			old = append(old, transcript[i])
		}
	}
	a.RunPreCompact(ctx, PreCompact{Trigger: "auto", Messages: old, Tokens: before})
	msg, err := a.summarize(ctx, old)
	if err == nil {
		if err = a.keepElided(ctx, transcript, cut, elide); err != nil {
			err = fmt.Errorf("keeping the results it cuts: %w", err)
		}
	}
	if err != nil {
		err = fmt.Errorf("compacting the conversation: %w", err)
		if before >= cc.Window {
			return transcript, err // the model could not take the request either
		}
		// It still fits: go on uncompacted, and try again next turn.
		a.emit(Event{Type: EventCompaction, Turn: turn, Error: err.Error()})
		return transcript, nil
	}
	msg.Compaction = &llm.Compaction{FirstKept: cut, ElideBefore: elide, Summarized: len(old), TokensBefore: before}
	msg.Compaction.TokensAfter = estimateTokens(a.System, modelView(append(transcript[:len(transcript):len(transcript)], msg)))
	transcript = a.deliver(transcript, []llm.Message{msg})
	a.emit(Event{Type: EventCompaction, Turn: turn, Message: &msg})
	return transcript, nil
}

// summarize has the model summarize msgs, and returns the summary as the
// user message that stands for them.
func (a *Agent) summarize(ctx context.Context, msgs []llm.Message) (llm.Message, error) {
	c := a.Compaction.Client
	if c == nil {
		c = a.Client
	}
	answer, err := c.Stream(ctx, llm.Request{System: summaryPrompt, Messages: []llm.Message{llm.UserText(render(msgs))}}, nil)
	if err != nil {
		return llm.Message{}, err
	}
	summary := strings.TrimSpace(answer.Text())
	if summary == "" {
		return llm.Message{}, fmt.Errorf("%s/%s answered with no summary", c.Provider().Name, c.Model())
	}
	msg := llm.UserText(fmt.Sprintf("[The conversation before this point was compacted to save context. Summary of the %d earlier messages:]\n\n%s", len(msgs), summary))
	msg.Provider, msg.Model, msg.Usage = answer.Provider, answer.Model, answer.Usage
	return msg, nil
}

// keepElided keeps the whole text of the tool results that a compaction
// cutting [from, to) elides, so their result_read handles read them.
func (a *Agent) keepElided(ctx context.Context, transcript []llm.Message, from, to int) error {
	for i := from; i < to; i++ {
		if m := transcript[i]; m.Role == llm.RoleToolResult && m.CallID != "" {
			if err := a.Runner.Keep(ctx, m.CallID, m.Text()); err != nil {
				return err
			}
		}
	}
	return nil
}

// modelView is what a model is sent of transcript: all of it, or after a
// compaction its summary, then the messages it kept and those after it,
// the tool results it elides cut to their start.
func modelView(transcript []llm.Message) []llm.Message {
	c := lastCompaction(transcript)
	if c < 0 {
		return transcript
	}
	mark := transcript[c].Compaction
	out := []llm.Message{transcript[c]}
	for _, i := range liveIndexes(transcript) {
		m := transcript[i]
		if i < mark.ElideBefore && m.Role == llm.RoleToolResult {
			m = elided(m)
		}
		out = append(out, m)
	}
	return out
}

// liveIndexes are the indexes of the transcript's messages a model is sent
// whole or elided: after the last compaction's FirstKept, compactions left
// out.
func liveIndexes(transcript []llm.Message) []int {
	from := 0
	if c := lastCompaction(transcript); c >= 0 {
		from = transcript[c].Compaction.FirstKept
	}
	var out []int
	for i := from; i < len(transcript); i++ {
		if transcript[i].Compaction == nil {
			out = append(out, i)
		}
	}
	return out
}

// lastCompaction is the index of the transcript's last compaction, -1
// when there is none.
func lastCompaction(transcript []llm.Message) int {
	for i := len(transcript) - 1; i >= 0; i-- {
		if transcript[i].Compaction != nil {
			return i
		}
	}
	return -1
}

// elided is a tool result cut to the start of its text, with the handle
// that reads it whole.
func elided(m llm.Message) llm.Message {
	text := textclip.Clip(m.Text(), elidedHead)
	if m.CallID != "" {
		handle, _ := json.Marshal(map[string]string{"callId": m.CallID})
		text += fmt.Sprintf("\n[Result cut when the conversation was compacted: call result_read with %s to read it whole.]", handle)
	} else {
		text += "\n[Result cut when the conversation was compacted.]"
	}
	m.Content = []llm.Block{{Type: llm.BlockText, Text: text}}
	return m
}

// render writes messages as the text a summarizer reads.
func render(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleToolResult:
			fmt.Fprintf(&b, "[result of %s]\n%s\n\n", m.ToolName, textclip.Clip(m.Text(), 2000))
		default:
			if t := strings.TrimSpace(m.Text()); t != "" {
				fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, t)
			}
			for _, c := range m.ToolCalls() {
				fmt.Fprintf(&b, "[%s calls %s %s]\n\n", m.Role, c.Name, textclip.Clip(string(c.Arguments), 1000))
			}
		}
	}
	return b.String()
}

// estimateTokens reckons the tokens of a model call's system prompt and
// messages at three bytes of text a token and a fixed count per image or
// sound.
func estimateTokens(system string, msgs []llm.Message) int {
	n := len(system)
	media := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Thinking) + len(b.Arguments)
			if b.Data != "" {
				media++
			}
		}
	}
	return (n+2)/3 + media*mediaTokens
}

// mediaTokens is what an image or a sound is reckoned to take.
const mediaTokens = 1500
