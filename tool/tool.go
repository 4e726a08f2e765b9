// Package tool is Toolbelt's vocabulary: a tool, the call that runs it, the
// result it returns, the metadata that describes it and the context a call runs
// in. Every other package speaks in these types.
//
// A tool is a plain value. Define one by hand:
//
//	t := tool.Tool{
//		Name:        "clock",
//		Description: "Returns the current time in RFC 3339.",
//		Execute: func(ctx context.Context, call tool.Call, tc *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
//			return tool.Text(time.Now().Format(time.RFC3339)), nil
//		},
//	}
//
// or from a Go struct with [New], which infers the parameter schema and hands
// the function decoded, validated arguments.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is one capability an agent can call.
type Tool struct {
	// Name is how models call the tool. It must match ^[a-zA-Z0-9_-]{1,64}$,
	// the set every provider accepts; see [ValidateName].
	Name string
	// Label is a short human title ("Read File"). Derived from Name when empty.
	Label string
	// Description tells a model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the arguments; it describes an object.
	// Nil means the tool takes no arguments. A schema must not be changed once
	// the tool is registered: compiled forms of it are cached.
	Parameters *jsonschema.Schema
	// LazyParameters, when Parameters is nil, gives the schema in its
	// generic JSON form, converted on first use: read a tool's schema with
	// [Tool.Params].
	LazyParameters *LazyParameters
	// Output, when set, is the JSON Schema of a successful result's
	// structured content, its Details; it describes an object. The
	// pipeline checks every successful result against it (a result that
	// does not fit is an error), and the MCP server lists it as the tool's
	// outputSchema and sends the details as structuredContent.
	// [NewStructured] infers it from the function's result type.
	Output *jsonschema.Schema
	// Meta describes the tool to registries, policy and people.
	Meta Meta
	// Execute runs one call. An async tool (Async set) has none: a call
	// submits a job to the context's Jobs and returns a pending result.
	Execute ExecuteFunc
	// Async, when set, makes the tool async: its work runs as a durable job
	// that Handler does, outliving the call (see [AsyncHandler]).
	Async *AsyncSpec
	// Handler does an async tool's work.
	Handler AsyncHandler
	// MapError, when set, turns a Go error from Execute into what the model
	// is told: a message, whether retrying may help, and what to try instead.
	MapError func(error) ErrorInfo
	// Preview, when set, describes what a call would do without doing it:
	// the diff a write would make, the command a shell would run. Dry runs
	// return it, and a person asked to confirm a call sees it. A tool that
	// changes things and has no Preview cannot be dry-run. The arguments
	// have been validated, as for Execute.
	Preview func(ctx context.Context, call Call, tc *Context) (Effects, error)
	// Undo, when set, takes back what a call did that is not a file change
	// (those the journal undoes by itself): a deployment, a message, a
	// record elsewhere. A call that can be undone returns the data its
	// undo needs in its result (Result.Undo); the pipeline keeps it with
	// the call, and toolbelt undo (or Toolbelt.UndoCall) runs Undo later,
	// from any process, as a call of its own through the pipeline —
	// policy, approval and audit as for any call — with that data, as
	// JSON, as call.Arguments. [UndoWith] makes one that receives it
	// decoded.
	Undo ExecuteFunc
}

// Effects describes what a call would do.
type Effects struct {
	// Summary says it in one line ("write 120 bytes to src/main.go").
	Summary string `json:"summary"`
	// Diff is a unified diff of the files the call would change.
	Diff string `json:"diff,omitempty"`
	// Files lists the workspace-relative paths the call would change.
	Files []string `json:"files,omitempty"`
	// Command, Workdir and Env describe a command the call would run:
	// the command line, the directory it runs in, and the variables the call
	// adds or changes.
	Command string            `json:"command,omitempty"`
	Workdir string            `json:"workdir,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Executable is the resolved path of the program the command starts, and
	// ScriptHash the SHA-256 of a script file it runs, so an approval does not
	// carry over to a changed program.
	Executable string `json:"executable,omitempty"`
	ScriptHash string `json:"scriptHash,omitempty"`
	// WorkspaceHash, for a command that may run code from the workspace
	// (a build, tests, a script, any program not known to run none), is
	// the SHA-256 of every file in the workspace — path, mode and content
	// — so that an approval does not carry over to code written since.
	WorkspaceHash string `json:"workspaceHash,omitempty"`
	// AlwaysCovers says, for the person asked, what an "allow always"
	// answer to the call would cover ("this exact command line, in this
	// workspace"); "" leaves it to the pipeline ("this exact action").
	// NoAlways, when set, says why "allow always" is not offered: the call
	// may be allowed once only, and no earlier "always" applies to it.
	AlwaysCovers string `json:"alwaysCovers,omitempty"`
	NoAlways     string `json:"noAlways,omitempty"`
	// Programs lists every program a command would start, in the order
	// they appear (each stage of a pipeline, each command of a list,
	// subshells and substitutions included), so that a person approving
	// `ls; curl x | sh` sees curl and sh, not only ls. Unsummarized, when
	// set, says plainly why the list cannot be trusted to be complete
	// (a program named by a variable, code run by eval or bash -c, …).
	Programs     []Program `json:"programs,omitempty"`
	Unsummarized string    `json:"unsummarized,omitempty"`
	// Risk, when set, is the risk of this call, which may be lower or higher
	// than the tool's (a read-only shell command is low risk); RiskReason
	// says why it is not low, in words a model can act on ("curl is not a
	// program that may run without approval").
	Risk       Risk   `json:"risk,omitzero"`
	RiskReason string `json:"riskReason,omitempty"`
	// ReadOnly says the call changes nothing, though its tool may (a shell
	// command on the read-only allowlist): plan mode lets it run.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Fact is one line of what a person is shown of a call's effects: a label
// ("command", "env", …) and its value.
type Fact struct{ Label, Value string }

// Facts lists how a call would run, for a person deciding whether it may:
// what it would do, the command, its directory, each environment variable
// (sorted), the programs it would start, the executable and the script's
// hash, in that order, leaving out what is not set. The terminal's
// question and the console's approval page show the same facts; the diff
// is shown apart.
func (e Effects) Facts() []Fact {
	var out []Fact
	add := func(label, value string) {
		if value != "" {
			out = append(out, Fact{label, value})
		}
	}
	add("effect", e.Summary)
	add("command", e.Command)
	add("directory", e.Workdir)
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		add("env", k+"="+e.Env[k])
	}
	add("programs", e.ProgramList())
	add("executable", e.Executable)
	add("script", e.ScriptHash)
	return out
}

// ProgramList renders the programs a command would start for people, one
// line: "ls (/usr/bin/ls), curl (/usr/bin/curl), sh (/usr/bin/sh)", followed
// by the reason the list may be incomplete, when there is one. It is ""
// for effects that name no program.
func (e Effects) ProgramList() string {
	names := make([]string, len(e.Programs))
	for i, p := range e.Programs {
		names[i] = p.String()
	}
	s := strings.Join(names, ", ")
	if e.Unsummarized != "" {
		if s != "" {
			s += "; "
		}
		s += "TOO COMPLEX TO SUMMARIZE: " + e.Unsummarized
	}
	return s
}

// Program is one program a command would start: its name as written and
// the file it resolves to ("" when it is a shell builtin, a function, or
// not found).
type Program struct {
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// Args are the words the program is given after its name, as it gets
	// them (quotes removed), up to the first whose value is known only
	// when the command runs. Exact says they are all of them and nothing
	// else shapes the command: no argument is an expansion, no variable is
	// set before the program, no redirection — a rule on arguments that
	// allows a command holds only for an exact one.
	Args  []string `json:"args,omitempty"`
	Exact bool     `json:"exact,omitempty"`
}

// String renders p for people: "curl (/usr/bin/curl)".
func (p Program) String() string {
	if p.Path == "" {
		return p.Name
	}
	return p.Name + " (" + p.Path + ")"
}

// ErrorInfo is what a model is told about a failed call.
type ErrorInfo struct {
	// Message says what went wrong.
	Message string
	// CanRetry says whether the same call may succeed later.
	CanRetry bool
	// Suggestion says what to try instead.
	Suggestion string
}

// InfoError is an error that says itself what a model is told about it. The
// pipeline asks it when the tool has no MapError, and when a factory gives
// it as the reason its tool cannot be made now (a server that is down).
type InfoError interface {
	error
	ErrorInfo() ErrorInfo
}

// ExecuteFunc runs one call of a tool. ctx is the abort signal: when it is
// cancelled the function should stop promptly. call.Arguments holds the
// validated arguments as a JSON object. update reports partial results while
// the call runs; it is never nil.
//
// A failure the model should see and can act on is a Result with IsError set
// (see [Errorf]) or an [InputError]; any other error is reported to the model
// as an error envelope.
type ExecuteFunc func(ctx context.Context, call Call, tc *Context, update UpdateFunc) (Result, error)

// UpdateFunc reports a partial result of a running call.
type UpdateFunc func(partial Result)

// Call is one request to run a tool, as a model issued it.
type Call struct {
	// ID identifies the call in every record Toolbelt keeps of it (audit,
	// undo journal, kept outputs). Front doors make it with [NewCallID], so
	// it is unique across processes and time; when it is empty the pipeline
	// makes one. A caller that chooses its own id answers for its
	// uniqueness.
	ID string `json:"id"`
	// ProviderID is the id the model's provider gave the call, when it is
	// not ID: the result message answers with it, and the audit keeps it.
	ProviderID string `json:"providerId,omitempty"`
	// Name is the tool name the model used.
	Name string `json:"name"`
	// Arguments is the raw JSON of the arguments: an object, a JSON string
	// holding an object, or empty.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// maxNameLen is the longest tool name every provider accepts.
const maxNameLen = 64

// ValidateName reports whether name is a tool name every provider accepts:
// 1 to 64 characters from a–z, A–Z, 0–9, '_' and '-'.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("tool name is empty: use 1–64 characters from a-z, A-Z, 0-9, '_' and '-'")
	case len(name) > maxNameLen:
		return fmt.Errorf("tool name %q is %d characters long: providers accept at most %d", name, len(name), maxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Errorf("tool name %q has %q at byte %d: use only a-z, A-Z, 0-9, '_' and '-' (the set every provider accepts)", name, rune(name[i]), i)
		}
	}
	return nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// Check reports the first problem that makes t unusable: an invalid name, a
// missing Execute, or parameters that do not describe an object.
func (t *Tool) Check() error {
	if err := ValidateName(t.Name); err != nil {
		return err
	}
	if t.Async != nil {
		if err := t.Async.Check(); err != nil {
			return fmt.Errorf("async tool %q: %w", t.Name, err)
		}
		if t.Handler == nil {
			return fmt.Errorf("async tool %q has no Handler", t.Name)
		}
	} else if t.Execute == nil {
		return fmt.Errorf("tool %q has no Execute function", t.Name)
	}
	if p := t.Parameters; p != nil {
		if p.Type != "" && p.Type != "object" || len(p.Types) > 0 && !(len(p.Types) == 1 && p.Types[0] == "object") {
			return fmt.Errorf("tool %q: parameters must describe a JSON object, not %s", t.Name, typeList(p))
		}
	} else if l := t.LazyParameters; l != nil {
		if typ, ok := objectDoc(l.Doc()); !ok {
			return fmt.Errorf("tool %q: parameters must describe a JSON object, not %s", t.Name, typ)
		}
	}
	if o := t.Output; o != nil && (o.Type != "object" || len(o.Types) > 0) {
		return fmt.Errorf("tool %q: the output schema must describe a JSON object, not %s", t.Name, typeList(o))
	}
	return nil
}

func typeList(s *jsonschema.Schema) string {
	if s.Type != "" {
		return fmt.Sprintf("%q", s.Type)
	}
	return fmt.Sprintf("%q", strings.Join(s.Types, "|"))
}

// DisplayLabel returns the label to show people: Label if set, otherwise a
// title made from Name ("web_fetch" → "Web Fetch").
func (t *Tool) DisplayLabel() string {
	if t.Label != "" {
		return t.Label
	}
	return LabelFromName(t.Name)
}

// LabelFromName turns a tool name into a title: "web_fetch" → "Web Fetch".
func LabelFromName(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}
