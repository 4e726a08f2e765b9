package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/toolbelt/toolbelt/fsbridge"
)

// Context says who and where a call runs for, and what it runs with.
// Factories receive it when tools are resolved and Execute receives it on
// every call. Tools must treat it as read-only.
//
// Its fields hold what the pipeline itself uses: Outputs (invoke keeps cut
// text there), Journal (undo reverses what it records) and Jobs (invoke
// submits async calls to it). A service only some tools use is declared in
// their package and carried under its key (see [Service]).
type Context struct {
	// Identity is who the call runs as and in which workspace; its fields
	// read as the context's own (tc.SessionKey, tc.Workspace). The pipeline
	// hands a call for a caller (invoke.WithCaller) a context whose
	// identity says so.
	Identity
	// AgentDir holds the agent's own files (configuration, memory).
	AgentDir string
	// FSRoot is the root the file bridge is confined to.
	FSRoot string
	// FS is the file bridge file tools use; nil when there is none.
	FS fsbridge.Bridge
	// Config holds tool settings by key (usually a section name).
	Config Config
	// Outputs keeps the full text of results the pipeline cut short, so a
	// model can read the rest (the result_read tool); nil when there is none.
	Outputs Outputs
	// Journal records the file changes calls make, so they can be undone;
	// nil when changes are not recorded.
	Journal Journal
	// Jobs is the durable job queue async tools submit to and the job
	// tools read; nil when there is none (async tools then cannot run).
	Jobs Jobs

	// services are the services of tool packages, by key (see [Service]).
	services map[any]any
}

// Journal records what is needed to reverse the file changes of calls.
type Journal interface {
	// Record keeps one change a call made to a file, after it is made.
	Record(ctx context.Context, callID string, c FileChange) error
}

// UndoStep is what taking back a call of a tool with an undo step
// (Tool.Undo) needs: the tool, and the data the call's result kept for it.
type UndoStep struct {
	Tool string
	Data json.RawMessage
}

// StepJournal is a Journal that also keeps the undo steps of calls (the
// store's journal is one). The pipeline keeps a call's step in the
// journal of its context when the call's result has undo data; the
// workspace and session are those of the scope ctx carries.
type StepJournal interface {
	Journal
	// RecordStep keeps the undo step of the call.
	RecordStep(ctx context.Context, callID string, s UndoStep) error
}

// IntentJournal is a Journal that keeps what a call is about to change
// before any file changes, so that a change cut short — the process killed
// between two files, or before the call's answer — is completed or rolled
// back, and recorded, when Toolbelt next starts (the store's journal is
// one). The file tools use it when the journal of their context is one:
// Intend before the first file changes (when it fails, no file changes),
// then Made once every file is changed, or Dropped when a failure stopped
// the change. The changes become the call's journal entry, as Record keeps
// them.
type IntentJournal interface {
	Journal
	// Intend keeps in, durably, before any of its files changes.
	Intend(ctx context.Context, in Intent) error
	// Made says every change of the call's intent is made.
	Made(ctx context.Context, callID string) error
	// Dropped says the change stopped at a failure. restored says every
	// file already changed was put back; when one could not be, the change
	// is left half made, for recovery to settle.
	Dropped(ctx context.Context, callID string, restored bool) error
}

// Intent is what one call is about to change in files, and who made the
// call. The workspace and session are those of the scope the context
// carries (see [WithScope]).
type Intent struct {
	CallID string
	// Tool is the tool called, and Arguments its arguments (for the record
	// of a call cut short).
	Tool      string
	Arguments json.RawMessage
	// Caller is who made the call.
	Caller Identity
	// Changes are the changes, in the order they are made.
	Changes []FileChange
}

// FileChange is one change a call made to a file, with what it takes to
// reverse it.
type FileChange struct {
	// Path is the workspace-relative, slash-separated path.
	Path string `json:"path"`
	// Existed says the file existed before; Before and Mode are its content
	// and mode then.
	Existed bool        `json:"existed"`
	Before  []byte      `json:"before,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	// Exists says the file exists after the change; After is its content
	// then and AfterSHA256 the hex SHA-256 of it, to tell whether it changed
	// since and to show how.
	Exists      bool   `json:"exists"`
	After       []byte `json:"after,omitempty"`
	AfterSHA256 string `json:"afterSha256,omitempty"`
}

// Outputs keeps the full text of results by call id.
type Outputs interface {
	// Put keeps text as the full output of the call, labelled with the
	// scope and the origin ctx carries ([WithScope], [WithOrigin]).
	Put(ctx context.Context, callID, text string) error
	// Get returns the full output of the call, and false when none is kept
	// (never kept, or expired).
	Get(ctx context.Context, callID string) (Output, bool, error)
}

// Output is a full output as [Outputs] keep it.
type Output struct {
	// Text is the full text.
	Text string
	// Origin is where it came from: nil for a tool's own words.
	Origin *Origin
}

// SettingsChecker is implemented by a settings type ([Meta.Settings]) that
// checks its values beyond their types when the configuration is loaded:
// a value out of range, or one this machine cannot honour (a required
// sandbox without bubblewrap). A [*SettingError] names the setting.
type SettingsChecker interface {
	CheckSettings() error
}

// SettingError is a problem with one setting.
type SettingError struct {
	// Key is the setting's path below tools: ("exec.sandbox.required").
	Key string
	// Msg says what was given and what is allowed, following the key:
	// "is -5: it must not be negative".
	Msg string
}

func (e *SettingError) Error() string { return e.Key + " " + e.Msg }

// Config holds tool settings by key. Values are JSON-compatible
// (maps, slices, strings, numbers, booleans), as read from configuration.
type Config map[string]any

// Decode copies the settings under key into v (a pointer to a struct with JSON
// tags). A missing key leaves v untouched.
func (c Config) Decode(key string, v any) error {
	raw, ok := c[key]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("config %q: %w", key, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("config %q: %w", key, err)
	}
	return nil
}
