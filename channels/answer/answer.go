// Package answer answers channel messages with agent sessions: the
// Answerer a channels.Router hands its turns to.
package answer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// Sessions answers turns with agent sessions: the transcript of a session
// key continues with each message of its conversation, so a room or a
// thread keeps its context. With a Store the transcripts are kept there —
// read at each turn, the turn's messages appended — so a conversation
// continues across restarts, and across gateways sharing a PostgreSQL
// store; without one they are kept in memory.
type Sessions struct {
	// Agent makes the agent that answers t — its model, and a runner whose
	// calls run as t.Identity() — and what releases it once t is answered
	// (nil for nothing).
	Agent func(ctx context.Context, t channels.Turn) (a *agent.Agent, release func(), err error)
	// Store keeps the sessions (a *store.Sessions); Workspace is recorded
	// with the sessions it creates.
	Store     host.Sessions
	Workspace string

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
	history, err := s.Transcript(ctx, t.SessionKey)
	if err != nil {
		return "", err
	}
	if s.Store != nil {
		// The session's record runs as the channel's conversation, never
		// with an owner's rights: each turn runs as its own sender.
		as := tool.Identity{AgentID: t.Agent, SessionKey: t.SessionKey, Channel: t.Message.Channel}
		if err := s.Store.Start(ctx, store.SessionStart{ID: t.SessionKey, Workspace: s.Workspace, Model: a.Client.Model(), As: as}); err != nil {
			return "", err
		}
	}
	m := t.Message
	prompt := fmt.Sprintf("%s on %s %s: %s", m.Sender, m.Channel, m.Conversation, m.Text)
	transcript, err := a.Run(ctx, history, llm.UserText(prompt))
	if serr := s.keep(context.WithoutCancel(ctx), t.SessionKey, a.Client.Model(), history, transcript, err); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return "", err
	}
	return transcript[len(transcript)-1].Text(), nil
}

// keep records the run of session key that took it from history to
// transcript and ended with runErr.
func (s *Sessions) keep(ctx context.Context, key, model string, history, transcript []llm.Message, runErr error) error {
	if s.Store == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.transcripts == nil {
			s.transcripts = map[string][]llm.Message{}
		}
		s.transcripts[key] = transcript
		return nil
	}
	var fresh []llm.Message
	if len(transcript) > len(history) {
		fresh = transcript[len(history):]
	}
	rows, err := host.Rows(key, fresh)
	if err == nil {
		err = s.Store.Append(ctx, key, s.Workspace, model, rows)
	}
	status := store.SessionDone
	switch {
	case errors.Is(runErr, context.Canceled):
		status = store.SessionAborted
	case runErr != nil || err != nil:
		status = store.SessionFailed
	}
	return errors.Join(err, s.Store.Finish(ctx, key, status, host.Usage(fresh)))
}

// Transcript returns the session's messages so far.
func (s *Sessions) Transcript(ctx context.Context, key string) ([]llm.Message, error) {
	if s.Store != nil {
		return host.ReadTranscript(ctx, s.Store, key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transcripts[key], nil
}
