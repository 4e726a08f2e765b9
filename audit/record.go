// Package audit defines what the audit log keeps of every call: the
// Record of who asked for what, what each policy layer decided (Verdict),
// what a person said (Confirmation) and how the call ended. Arguments are
// kept redacted (Redact): each secret is replaced by "[redacted]" where it
// stands, the rest of the value kept, and large values by their size and
// hash.
//
// The package links no database, so the pipeline fills records without one;
// the log itself — a hash chain in the store, with its spool and verifier —
// is package auditlog.
package audit

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// ErrNotDurable matches the error of an audit log's Durable, and of an
// Append whose record could not be made durable now: the record is kept in
// memory and written once it can be.
var ErrNotDurable = errors.New("audit records cannot be made durable")

// Record is one call as the audit log keeps it. The pipeline sets every
// field; Append fills Time when it is zero and sets Seq and Hash.
type Record struct {
	// ID is the record's own id, unique across processes and time, made
	// when the record is prepared for the log (a spool line carries it), so
	// a record moved into the log again after a crash is found and added
	// once. Records written before ids were kept have none.
	ID string `json:"id,omitempty"`
	// Seq is the record's place in the log, from 1.
	Seq int64 `json:"seq"`
	// Kind is "" for a call; KindRecovery for what recovering a spool
	// found (a torn record dropped, a garbled line set aside), told in
	// Note; KindApprovalsRevoked for approvals a person revoked.
	Kind string `json:"kind,omitempty"`
	// Note says what happened, for records that are not calls; for a call,
	// what its result's details say the record keeps (the answer a person
	// gave to ask_user; see invoke.AuditNoter).
	Note string `json:"note,omitempty"`
	// Time is when the call was made.
	Time time.Time `json:"time"`
	// CallID is the call's id: unique across processes and time when
	// Toolbelt made it (tool.NewCallID); undo and result_read take it.
	CallID string `json:"callId"`
	// ProviderCallID is the id the model's provider gave the call, when it
	// is not CallID.
	ProviderCallID string `json:"providerCallId,omitempty"`
	// Tool is the tool called, as resolved (or as asked for, when it was
	// unknown).
	Tool string `json:"tool"`
	// AgentID, SessionKey and Channel say who called, in which
	// conversation, from where; Owner that the caller was known to be the
	// owner. SetCaller sets them, Principal and Workspace from the call's
	// identity; they are kept apart, not as a tool.Identity, so records
	// hash as they always have.
	AgentID    string `json:"agentId"`
	SessionKey string `json:"sessionKey"`
	Channel    string `json:"channel"`
	Owner      bool   `json:"owner"`
	// Principal is who the caller authenticated as (over MCP's HTTP
	// transport, the principal its bearer token maps to).
	Principal string `json:"principal,omitempty"`
	// Workspace is the directory the call worked in, absolute with its
	// symbolic links resolved; "" when it had none.
	Workspace string `json:"workspace,omitempty"`
	// Provider is the model provider (or provider/model) that made the
	// call.
	Provider string `json:"provider"`
	// Arguments are the call's arguments. Append redacts them; records read
	// back hold the redacted form.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Effect is what the call acted on or would do, in one line, as its
	// tool's preview says ("browser act click e3 on https://…/form"),
	// for calls whose arguments do not say it; "" when the tool has no
	// preview.
	Effect string `json:"effect,omitempty"`
	// Verdicts are each policy layer's decision, in the order they ran.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Confirmation is what a person (or a stand-in) was asked and said;
	// nil when confirmation did not come up.
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// Questions are the approvals the tool asked for while the call ran
	// (tool.Ask: may the sandboxed command reach this host?), in order,
	// each with what came of it.
	Questions []Question `json:"questions,omitempty"`
	// Requests are the requests for input (elicitation) or for a model's
	// completion (sampling) the tool made of the caller's side while the
	// call ran (package interact), in order, each with what came of it.
	Requests []Request `json:"requests,omitempty"`
	// Network lists the hosts the call's work asked the network for through
	// a filtering proxy, reached or refused and why (tool.RecordHosts);
	// for a command left running in the background, those it asked for
	// after its call had returned are in the records of the process calls
	// that followed it.
	Network []tool.HostUse `json:"network,omitempty"`
	// Duration is how long the call took.
	Duration time.Duration `json:"durationNs"`
	// ResultBytes is the size of the result's content.
	ResultBytes int `json:"resultBytes"`
	// IsError says the call ended in an error result; ErrorClass says
	// which kind ("validation", "blocked", "denied", "timeout",
	// "cancelled", "tool", "panic", "unknown-tool", …).
	IsError    bool   `json:"isError"`
	ErrorClass string `json:"errorClass"`
	// DryRun says the call only described what it would do.
	DryRun bool `json:"dryRun"`
	// Mode is the permission mode the call ran in ("default",
	// "acceptEdits", "plan", "dontAsk", "bypass"; see policy.Mode), or,
	// for a KindModeChanged record, the mode chosen. Records written
	// before modes existed have none, and verify as they always have.
	Mode string `json:"mode,omitempty"`
	// UndoOf, for the undo of a call by its tool's undo step, is the id of
	// the call undone.
	UndoOf string `json:"undoOf,omitempty"`
	// Hash is the record's hash in the chain (hex SHA-256).
	Hash string `json:"hash,omitempty"`
}

// SetCaller records id as who made the call, and where: its agent,
// session, channel, owner flag and principal, and the workspace, which
// should be resolved (tool.Identity.Scope).
func (r *Record) SetCaller(id tool.Identity) {
	r.AgentID, r.SessionKey, r.Channel, r.Owner, r.Principal, r.Workspace = id.AgentID, id.SessionKey, id.Channel, id.Owner, id.Principal, id.Workspace
}

// KindModeChanged is the Kind of a record that says a person switched the
// permission mode of a server's calls: the mode chosen in Mode, who and
// from which mode in Note.
const KindModeChanged = "mode-changed"

// KindRecovery is the Kind of a record that says what recovering a spool
// found besides records: bytes of a torn record dropped from its end, a
// garbled line set aside.
const KindRecovery = "recovery"

// KindApprovalsRevoked is the Kind of a record that says a person revoked
// approvals kept for a workspace: who, which and how many, in Note. (A
// granted one is in the record of the call it was given for: its
// Confirmation's answer "allow-workspace", who and when.)
const KindApprovalsRevoked = "approvals-revoked"

// KindMessageIgnored is the Kind of a record of a channel message no agent
// was given: its sender is neither an owner nor allowed on the channel, or
// over the sender's rate limit (Note says which, Principal is the sender).
const KindMessageIgnored = "message-ignored"

// KindRepair is the Kind of a record of a model's repair of a call's
// arguments after they failed validation twice (agent.Repair): Arguments
// holds what was repaired (model, original, repaired, error), CallID the
// repaired call's id (the failed call's when the repair failed), Note says
// what happened.
const KindRepair = "repair"

// Verdict is one policy layer's decision on a call.
type Verdict struct {
	// Layer names the layer ("profile", "global", "provider", "agent", …).
	Layer string `json:"layer"`
	// Decision is "allow", "deny", "ask", or "none" when no rule of the
	// layer names the tool.
	Decision string `json:"decision"`
	// Rule is the rule that decided, as written in the configuration.
	Rule string `json:"rule"`
}

// Confirmation is what came of asking for a call to be confirmed.
type Confirmation struct {
	// Asked says a confirmer was asked.
	Asked bool `json:"asked"`
	// Answer is "allow-once", "allow-session" (for the caller's session,
	// in memory), "allow-workspace" (kept for the workspace until
	// revoked), "allow-rule" (a rule was saved for the workspace),
	// "allowed-before" (an earlier such answer held),
	// "allowed-by-rule" (an allow rule on arguments approved it), "deny",
	// "timeout", "none" (no confirmer), or "mode-allow" or "mode-deny"
	// (the permission mode answered in a person's place, By names it).
	Answer string `json:"answer"`
	// By says who or what answered ("terminal", "--yes", "callback", a
	// person's name, …).
	By string `json:"by"`
	// At is when the answer came.
	At time.Time `json:"at,omitzero"`
	// Rule is the rule saved for the workspace that allowed the call
	// ("allowed-by-rule"), or the one the person saved with their answer
	// ("allow-rule").
	Rule string `json:"rule,omitempty"`
	// Reason is the reason given with a denial, passed on to the model.
	Reason string `json:"reason,omitempty"`
}

// Question is an approval a tool asked for while its call ran, and what
// came of it.
type Question struct {
	// Message is what was asked, with the facts.
	Message string `json:"message"`
	Confirmation
}

// Request is a request a tool made of the caller's side while its call ran
// (package interact): what was asked, never what was answered.
type Request struct {
	// Kind is "elicitation" or "sampling".
	Kind string `json:"kind"`
	// Message is the form's message, or the last message of the prompt,
	// redacted and cut.
	Message string `json:"message,omitempty"`
	// Fields are the names of the form's fields.
	Fields []string `json:"fields,omitempty"`
	// MaxTokens is the prompt's bound on the completion.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Outcome is "accept", "decline" or "cancel" (the person's action),
	// "completed" (a completion came), "handed-over" (the MCP client
	// answers it with the call made again: the next round's record has
	// the answer), "denied" (the configuration forbids it), "unsupported"
	// (nobody could answer), "invalid" or "failed".
	Outcome string `json:"outcome"`
	// By says who answered; Model which model completed.
	By    string `json:"by,omitempty"`
	Model string `json:"model,omitempty"`
	// Reason says why it was denied, unsupported, invalid or failed.
	Reason string `json:"reason,omitempty"`
	// Mode is "url" for a request that sent the person to an address
	// (url-mode elicitation); Host is that address's host, all that is
	// kept of it (its path and query may carry tokens).
	Mode string `json:"mode,omitempty"`
	Host string `json:"host,omitempty"`
}

// Decision sums up the outcome for people: "deny" when a layer denied the
// call; else the answer when a person (or a stand-in) was asked;
// "unconfirmed" when the call needed approval and nobody could give it;
// "allowed-before" when an earlier answer for the session or workspace
// held; "mode-allow" or "mode-deny" when the permission mode answered; else "ask" when a
// layer asked; else "allow" when policy ran; "" when it did not.
func (r Record) Decision() string {
	asked := false
	for _, v := range r.Verdicts {
		switch v.Decision {
		case "deny":
			return "deny"
		case "ask":
			asked = true
		}
	}
	if c := r.Confirmation; c != nil {
		switch {
		case c.Asked:
			return c.Answer
		case c.Answer == "none":
			return "unconfirmed"
		case c.Answer == "allowed-before", strings.HasPrefix(c.Answer, "mode-"):
			return c.Answer
		}
	}
	switch {
	case asked:
		return "ask"
	case len(r.Verdicts) > 0:
		return "allow"
	}
	return ""
}

// Rounded keeps a duration readable where people see it (the CLI's audit
// listing, the console): whole milliseconds from a millisecond on, whole
// microseconds below.
func Rounded(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}
