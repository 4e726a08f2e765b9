package dir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/tool"
)

// Metadata is the content of a tool's metadata.json. See
// docs/directory-tools.md and docs/schemas/metadata.schema.json.
type Metadata struct {
	// Name is how models call the tool (^[a-zA-Z0-9_-]{1,64}$).
	Name string `json:"name"`
	// Label is a short human title; derived from Name when empty.
	Label string `json:"label,omitempty"`
	// Description tells a model what the tool does and when to use it.
	Description string `json:"description"`
	// Summary is the line that lists the tool in compact mode; default:
	// the first sentence of Description. toolbelt.yaml's tools.summaries
	// beats it.
	Summary string `json:"summary,omitempty"`
	// Version is the tool's own version.
	Version string `json:"version,omitempty"`
	// Category is a free-form grouping for user interfaces.
	Category string `json:"category,omitempty"`
	// RiskLevel is low, medium or high; when empty it is derived (low for
	// read-only tools, medium otherwise).
	RiskLevel string `json:"riskLevel,omitempty"`
	// Timeout is the time limit of one call, in seconds.
	Timeout float64 `json:"timeout,omitempty"`
	// RequiresConfirmation asks a person before every call.
	RequiresConfirmation bool `json:"requiresConfirmation,omitempty"`
	// ConfirmationMessage is shown to the person asked.
	ConfirmationMessage string `json:"confirmationMessage,omitempty"`
	// Destructive tools may delete or overwrite data.
	Destructive bool `json:"destructive,omitempty"`
	// Async tools run their work as a durable job: the handler is asked to
	// "submit" it, then to "poll" it every pollingInterval seconds
	// (asyncType polling) or to read the "webhook" POSTed to webhookPath
	// (asyncType webhook); maxRetries bounds the failed attempts of a
	// step. See docs/jobs.md.
	Async           bool    `json:"async,omitempty"`
	AsyncType       string  `json:"asyncType,omitempty"`
	PollingInterval float64 `json:"pollingInterval,omitempty"`
	MaxRetries      int     `json:"maxRetries,omitempty"`
	WebhookPath     string  `json:"webhookPath,omitempty"`
	// Undo says the handler can take back what a call did: a call's
	// response keeps the data that needs ("undo"), and toolbelt undo asks
	// the handler for operation "undo" with it. Not for async tools.
	Undo bool `json:"undo,omitempty"`
	// EstimatedTime is how long a call usually takes, in seconds.
	EstimatedTime float64 `json:"estimatedTime,omitempty"`

	// Section is the catalog section (default "directory").
	Section string `json:"section,omitempty"`
	// Profiles lists the profiles that include the tool.
	Profiles []string `json:"profiles,omitempty"`
	// OwnerOnly tools run only for callers known to be the owner.
	OwnerOnly bool `json:"ownerOnly,omitempty"`
	// ReadOnly tools do not change their environment.
	ReadOnly bool `json:"readOnly,omitempty"`
	// OpenWorld tools reach outside the workspace.
	OpenWorld bool `json:"openWorld,omitempty"`
	// Sandbox runs the handler under bubblewrap (only the workspace
	// writable, no network); the call fails when it is not available.
	Sandbox bool `json:"sandbox,omitempty"`
	// Env lists the variables the handler may see although their names
	// look secret (names or path.Match patterns such as "AWS_*").
	Env []string `json:"env,omitempty"`
	// Handler is the handler file, relative to the tool's folder (default:
	// handler, handler.py, handler.js, handler.ts or handler.sh).
	Handler string `json:"handler,omitempty"`
	// Persistent keeps one handler process running for the calls, a JSON
	// line each way, instead of starting one per call.
	Persistent bool `json:"persistent,omitempty"`
	// Interactive keeps the handler's standard input open while it runs,
	// so that it can ask the caller's side for input or a completion
	// (package interact): a request line on standard error, the answer a
	// line on standard input.
	Interactive bool `json:"interactive,omitempty"`
	// Interpreter runs the handler ("python3", "node", …); default: from
	// the handler's extension, or none for an executable.
	Interpreter string `json:"interpreter,omitempty"`
	// Settings is the JSON Schema of the tool's settings, an object the
	// configuration gives under tools.<name> in toolbelt.yaml: checked
	// against it (see closedSettings) and handed to the handler in every
	// request.
	Settings *jsonschema.Schema `json:"settings,omitempty"`
	// Schema is a URL of the metadata's JSON Schema, for editors; ignored.
	Schema string `json:"$schema,omitempty"`
}

// metadataFields are the keys of metadata.json.
var metadataFields = fieldNames()

func fieldNames() []string {
	var keys []string
	for f := range reflect.TypeFor[Metadata]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

// FileError is a problem in a file of a tool folder, at a line when known.
type FileError struct {
	Path string
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// lineAt returns the 1-based line of byte offset off in b.
func lineAt(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return bytes.Count(b[:off], []byte("\n")) + 1
}

// ParseMetadata reads metadata.json from b; path names it in errors.
// Unknown keys, wrong types and bad values are errors with the line and,
// for a misspelled key, the key meant.
func ParseMetadata(path string, b []byte) (Metadata, error) {
	fail := func(off int64, format string, args ...any) (Metadata, error) {
		line := 0
		if off >= 0 {
			line = lineAt(b, off)
		}
		return Metadata{}, &FileError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	// Find each top-level key and where it is, to report unknown ones.
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return fail(syntaxOffset(err, dec), "not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail(0, "metadata must be a JSON object, like {\"name\": \"my_tool\", \"description\": \"…\"}")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(syntaxOffset(err, dec), "not valid JSON: %v", err)
		}
		key, _ := tok.(string)
		off := dec.InputOffset() - int64(len(key)) - 2 // where the key starts (give or take escapes)
		if !slices.Contains(metadataFields, key) {
			msg := fmt.Sprintf("unknown field %q", key)
			if c := closest.Names(key, metadataFields, 1); len(c) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", c[0])
			} else {
				msg += "; known fields: " + strings.Join(metadataFields, ", ")
			}
			return fail(off, "%s", msg)
		}
		if seen[key] {
			return fail(off, "field %q appears twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fail(syntaxOffset(err, dec), "not valid JSON: %v", err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(syntaxOffset(err, dec), "not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(dec.InputOffset(), "unexpected text after the JSON object")
	}
	var m Metadata
	if err := json.Unmarshal(b, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// A keyword of the settings schema is named by its path in
			// the schema type's fields.
			field := strings.ReplaceAll(te.Field, ".schemaWithoutMethods", "")
			if field == "settings" {
				return fail(te.Offset, "%s", settingsShape)
			}
			return fail(te.Offset, "field %q must be %s, not %s", field, jsonKind(te.Type), te.Value)
		}
		return fail(-1, "%v", err)
	}
	if err := m.check(); err != nil {
		key := err.field
		return fail(keyOffset(b, key), "%s", err.msg)
	}
	return m, nil
}

func syntaxOffset(err error, dec *json.Decoder) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	return dec.InputOffset()
}

// keyOffset finds where a top-level key is written, or -1.
func keyOffset(b []byte, key string) int64 {
	if key == "" {
		return -1
	}
	i := bytes.Index(b, []byte(`"`+key+`"`))
	if i < 0 {
		return -1
	}
	return int64(i)
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float64, reflect.Int:
		return "a number"
	case reflect.Slice:
		return "an array of strings"
	}
	return t.String()
}

type fieldError struct{ field, msg string }

// check reports the first field whose value is unusable.
func (m *Metadata) check() *fieldError {
	if err := tool.ValidateName(m.Name); err != nil {
		return &fieldError{"name", "name: " + err.Error()}
	}
	if strings.TrimSpace(m.Description) == "" {
		return &fieldError{"description", "description is missing: say what the tool does and when a model should use it"}
	}
	if m.RiskLevel != "" {
		if _, err := tool.ParseRisk(m.RiskLevel); err != nil {
			return &fieldError{"riskLevel", "riskLevel: " + err.Error()}
		}
	}
	if m.Timeout < 0 {
		return &fieldError{"timeout", fmt.Sprintf("timeout must be a positive number of seconds, not %v", m.Timeout)}
	}
	if m.EstimatedTime < 0 {
		return &fieldError{"estimatedTime", fmt.Sprintf("estimatedTime must be a positive number of seconds, not %v", m.EstimatedTime)}
	}
	if m.Async {
		if err := m.asyncSpec().Check(); err != nil {
			field := "asyncType"
			if m.AsyncType == "" {
				field = "async"
			}
			return &fieldError{field, err.Error()}
		}
		if m.Sandbox {
			return &fieldError{"sandbox", "an async tool's handler runs its submit, poll and webhook steps outside any call's workspace, so it cannot run in the sandbox: remove \"sandbox\" (or make the tool synchronous)"}
		}
	}
	if m.Async && m.Undo {
		return &fieldError{"undo", "an async tool cannot have an undo step: its work is done by a job, not by the call"}
	}
	if !m.Async && (m.AsyncType != "" || m.PollingInterval != 0 || m.MaxRetries != 0 || m.WebhookPath != "") {
		field := "webhookPath" // the line of the first one set
		switch {
		case m.AsyncType != "":
			field = "asyncType"
		case m.PollingInterval != 0:
			field = "pollingInterval"
		case m.MaxRetries != 0:
			field = "maxRetries"
		}
		return &fieldError{field, "asyncType, pollingInterval, maxRetries and webhookPath apply only to async tools, and this one is not async: remove them"}
	}
	if m.ConfirmationMessage != "" && !m.RequiresConfirmation && m.RiskLevel != "high" {
		return &fieldError{"confirmationMessage", "confirmationMessage is shown only when a person is asked: set \"requiresConfirmation\": true or \"riskLevel\": \"high\", or remove it"}
	}
	if m.ReadOnly && m.Destructive {
		return &fieldError{"readOnly", "a tool cannot be both readOnly and destructive"}
	}
	if m.ReadOnly && m.RiskLevel == "high" {
		return &fieldError{"readOnly", "a readOnly tool cannot be high risk: remove readOnly or lower riskLevel"}
	}
	for _, p := range m.Profiles {
		if !slices.Contains(knownProfiles, p) {
			return &fieldError{"profiles", fmt.Sprintf("unknown profile %q: use %s", p, strings.Join(knownProfiles, ", "))}
		}
	}
	if m.Settings != nil && m.Settings.Type != "object" {
		return &fieldError{"settings", settingsShape}
	}
	if m.Interactive && (m.Persistent || m.Async) {
		return &fieldError{"interactive", "an interactive handler is started for each call and asks while that call runs: it cannot be persistent or async"}
	}
	if m.Handler != "" && (strings.Contains(m.Handler, "/") || strings.Contains(m.Handler, `\`) || m.Handler == "." || m.Handler == "..") {
		return &fieldError{"handler", fmt.Sprintf("handler %q must be a file name in the tool's folder, not a path", m.Handler)}
	}
	return nil
}

// settingsShape says what "settings" must be.
const settingsShape = `settings must be the JSON Schema of an object, like {"type": "object", "properties": {"baseUrl": {"type": "string"}}}`

// knownProfiles are the profiles a tool may be listed in.
var knownProfiles = []string{"minimal", "coding", "messaging", "full"}

// DefaultSection is the catalog section of directory tools that do not say.
const DefaultSection = "directory"

// meta turns the metadata into the tool's Meta. trusted is false for tools
// the agent may have written or changed: their claims to be harmless (low
// risk, read-only, closed world), to be owner-only, and to belong to a
// section or a profile (which policies and agents select tools by) are not
// taken at their word. An open-world tool's results are wrapped as
// external content.
func (m *Metadata) meta(trusted bool) tool.Meta {
	risk, _ := tool.ParseRisk(m.RiskLevel) // checked
	meta := tool.Meta{
		ID: m.Name, Label: m.Label, Description: m.Description, Summary: m.Summary, Version: m.Version, Category: m.Category,
		Section: m.Section, Profiles: m.Profiles, Groups: []string{"directory"},
		Risk: risk, RequiresConfirmation: m.RequiresConfirmation, ConfirmationMessage: m.ConfirmationMessage,
		Destructive: m.Destructive, ReadOnly: m.ReadOnly, OpenWorld: m.OpenWorld, OwnerOnly: m.OwnerOnly,
		ExternalContent: m.OpenWorld,
		Timeout:         seconds(m.Timeout),
		EstimatedTime:   seconds(m.EstimatedTime),
		Source:          tool.SourceDirectory,
	}
	if m.Settings != nil {
		meta.Settings = closedSettings(m.Settings)
	}
	if !trusted {
		meta.ReadOnly, meta.OwnerOnly = false, false
		meta.OpenWorld, meta.ExternalContent = true, true
		meta.Section, meta.Profiles = "", nil
		if meta.Risk < tool.RiskMedium {
			meta.Risk = tool.RiskMedium
		}
	}
	if meta.Section == "" {
		meta.Section = DefaultSection
	}
	return meta.WithDefaults()
}

// asyncSpec is the async part of the metadata.
func (m *Metadata) asyncSpec() tool.AsyncSpec {
	return tool.AsyncSpec{
		Type: tool.AsyncType(m.AsyncType), EstimatedTime: seconds(m.EstimatedTime), PollingInterval: seconds(m.PollingInterval),
		MaxRetries: m.MaxRetries, WebhookPath: m.WebhookPath,
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
