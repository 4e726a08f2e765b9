package answer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/channels/answer"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// Two gateways sharing one store continue one conversation's session: the
// second answers with the first's turn in its history, and the store holds
// the whole transcript, the session done, recorded without the owner's
// rights.
func TestSessionsSharedThroughTheStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		model := llmtest.New(t,
			llmtest.Response{Body: llmtest.Anthropic("", "Noted.")},
			llmtest.Response{Body: llmtest.Anthropic("", "Friday.")})
		gateway := func() *answer.Sessions {
			return &answer.Sessions{Store: st.Sessions(), Workspace: t.TempDir(),
				Agent: func(_ context.Context, turn channels.Turn) (*agent.Agent, func(), error) {
					c, err := llm.New("anthropic/claude-test", llm.Options{BaseURL: model.URL, APIKey: "k"})
					if err != nil {
						return nil, nil, err
					}
					tc := &tool.Context{}
					tc.RunAs(turn.Identity())
					return &agent.Agent{Client: c, Runner: invoke.New(registry.New(), tc)}, nil, nil
				}}
		}
		turn := func(id, text string) channels.Turn {
			m := channels.Message{ID: id, Channel: "chat", Conversation: "thread-1", Sender: "ada", Text: text}
			return channels.Turn{Agent: "helper", SessionKey: channels.SessionKey("helper", m), Message: m, Owner: true}
		}
		ctx := context.Background()
		if got, err := gateway().Answer(ctx, turn("m1", "the release is on Friday")); err != nil || got != "Noted." {
			t.Fatalf("first gateway: %q, %v", got, err)
		}
		if got, err := gateway().Answer(ctx, turn("m2", "when is the release?")); err != nil || got != "Friday." {
			t.Fatalf("second gateway: %q, %v", got, err)
		}
		if body := string(model.Requests()[1].Body); !strings.Contains(body, "the release is on Friday") || !strings.Contains(body, "Noted.") {
			t.Errorf("the second gateway's request lacks the first turn:\n%s", body)
		}
		const key = "agent:helper:chat:thread-1"
		transcript, err := gateway().Transcript(ctx, key)
		if err != nil || len(transcript) != 4 {
			t.Fatalf("the stored transcript has %d messages (%v), want 4", len(transcript), err)
		}
		info, err := st.Sessions().Info(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != store.SessionDone || info.AgentID != "helper" || info.Identity == nil || info.Identity.Owner || info.Messages != 4 {
			t.Errorf("the session's record: %+v", info)
		}
	})
}
