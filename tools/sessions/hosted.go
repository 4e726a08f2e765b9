package sessions

import (
	"context"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// RegisterHosted adds the tools that run sessions through the context's
// session host: sessions_spawn, subagents and sessions_send. Like the
// readers they are available when agents are configured; a call made
// where no host runs sessions (outside an agent run) is refused, saying so.
func RegisterHosted(reg *registry.Registry) error {
	for _, t := range []struct {
		id, label, description string
		factory                registry.Factory
		readOnly               bool
	}{
		{"sessions_spawn", "Spawn Sub-agent", spawnDescription, spawnTool, false},
		{"subagents", "Manage Sub-agents", subagentsDescription, subagentsTool, false},
		{"sessions_send", "Send to Session", sendDescription, sendTool, false},
	} {
		if err := reg.RegisterFactory(t.factory, tool.Meta{ID: t.id, Label: t.label, Description: t.description, ReadOnly: t.readOnly, Source: tool.SourceCore}); err != nil {
			return err
		}
	}
	return nil
}

const spawnDescription = "Start a sub-agent on a task in the background and return at once with its session key. " +
	"The sub-agent runs with its agent's system prompt and the task as its first message; when it finishes, its answer " +
	"comes back to you as a message that names it, so do not wait or poll: carry on, or end your turn. Use agents_list " +
	"for the agents you may spawn; several spawns in one turn run in parallel."

const subagentsDescription = "Manage your sub-agents: list them with their status (running, done, failed, aborted) and last answer; " +
	"steer one with a message (it sees it before its next step, or starts again if it had finished); kill one that is running."

const sendDescription = "Send a message to another session (sessions_list shows the ones you can reach) and, with timeoutSeconds, " +
	"wait for its reply. A reply that does not come in time gives a pending result with a handle: call again with the handle " +
	"(and timeoutSeconds) to wait for it."

// hostOf returns the context's session host and the caller's session key,
// or why it cannot be used.
func hostOf(tc *tool.Context, name string) (Host, error) {
	h, ok := HostService.Get(tc)
	if !ok {
		return nil, tool.InputErrorf("%s needs a session host, which runs only inside an agent run (toolbelt run or toolbelt chat, with --agent ID): this caller (channel %q) has none.", name, tc.Channel)
	}
	if tc.SessionKey == "" {
		return nil, tool.InputErrorf("%s needs a session: this call runs outside one (run the agent with --agent ID or --session KEY).", name)
	}
	return h, nil
}

type spawnArgs struct {
	Task              string `json:"task" jsonschema:"What the sub-agent should do, with everything it needs to know: it does not see your conversation." minLength:"1"`
	AgentID           string `json:"agentId,omitempty" jsonschema:"The agent to run (agents_list); default: your own agent."`
	Label             string `json:"label,omitempty" jsonschema:"A short name for the task, shown in subagents list and in its answer's message."`
	Model             string `json:"model,omitempty" jsonschema:"PROVIDER/MODEL to use instead of the agent's own."`
	Thinking          string `json:"thinking,omitempty" jsonschema:"How much the sub-agent's model thinks before it answers, instead of the agent's own setting." enum:"off,low,medium,high"`
	RunTimeoutSeconds int    `json:"runTimeoutSeconds,omitempty" jsonschema:"Stop the sub-agent's run after this many seconds (0: no limit); a run that times out is reported as failed." minimum:"0"`
}

func spawnTool(tc *tool.Context) (*tool.Tool, error) {
	if err := Usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("sessions_spawn", spawnDescription, func(ctx context.Context, in spawnArgs, inv tool.Invocation) (tool.Result, error) {
		h, err := hostOf(inv.Context, "sessions_spawn")
		if err != nil {
			return tool.Result{}, err
		}
		res, err := h.Spawn(ctx, tool.SpawnRequest{ParentKey: inv.Context.SessionKey, Task: in.Task, AgentID: in.AgentID, Label: in.Label, Model: in.Model, Thinking: in.Thinking,
			Timeout: time.Duration(in.RunTimeoutSeconds) * time.Second})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(res)
	})
	return &t, err
}

type subagentsArgs struct {
	Action     string `json:"action,omitempty" jsonschema:"list your sub-agents, steer one with a message, or kill one that runs." enum:"list,steer,kill" default:"list"`
	SessionKey string `json:"sessionKey,omitempty" jsonschema:"The sub-agent's session key (childSessionKey from sessions_spawn); for steer and kill."`
	Message    string `json:"message,omitempty" jsonschema:"What to tell the sub-agent; for steer."`
}

func subagentsTool(tc *tool.Context) (*tool.Tool, error) {
	if err := Usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("subagents", subagentsDescription, func(ctx context.Context, in subagentsArgs, inv tool.Invocation) (tool.Result, error) {
		h, err := hostOf(inv.Context, "subagents")
		if err != nil {
			return tool.Result{}, err
		}
		self := inv.Context.SessionKey
		if in.Action != "" && in.Action != "list" && in.SessionKey == "" {
			return tool.Result{}, tool.InputErrorf("subagents %s needs sessionKey: the sub-agent's session key (subagents list shows them).", in.Action)
		}
		switch in.Action {
		case "steer":
			if in.Message == "" {
				return tool.Result{}, tool.InputErrorf("subagents steer needs message: what to tell the sub-agent.")
			}
			if err := h.Steer(ctx, self, in.SessionKey, in.Message); err != nil {
				return tool.Result{}, err
			}
			return tool.JSON(map[string]any{"status": "steered", "sessionKey": in.SessionKey})
		case "kill":
			if err := h.Kill(ctx, self, in.SessionKey); err != nil {
				return tool.Result{}, err
			}
			return tool.JSON(map[string]any{"status": "aborted", "sessionKey": in.SessionKey})
		}
		list, err := h.Children(ctx, self)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(map[string]any{"count": len(list), "subagents": list})
	})
	return &t, err
}

type sendArgs struct {
	SessionKey     string `json:"sessionKey,omitempty" jsonschema:"The session to send to (sessions_list shows them)."`
	Message        string `json:"message,omitempty" jsonschema:"What to send."`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty" jsonschema:"How long to wait for the reply (0: do not wait)." minimum:"0" maximum:"600"`
	Handle         string `json:"handle,omitempty" jsonschema:"The handle of an earlier pending send, to wait for its reply instead of sending."`
	Steer          bool   `json:"steer,omitempty" jsonschema:"Steer a session that is running: it gets the message before its next step, and its tools still running are stopped. Without it the message waits until the session would stop."`
}

func sendTool(tc *tool.Context) (*tool.Tool, error) {
	if err := Usable(tc); err != nil {
		return nil, err
	}
	t, err := tool.New("sessions_send", sendDescription, func(ctx context.Context, in sendArgs, inv tool.Invocation) (tool.Result, error) {
		h, err := hostOf(inv.Context, "sessions_send")
		if err != nil {
			return tool.Result{}, err
		}
		wait := time.Duration(in.TimeoutSeconds) * time.Second
		self := inv.Context.SessionKey
		if in.Handle != "" {
			if in.Message != "" {
				return tool.Result{}, tool.InputErrorf("Give either handle (to wait for an earlier reply) or message (to send a new one), not both.")
			}
			res, err := h.Await(ctx, self, in.Handle, wait)
			if err != nil {
				return tool.Result{}, err
			}
			return tool.JSON(res)
		}
		if in.SessionKey == "" || in.Message == "" {
			return tool.Result{}, tool.InputErrorf("sessions_send needs sessionKey and message (or a handle from a pending send).")
		}
		info, ok, err := storeOf(inv.Context).Info(ctx, in.SessionKey)
		if err != nil {
			return tool.Result{}, err
		}
		if !ok {
			return tool.Result{}, tool.InputErrorf("No session %q: use sessions_list to see the sessions you can reach.", in.SessionKey)
		}
		if v := visibilityOf(inv.Context); !v.sees(info) {
			return tool.Result{}, tool.InputErrorf("%s.", v.why(in.SessionKey))
		}
		res, err := h.Send(ctx, tool.SendRequest{From: self, To: in.SessionKey, Message: in.Message, Timeout: wait, Steer: in.Steer})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(res)
	})
	return &t, err
}
