package toolbelt

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

// Turn is one prompt of a session's conversation and what followed it, up
// to the next prompt.
type Turn struct {
	// N counts the turns from 1.
	N int `json:"n"`
	// Index is the position of its prompt in the transcript: rewinding the
	// conversation to the turn keeps the messages before it.
	Index int `json:"index"`
	// Prompt is the prompt's text, and Time when it was sent.
	Prompt string    `json:"prompt"`
	Time   time.Time `json:"time"`
	// Calls are Toolbelt's ids of the turn's calls, in order.
	Calls []string `json:"calls,omitempty"`
	// Files are the files the turn's calls changed, as the undo journal
	// keeps them (see Toolbelt.TurnFiles).
	Files []string `json:"files,omitempty"`
	// Shell are the commands of the turn's shell calls (the runtime
	// section's tools: exec, process): what they changed is not in the
	// journal, so a rewind does not take it back.
	Shell []string `json:"shell,omitempty"`
}

// Turns splits a session's transcript into its turns: each user message
// starts one (a prompt, a follow-up, a sub-agent's answer).
func Turns(transcript []llm.Message) []Turn {
	var turns []Turn
	commands := map[string]string{} // by the provider's call id
	for i, m := range transcript {
		switch {
		case m.Role == llm.RoleUser:
			turns = append(turns, Turn{N: len(turns) + 1, Index: i, Prompt: m.Text(), Time: time.UnixMilli(m.Timestamp)})
		case len(turns) == 0:
		case m.Role == llm.RoleAssistant:
			for _, c := range m.ToolCalls() {
				var args struct{ Command string }
				_ = json.Unmarshal(c.Arguments, &args)
				commands[c.ID] = args.Command
			}
		case m.Role == llm.RoleToolResult && m.CallID != "":
			t := &turns[len(turns)-1]
			t.Calls = append(t.Calls, m.CallID)
			if isShell(m.ToolName) {
				t.Shell = append(t.Shell, m.ToolName+": "+commands[m.ToolCallID])
			}
		}
	}
	return turns
}

// isShell says whether name is a tool of the runtime section, whose
// changes the undo journal does not record.
func isShell(name string) bool {
	return slices.ContainsFunc(catalog.Entries(), func(e catalog.Entry) bool { return e.ID == name && e.Section == "runtime" })
}

// CallTurns are the turns of an MCP session: Toolbelt does not keep its
// conversation (the client does), so each call the audit log has of it
// is a turn of its own, its prompt the tool and arguments. ws is the
// workspace the calls ran in. A session with no MCP call has no turns.
func (tb *Toolbelt) CallTurns(ctx context.Context, session string) (turns []Turn, ws string, err error) {
	rs, err := tb.auditLog.List(ctx, auditlog.Filter{Session: session})
	if err != nil {
		return nil, "", err
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Kind != "" || r.Channel != "mcp" || r.DryRun || seen[r.CallID] {
			continue
		}
		seen[r.CallID], ws = true, r.Workspace
		t := Turn{N: len(turns) + 1, Prompt: r.Tool + " " + string(r.Arguments), Time: r.Time, Calls: []string{r.CallID}}
		if isShell(r.Tool) {
			var args struct{ Command string }
			_ = json.Unmarshal(r.Arguments, &args)
			t.Shell = []string{r.Tool + ": " + args.Command}
		}
		turns = append(turns, t)
	}
	return turns, ws, nil
}

// TurnFiles fills in the files each turn's calls changed in the workspace
// ws ("" for the root's), as the undo journal keeps them: what a rewind
// of files would take back.
func (tb *Toolbelt) TurnFiles(ctx context.Context, ws string, turns []Turn) error {
	j := tb.journal.In(tool.ResolveDir(cmp.Or(ws, tb.ws)))
	for i := range turns {
		for _, id := range turns[i].Calls {
			cs, err := j.Changes(ctx, id)
			if err != nil {
				return err
			}
			for _, c := range cs {
				if !slices.Contains(turns[i].Files, c.Path) {
					turns[i].Files = append(turns[i].Files, c.Path)
				}
			}
		}
	}
	return nil
}

// Rewind asks to take a session back to where it was before one of its
// turns.
type Rewind struct {
	// Session is the session's key; Kept says the store keeps it (a chat
	// without a session key keeps its conversation in memory only).
	Session string
	Kept    bool
	// Transcript is the session's conversation.
	Transcript []llm.Message
	// Turns, when set, are the turns of a session whose conversation
	// Toolbelt does not keep (see CallTurns): only their files can be
	// rewound.
	Turns []Turn
	// To is the turn to go back to (from 1): it and the turns after it
	// are taken back.
	To int
	// Files takes back the file changes of those turns' calls;
	// Conversation their messages (in the store, when it keeps the
	// session).
	Files, Conversation bool
	// Workspace is where the calls ran ("" for the root's); Caller who
	// asks, for the audit log.
	Workspace string
	Caller    tool.Identity
}

// RewindReport says what a rewind did.
type RewindReport struct {
	// To is the turn gone back to; Turns the turns taken back.
	To    int    `json:"to"`
	Turns []Turn `json:"turns"`
	// Undo says which files were put back; none when the turns changed
	// no file, or files were not asked for.
	Undo undo.Report `json:"undo"`
	// Keep is how many messages of the conversation are kept: the
	// conversation to continue with, when it was rewound.
	Keep int `json:"keep"`
	// NotCovered are the shell commands of the turns taken back: what they
	// changed stays.
	NotCovered []string `json:"notCovered,omitempty"`
}

// Rewind takes a session back to before turn r.To: the file changes of
// that turn's calls and those after it are undone together, all or
// nothing (refused, with nothing changed, when a file changed since by
// someone else: an *undo.ConflictError), then the conversation is cut
// before the turn. The rewind is recorded in the audit log (tool rewind),
// refused or not.
func (tb *Toolbelt) Rewind(ctx context.Context, r Rewind) (RewindReport, error) {
	started := time.Now()
	rep, err := tb.rewind(ctx, r)
	args, _ := json.Marshal(map[string]any{"session": r.Session, "to": r.To, "files": r.Files, "conversation": r.Conversation})
	rec := audit.Record{Time: started, CallID: tool.NewCallID("rewind"), Tool: "rewind", Arguments: args, Duration: time.Since(started)}
	caller := r.Caller
	caller.SessionKey, caller.Workspace = r.Session, tool.ResolveDir(r.Workspace)
	rec.SetCaller(caller)
	var conflict *undo.ConflictError
	switch {
	case errors.As(err, &conflict):
		rec.IsError, rec.ErrorClass = true, "conflict"
	case err != nil:
		rec.IsError, rec.ErrorClass = true, "refused"
	}
	if aerr := tb.Record(ctx, rec); aerr != nil {
		return rep, errors.Join(err, fmt.Errorf("recording the rewind in the audit log: %w", aerr))
	}
	return rep, err
}

func (tb *Toolbelt) rewind(ctx context.Context, r Rewind) (RewindReport, error) {
	turns := r.Turns
	switch {
	case turns == nil:
		turns = Turns(r.Transcript)
	case r.Conversation:
		return RewindReport{}, fmt.Errorf("toolbelt keeps no conversation of session %s (its MCP client keeps its own): only its files can be rewound", r.Session)
	}
	if r.To < 1 || r.To > len(turns) {
		return RewindReport{}, fmt.Errorf("there is no turn %d: the session has %d turn(s)", r.To, len(turns))
	}
	back := turns[r.To-1:]
	rep := RewindReport{To: r.To, Turns: back, Keep: len(r.Transcript)}
	var calls []string
	for _, t := range back {
		calls = append(calls, t.Calls...)
		rep.NotCovered = append(rep.NotCovered, t.Shell...)
	}
	if r.Files && len(calls) > 0 {
		u, err := tb.Undo(ctx, r.Workspace, calls...)
		if err != nil && !errors.Is(err, undo.ErrNothingToUndo) {
			return RewindReport{}, err
		}
		rep.Undo = u
	}
	if !r.Conversation {
		return rep, nil
	}
	rep.Keep = back[0].Index
	if r.Kept {
		if _, err := tb.st.Sessions().Truncate(ctx, r.Session, rep.Keep); err != nil {
			return rep, fmt.Errorf("%s; the conversation was not rewound", strings.TrimSuffix(err.Error(), "."))
		}
	}
	return rep, nil
}
