// Package answer answers channel messages with agent sessions: the
// Answerer a channels.Router hands its turns to.
package answer

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/llm"
)

// Sessions answers turns with agent sessions kept in memory: the
// transcript of a session key continues with each message of its
// conversation, so a room or a thread keeps its context.
type Sessions struct {
	// Agent makes the agent that answers t — its model, and a runner whose
	// calls run as t.Identity() — and what releases it once t is answered
	// (nil for nothing).
	Agent func(ctx context.Context, t channels.Turn) (a *agent.Agent, release func(), err error)

	mu          sync.Mutex
	transcripts map[string][]llm.Message
}

// Answer runs t's session with its message and returns the model's last
// answer.
func (s *Sessions) Answer(ctx context.Context, t channels.Turn) (string, error) {
	a, release, err := s.Agent(ctx, t)
	if err != nil {
		return "", err
	}
	if release != nil {
		defer release()
	}
	s.mu.Lock()
	history := s.transcripts[t.SessionKey]
	s.mu.Unlock()
	m := t.Message
	prompt := fmt.Sprintf("%s on %s %s: %s", m.Sender, m.Channel, m.Conversation, m.Text)
	transcript, err := a.Run(ctx, history, llm.UserText(prompt))
	s.mu.Lock()
	if s.transcripts == nil {
		s.transcripts = map[string][]llm.Message{}
	}
	s.transcripts[t.SessionKey] = transcript
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	return transcript[len(transcript)-1].Text(), nil
}

// Transcript returns the session's messages so far.
func (s *Sessions) Transcript(key string) []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transcripts[key]
}
