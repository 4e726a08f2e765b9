package automation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	agentlist "github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/cron"
)

func text(m tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	var c bytes.Buffer
	if json.Compact(&c, []byte(b.String())) == nil {
		return c.String()
	}
	return b.String()
}

// TestCronTool drives the cron tool through the pipeline as a model would.
func TestCronTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{})
	call := func(args string) tool.ResultMessage {
		return r.run.Run(ctx, tool.Call{Name: "cron", Arguments: json.RawMessage(args)})
	}
	added := call(`{"action":"add","name":"ping","every":"10m","tool":"echo","arguments":{"text":"ping"}}`)
	var out struct {
		Added tool.Schedule `json:"added"`
	}
	if added.IsError || json.Unmarshal([]byte(text(added)), &out) != nil || out.Added.Kind != "every" || out.Added.Every != "10m0s" ||
		out.Added.Owner.Principal != "alice" || out.Added.Owner.Channel != "mcp" || !out.Added.Enabled {
		t.Fatalf("%s", text(added))
	}
	id := out.Added.ID
	for _, tt := range []struct {
		name, args string
		isError    bool
		has        string
	}{
		{"list", `{"action":"list"}`, false, id},
		{"status", `{"action":"status"}`, false, `{"schedules":1,"enabled":1,"next":{"id":"` + id + `","name":"ping","at":`},
		{"update the timing", `{"action":"update","id":"` + id + `","expr":"0 9 * * 1-5","tz":"America/New_York"}`, false, `"kind":"cron"`},
		{"change only the zone", `{"action":"update","id":"` + id + `","tz":"Asia/Tokyo"}`, false, `"expr":"0 9 * * 1-5","tz":"Asia/Tokyo"`},
		{"change only the expression", `{"action":"update","id":"` + id + `","expr":"0 10 * * *"}`, false, `"expr":"0 10 * * *","tz":"Asia/Tokyo"`},
		{"change only the arguments", `{"action":"update","id":"` + id + `","arguments":{"text":"pong"}}`, false, `"tool":"echo","arguments":{"text":"pong"}`},
		{"pause", `{"action":"update","id":"` + id + `","enabled":false}`, false, `"enabled":false`},
		{"status paused", `{"action":"status"}`, false, `{"schedules":1,"enabled":0,"next":null,`},
		{"run now", `{"action":"run","id":"` + id + `"}`, false, `"summary":"echo: pong"`},
		{"history", `{"action":"runs","id":"` + id + `"}`, false, `"trigger":"manual"`},
		{"bad expression", `{"action":"add","expr":"0 25 * * *","tool":"echo"}`, true, `expr \"0 25 * * *\"`},
		{"too few fields", `{"action":"add","expr":"0 9 *","tool":"echo"}`, true, "has 3 fields"},
		{"unknown zone", `{"action":"add","expr":"0 9 * * *","tz":"Europe/Atlantis","tool":"echo"}`, true, `unknown time zone \"Europe/Atlantis\"`},
		{"no timing", `{"action":"add","tool":"echo"}`, true, "exactly one of expr"},
		{"two timings", `{"action":"add","every":"1h","at":"2030-01-01T00:00:00Z","tool":"echo"}`, true, "exactly one of expr"},
		{"bad at", `{"action":"add","at":"tomorrow","tool":"echo"}`, true, "not valid date-time"},
		{"at in the past", `{"action":"add","at":"2020-01-01T00:00:00Z","tool":"echo"}`, true, "is in the past"},
		{"no payload", `{"action":"add","every":"1h"}`, true, "needs a payload"},
		{"two payloads", `{"action":"add","every":"1h","tool":"echo","message":"hi"}`, true, "not both"},
		{"cron calling cron", `{"action":"add","every":"1h","tool":"cron"}`, true, "cannot call cron"},
		{"unknown id", `{"action":"run","id":"cron_nope"}`, true, `No schedule \"cron_nope\"`},
		{"remove unknown", `{"action":"remove","id":"cron_nope"}`, true, `No schedule \"cron_nope\"`},
		{"missing id", `{"action":"runs"}`, true, "runs needs id"},
		{"remove", `{"action":"remove","id":"` + id + `"}`, false, `"removed":"` + id + `"`},
		{"gone", `{"action":"runs","id":"` + id + `"}`, true, "No schedule"},
	} {
		m := call(tt.args)
		if m.IsError != tt.isError || !strings.Contains(text(m), tt.has) {
			t.Errorf("%s: isError %v, %s; want %q", tt.name, m.IsError, text(m), tt.has)
		}
	}
}

// TestCronToolRefusesEscapes: a sandboxed caller or a sub-agent cannot
// schedule tool calls (they would run outside its sandbox or policy), and an
// agent cannot message agents it may not target.
func TestCronToolRefusesEscapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, storetest.Open(t, t.TempDir()+"/t.db"), new(atomic.Int32), automation.Options{})
	agents := []tool.AgentInfo{{ID: "writer", Spawns: []string{"checker"}}, {ID: "checker"}, {ID: "admin"}}
	for _, tt := range []struct {
		name string
		tc   tool.Context
		args string
		has  string
	}{
		{"sandboxed tool call", tool.Context{Identity: tool.Identity{Sandboxed: true}}, `{"action":"add","every":"1h","tool":"echo"}`, "cannot schedule tool calls"},
		{"sub-agent tool call", tool.Context{Identity: tool.Identity{Subagent: true, AgentID: "checker"}}, `{"action":"add","every":"1h","tool":"echo"}`, "cannot schedule tool calls"},
		{"message to an agent not allowed", tool.Context{Identity: tool.Identity{AgentID: "writer"}}, `{"action":"add","every":"1h","message":"hi","agentId":"admin"}`, "may not send messages to agent"},
		{"unknown agent", tool.Context{Identity: tool.Identity{AgentID: "writer"}}, `{"action":"add","every":"1h","message":"hi","agentId":"ghost"}`, "is configured. Configured: writer, checker, admin"},
		{"message to an allowed agent", tool.Context{Identity: tool.Identity{AgentID: "writer"}}, `{"action":"add","every":"1h","message":"check","agentId":"checker"}`, `"agentId":"checker"`},
		{"reminder to oneself", tool.Context{Identity: tool.Identity{AgentID: "writer", SessionKey: "agent:writer:main"}}, `{"action":"add","every":"1h","message":"stretch"}`, `"sessionKey":"agent:writer:main"`},
	} {
		tc := tt.tc
		tc.Owner = true
		cron.SchedulerService.Set(&tc, r.sched)
		agentlist.ListService.Set(&tc, agents)
		m := invoke.New(r.reg, &tc).Run(ctx, tool.Call{Name: "cron", Arguments: json.RawMessage(tt.args)})
		allowed := strings.HasPrefix(tt.name, "message to an allowed") || strings.HasPrefix(tt.name, "reminder")
		if m.IsError == allowed || !strings.Contains(text(m), tt.has) {
			t.Errorf("%s: isError %v, %s; want %q", tt.name, m.IsError, text(m), tt.has)
		}
	}
}

// TestCronToolKeepsSettersApart: a schedule records the whole identity of
// who set it. A caller sees, changes and runs only schedules set with
// rights it has: a sub-agent cannot touch the owner's. Changing what a
// schedule does makes it the changer's; changing only when keeps its
// setter. A sub-agent's scheduled messages go to its own session only.
func TestCronToolKeepsSettersApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, t.TempDir()+"/t.db")
	r := newRig(t, st, new(atomic.Int32), automation.Options{})
	agents := []tool.AgentInfo{{ID: "lead", Spawns: []string{"checker"}}, {ID: "checker", Spawns: []string{"checker"}}}
	owner := tool.Context{Identity: tool.Identity{Owner: true, Channel: "cli"}}
	sub := tool.Context{Identity: tool.Identity{Owner: true, Channel: "cli", AgentID: "checker", SessionKey: "agent:checker:subagent:1", Subagent: true}}
	call := func(tc tool.Context, args string) (string, bool) {
		t.Helper()
		cron.SchedulerService.Set(&tc, r.sched)
		agentlist.ListService.Set(&tc, agents)
		m := invoke.New(r.reg, &tc).Run(ctx, tool.Call{Name: "cron", Arguments: json.RawMessage(args)})
		return text(m), m.IsError
	}
	added := func(tc tool.Context, args string) tool.Schedule {
		t.Helper()
		out, isErr := call(tc, args)
		var got struct {
			Added tool.Schedule `json:"added"`
		}
		if isErr || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("add %s: %s", args, out)
		}
		return got.Added
	}
	mine := added(owner, `{"action":"add","every":"1h","tool":"echo","arguments":{"text":"owner"}}`)
	if mine.Owner != owner.Identity {
		t.Fatalf("the owner's schedule records %+v", mine.Owner)
	}
	theirs := added(sub, `{"action":"add","every":"1h","message":"wake up"}`)
	if want := sub.Identity; theirs.Owner != want || theirs.Payload.SessionKey != want.SessionKey || theirs.Payload.AgentID != "checker" {
		t.Fatalf("the sub-agent's schedule: %+v", theirs)
	}
	for _, args := range []string{
		`{"action":"update","id":"` + mine.ID + `","arguments":{"text":"sub"}}`,
		`{"action":"run","id":"` + mine.ID + `"}`,
		`{"action":"runs","id":"` + mine.ID + `"}`,
		`{"action":"remove","id":"` + mine.ID + `"}`,
	} {
		if out, isErr := call(sub, args); !isErr || !strings.Contains(out, "was set with rights you lack (it runs without the sub-agent policy)") {
			t.Errorf("the sub-agent on the owner's schedule, %s: %s", args, out)
		}
	}
	if out, _ := call(sub, `{"action":"list"}`); strings.Contains(out, mine.ID) || !strings.Contains(out, theirs.ID) {
		t.Errorf("the sub-agent's list: %s", out)
	}
	for _, args := range []string{
		`{"action":"add","every":"1h","message":"write","sessionKey":"agent:checker:main"}`,
		`{"action":"add","every":"1h","message":"write","agentId":"lead"}`,
		`{"action":"update","id":"` + theirs.ID + `","sessionKey":"agent:checker:main"}`,
	} {
		if out, isErr := call(sub, args); !isErr || !strings.Contains(out, "A sub-agent may schedule messages only to its own session (agent:checker:subagent:1)") {
			t.Errorf("the sub-agent messages another session, %s: %s", args, out)
		}
	}
	get := func(id string) tool.Schedule {
		t.Helper()
		s, err := r.sched.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The owner may change when the sub-agent's reminder runs: it stays
	// the sub-agent's. Changing what it says makes it the owner's.
	if out, isErr := call(owner, `{"action":"update","id":"`+theirs.ID+`","every":"2h"}`); isErr || get(theirs.ID).Owner != sub.Identity {
		t.Errorf("a change of timing changed who set it: %s %+v", out, get(theirs.ID).Owner)
	}
	if out, isErr := call(owner, `{"action":"update","id":"`+theirs.ID+`","message":"tidy up","sessionKey":"agent:checker:subagent:1","agentId":"checker"}`); isErr || get(theirs.ID).Owner != owner.Identity {
		t.Errorf("a change of the message did not make it the owner's: %s %+v", out, get(theirs.ID).Owner)
	}
	// A schedule kept before setters were recorded: only a caller with
	// every right touches it, and giving it a payload gives it a setter.
	if err := st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE schedules SET owner = ? WHERE id = ?", `{"channel":"cli","agentId":"checker"}`, mine.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if out, isErr := call(sub, `{"action":"run","id":"`+mine.ID+`"}`); !isErr || !strings.Contains(out, "was set with rights you lack") {
		t.Errorf("the sub-agent ran an old schedule: %s", out)
	}
	if out, isErr := call(owner, `{"action":"update","id":"`+mine.ID+`","arguments":{"text":"again"}}`); isErr || get(mine.ID).Legacy || get(mine.ID).Owner != owner.Identity {
		t.Errorf("the owner's update of an old schedule: %s %+v", out, get(mine.ID))
	}
}
