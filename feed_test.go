package toolbelt_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/tool"
)

type stepArgs struct {
	Token string `json:"token"`
}

// stepper reports progress once, then answers.
var stepper = tool.Must(tool.New("stepper", "Reports progress, then answers.", func(_ context.Context, in stepArgs, inv tool.Invocation) (tool.Result, error) {
	inv.Update(tool.Text("half way"))
	return tool.Text("done"), nil
}))

// TestFeedPublishesEveryCall: a runner of the root publishes each call's
// start (arguments redacted, caller, workspace), its progress, its result
// and its end with the audit record; an unknown tool's call its end only; a
// subscriber that leaves gets nothing more.
func TestFeedPublishesEveryCall(t *testing.T) {
	t.Parallel()
	tb, ws, _ := open(t, nil, stepper)
	sub := tb.Feed().Subscribe(16)
	caller := tool.Identity{Channel: "test", SessionKey: "s1", AgentID: "ada"}
	r, err := tb.Runner(caller)
	if err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background(), tool.Call{ID: "c1", Name: "stepper", Arguments: json.RawMessage(`{"token":"sk-live-0123456789abcdef0123"}`)})
	r.Run(context.Background(), tool.Call{ID: "c2", Name: "no_such_tool", Arguments: json.RawMessage(`{}`)})
	sub.Close()
	call(t, tb, "c3", "stepper", `{}`)

	var got []string
	for e := range sub.Events() {
		got = append(got, string(e.Kind)+" "+e.CallID)
		switch e.Kind {
		case feed.Started:
			if e.Tool != "stepper" || strings.Contains(string(e.Args), "0123456789abcdef") || !strings.Contains(string(e.Args), "token") ||
				e.Caller.SessionKey != "s1" || e.Caller.AgentID != "ada" || e.Workspace != toolWorkspace(ws) || e.Time.IsZero() {
				t.Errorf("started: %+v (args %s)", e, e.Args)
			}
		case feed.Progress:
			if e.Text != "half way" {
				t.Errorf("progress: %q", e.Text)
			}
		case feed.Finished:
			if e.Record == nil || e.Record.CallID != e.CallID || strings.Contains(string(e.Record.Arguments), "0123456789abcdef") {
				t.Errorf("finished: %+v", e.Record)
			}
		case feed.Returned:
			if e.Result == nil || len(e.Result.Content) != 1 || e.Result.Content[0].Text != "done" {
				t.Errorf("returned: %+v", e.Result)
			}
		}
	}
	if want := "started c1,progress c1,returned c1,finished c1,finished c2"; strings.Join(got, ",") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, ","), want)
	}
}

// toolWorkspace is ws as calls see it: absolute, links resolved.
func toolWorkspace(ws string) string { return tool.ResolveDir(ws) }

// BenchmarkFeed measures calls through a runner of the root (a SQLite
// store, the audit spool) with nobody subscribed to the feed, and with
// one subscriber draining it: what watching the calls costs them.
func BenchmarkFeed(b *testing.B) {
	for _, watched := range []bool{false, true} {
		name := "unwatched"
		if watched {
			name = "one-subscriber"
		}
		b.Run(name, func(b *testing.B) {
			tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Workspace: b.TempDir(), DataDir: b.TempDir(), Tools: []tool.Tool{stepper}})
			if err != nil {
				b.Fatal(err)
			}
			defer tb.Close(context.Background())
			if watched {
				sub := tb.Feed().Subscribe(0)
				defer sub.Close()
				go func() {
					for range sub.Events() {
					}
				}()
			}
			r, err := tb.Runner(tool.Identity{Channel: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			call := tool.Call{Name: "stepper", Arguments: json.RawMessage(`{"token":"abc"}`)}
			for b.Loop() {
				if msg := r.Run(context.Background(), call); msg.IsError {
					b.Fatal(msg.Content)
				}
			}
		})
	}
}
