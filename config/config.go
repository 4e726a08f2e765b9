// Package config reads toolbelt.yaml: the workspace, where state lives, the
// pipeline's limits, the tool policy and the confirmation settings. Unknown
// keys and wrong types are errors that name the line. Config.Policy builds
// the policy the file describes, and Config.CheckTools checks the tools it
// names against a registry.
//
// The file is found in the working directory, then in the user's config
// directory; a path given with --config (or TOOLBELT_CONFIG) wins. Every
// setting has a default that works on a laptop, so no file is needed.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/yosida95/uritemplate/v3"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
)

// FileName is the name of the configuration file.
const FileName = "toolbelt.yaml"

// Config is the content of toolbelt.yaml.
type Config struct {
	// Workspace is the directory the tools work in (default: the current
	// directory, unless it is / or the home directory or above it: then
	// one must be chosen).
	Workspace string `yaml:"workspace" default:"the current directory"`
	// Data is the directory state lives in (default: the user's data
	// directory). Tools can neither read nor change it, even when it lies
	// inside the workspace.
	Data string `yaml:"data" default:"~/.local/share/toolbelt"`
	// Database is a postgres:// URL to keep state in PostgreSQL instead.
	Database string `yaml:"database"`
	// Retention says how long state is kept.
	Retention Retention `yaml:"retention"`
	// Limits bound the pipeline.
	Limits Limits `yaml:"limits"`
	// Confirm says when a person is asked before a call runs.
	Confirm Confirm `yaml:"confirm"`
	// Mode is the permission mode calls run in: default, acceptEdits (file
	// changes inside the workspace run without asking), plan (tools that
	// change anything are refused), dontAsk (what would ask is denied) or
	// bypass (everything runs without asking, commands in the sandbox).
	// See docs/governance.md.
	Mode string `yaml:"mode" default:"default"`
	// Cron is how toolbelt serve runs the cron tool's schedules.
	Cron Cron `yaml:"cron"`
	// Console is the web console toolbelt serve serves.
	Console Console `yaml:"console"`
	// Tools is the global tool policy, with tool settings.
	Tools Tools `yaml:"tools"`
	// Agents are the configured agents by id: each one's model, workspace,
	// system prompt, tool policy (agents.<id>.tools, a policy layer) and
	// which agents it may spawn. See docs/agents.md.
	Agents map[string]Agent `yaml:"agents"`
	// Channels are where calls come from: each one's tool policy
	// (channels.<id>.tools, a policy layer) and, with a type, a webhook,
	// IRC network or mailbox agents talk on. See docs/channels.md.
	Channels map[string]Channel `yaml:"channels"`
	// Routes map incoming channel messages to the agents that answer them,
	// the first match winning. See docs/channels.md.
	Routes []Route `yaml:"routes"`
	// Principals holds per-principal policy: principals.<name>.tools, for
	// the calls of whoever authenticated as that principal (an MCP
	// token's principal, see mcp.tokens).
	Principals map[string]Scope `yaml:"principals"`
	// Sandbox is the policy for sandboxed callers.
	Sandbox Scope `yaml:"sandbox"`
	// Subagents is the policy for calls made by sub-agents.
	Subagents Scope `yaml:"subagents"`
	// MCPServers are other MCP servers whose tools Toolbelt imports, in the
	// shape Claude Desktop uses (so an existing configuration can be pasted).
	MCPServers map[string]MCPServer `yaml:"mcpServers"`
	// MCP configures Toolbelt's own MCP server and the import.
	MCP MCP `yaml:"mcp"`
	// Hooks are commands run before and after tool calls.
	Hooks Hooks `yaml:"hooks"`
	// Skills configures where agents find Agent Skills (docs/agents.md).
	Skills Skills `yaml:"skills"`
	// Audit configures the audit log's durability and its key.
	Audit Audit `yaml:"audit"`
	// Jobs configures the durable jobs of async tools (docs/jobs.md).
	Jobs Jobs `yaml:"jobs"`
	// Model is the model `toolbelt run` uses without --model or
	// TOOLBELT_MODEL: PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5.
	Model string `yaml:"model"`
	// Providers adjusts the built-in model providers (anthropic, openai,
	// openai-responses, google, ollama, vllm, llamacpp, lmstudio, mistral,
	// openrouter, xai, deepseek, groq) or adds new ones based on them;
	// the key is the name --model takes.
	Providers map[string]ModelProvider `yaml:"providers"`
	// Compaction says when and how agent conversations that near their
	// model's context window are compacted (docs/agent.md);
	// agents.<id>.compaction overrides it field by field.
	Compaction Compaction `yaml:"compaction"`
	// Repair names a model that repairs the arguments of a call that failed
	// validation twice (docs/agent.md); off unless set.
	// agents.<id>.repair overrides it.
	Repair Repair `yaml:"repair"`
	// ToolRequests says which requests tools may make of the caller's
	// side while their calls run: input from the person (elicitation) and
	// a model's completion (sampling) (docs/serving.md, "Tools that ask").
	ToolRequests ToolRequests `yaml:"toolRequests"`

	// Path is the file the configuration came from ("" for the defaults).
	Path string `yaml:"-"`
	file *ast.File
}

// Skills says where agents find Agent Skills besides the workspace's
// .toolbelt/skills and the user's toolbelt/skills.
type Skills struct {
	// Paths are folders of skills (each skill a subfolder with a
	// SKILL.md), relative to the configuration file. Their skills are
	// trusted: their allowed-tools pre-approve tools.
	Paths []string `yaml:"paths"`
}

// Limits bound the pipeline; zero values take the pipeline's defaults.
type Limits struct {
	// Timeout is a call's time limit when neither the tool nor the call
	// sets one.
	Timeout Duration `yaml:"timeout" default:"5m"`
	// MaxTimeout is the most a call (or a tool) may ask for.
	MaxTimeout Duration `yaml:"maxTimeout" default:"1h"`
	// MaxResultChars cuts a result's text; the full output stays readable
	// with result_read.
	MaxResultChars int `yaml:"maxResultChars" default:"40000"`
	// MaxResultTokens cuts a result's text at this many tokens too (0: no
	// token limit).
	MaxResultTokens int `yaml:"maxResultTokens" default:"0"`
	// EventMaxChars bounds the text of progress and end events.
	EventMaxChars int `yaml:"eventMaxChars" default:"8000"`
	// ImageMaxSide scales images down to this many pixels on their longer
	// side (0: the pipeline's default).
	ImageMaxSide int `yaml:"imageMaxSide" default:"0"`
	// ImageMaxBytes bounds an image's encoded size (0: the pipeline's
	// default).
	ImageMaxBytes int `yaml:"imageMaxBytes" default:"0"`
	// UpdateInterval is the least time between two progress events of a
	// call.
	UpdateInterval Duration `yaml:"updateInterval" default:"50ms"`
}

// Retention bounds the state Toolbelt keeps; zero values keep the store's
// defaults.
type Retention struct {
	// Outputs: full outputs of cut results, read with result_read.
	Outputs Duration `yaml:"outputs" default:"168h"`
	// OutputsBytes bounds the total size of the outputs kept.
	OutputsBytes int64 `yaml:"outputsBytes" default:"268435456"`
	// Undo: what it takes to undo file changes.
	Undo Duration `yaml:"undo" default:"720h"`
	// Jobs: finished async jobs (completed, failed, cancelled) and the
	// webhook deliveries they took; unfinished ones are always kept.
	Jobs Duration `yaml:"jobs" default:"720h"`
}

// Audit configures the audit log. Every call's record is written to the
// database before the call's result is returned, whatever the settings.
type Audit struct {
	// Sync says whether that write is also forced to disk: "none" (the
	// default: the record reaches the operating system, so it survives the
	// process being killed, but the last records may be lost if the machine
	// loses power) or "always" (every commit is fsynced before the result
	// is returned; concurrent calls share one). It applies to all of the
	// SQLite store's writes; PostgreSQL follows the server's settings.
	Sync string `yaml:"sync" default:"none"`
	// KeyFile is a file holding the key (at least 16 bytes; surrounding
	// white space is ignored) that makes the audit chain an HMAC chain.
	// Keep it where the database's writers cannot read it.
	// TOOLBELT_AUDIT_KEY (the key itself) or TOOLBELT_AUDIT_KEY_FILE win
	// over it.
	KeyFile string `yaml:"keyFile"`
	// FailClosed refuses calls of tools that change things (any tool not
	// read-only) while their audit records cannot be made durable — the
	// disk of the data directory is full, the database cannot be written —
	// before they run, with a message saying why; read-only calls go on,
	// their records kept in memory until they can be written. false runs
	// them anyway. Toolbelt says in one line when that starts and ends.
	FailClosed *bool `yaml:"failClosed" default:"true"`
}

// FailsClosed says whether calls that change things are refused while
// audit records cannot be made durable (audit.failClosed, true unless set
// false).
func (a Audit) FailsClosed() bool { return a.FailClosed == nil || *a.FailClosed }

// Jobs configures the durable jobs async tools run (package jobs, on River
// in the store's database).
type Jobs struct {
	// Workers is how many job steps (submissions, polls) one process runs
	// at once.
	Workers int `yaml:"workers" default:"25"`
	// StepTimeout bounds one step (a poll; a submission together with the
	// poll that follows it at once); a step of a process that died is
	// taken over by another process (or the restarted one) once it has
	// been running this long plus 10 s.
	StepTimeout Duration `yaml:"stepTimeout" default:"1m"`
	// WebhookSecret verifies the webhooks async tools receive on `toolbelt
	// serve` (the Standard Webhooks scheme): "whsec_" and the base64 of at
	// least 16 random bytes. TOOLBELT_WEBHOOK_SECRET wins over it. Without
	// a secret, webhooks are refused.
	WebhookSecret string `yaml:"webhookSecret"`
	// PublicURL is the base URL senders reach `toolbelt serve` at
	// (https://tools.example.com), joined with a tool's webhookPath to make
	// the webhook URL its handler passes on (default: the address served).
	PublicURL string `yaml:"publicUrl"`
}

// Confirm says when a person is asked, and what happens without an answer.
type Confirm struct {
	// Medium asks for medium-risk calls too (high-risk calls always ask;
	// low-risk calls never do).
	Medium bool `yaml:"medium" default:"false"`
	// Timeout is how long a person has to answer (default 2m).
	Timeout Duration `yaml:"timeout" default:"2m"`
	// OnTimeout is what no answer in time means: "deny" (default) or "allow".
	OnTimeout string `yaml:"onTimeout" default:"deny"`
}

// Cron configures the scheduler that runs the cron tool's schedules in
// toolbelt serve (docs/cron.md).
type Cron struct {
	// Disabled keeps toolbelt serve from running schedules (another process
	// on the same database may run them).
	Disabled bool `yaml:"disabled" default:"false"`
	// Grace is how late a run missed while no scheduler ran may still run;
	// older missed runs are recorded as skipped.
	Grace Duration `yaml:"grace" default:"1h"`
	// Poll is how often the scheduler looks for due schedules.
	Poll Duration `yaml:"poll" default:"1s"`
}

// MCPServer is another MCP server: a command to start (stdio) or a URL
// (streamable HTTP, or the older HTTP+SSE). Entries are written as Claude
// Code, Claude Desktop, Cursor and VS Code write them, so one can be pasted
// as it is.
type MCPServer struct {
	// Type is how the server is reached: stdio (a command), http
	// (streamable HTTP at url) or sse (HTTP with server-sent events, the
	// older transport, at url). Without it, a command means stdio and a
	// url http.
	Type string `yaml:"type"`
	// Command starts a stdio server; it is looked up in PATH.
	Command string `yaml:"command"`
	// Args are the command's arguments.
	Args []string `yaml:"args"`
	// Env is the server's environment besides the few variables it
	// inherits (HOME, PATH, …); ${VAR} (or ${env:VAR}, ${VAR:-default})
	// takes a value from Toolbelt's.
	Env map[string]string `yaml:"env"`
	// EnvFile is a file of NAME=value lines (a .env file) added to the
	// server's environment, read when the server starts; env wins over it.
	// A relative path is relative to toolbelt.yaml (Parse makes it
	// absolute).
	EnvFile string `yaml:"envFile"`
	// Cwd is the directory the command starts in.
	Cwd string `yaml:"cwd"`
	// URL is an HTTP server's endpoint.
	URL string `yaml:"url"`
	// Headers are sent with every HTTP request; ${VAR} takes a value from
	// the environment, as in env.
	Headers map[string]string `yaml:"headers"`
	// OAuth signs in to an HTTP server with OAuth 2.1 (toolbelt mcp login
	// NAME); without it, a server that asks for a sign-in is not reached.
	OAuth *MCPOAuth `yaml:"oauth"`
	// Disabled keeps the server configured but not started.
	Disabled bool `yaml:"disabled" default:"false"`
	// Elicitation lets the server ask for input while its tools run
	// (elicitation/create): the form goes to whoever approves the call —
	// the terminal's person, the MCP client that made the call. Off: its
	// requests are declined.
	Elicitation bool `yaml:"elicitation" default:"false"`
	// Sampling lets the server ask for a model's completion while its
	// tools run (sampling/createMessage), answered by the configured model
	// (model, or TOOLBELT_MODEL) or by the MCP client that made the call.
	// Off: its requests are refused.
	Sampling bool `yaml:"sampling" default:"false"`
	// Summaries are the lines that list the server's tools in compact mode,
	// by the server's own tool name (create_issue, not github__create_issue);
	// tools.summaries beats them.
	Summaries map[string]string `yaml:"summaries"`
}

// ToolRequests says which requests tools may make of the caller's side.
type ToolRequests struct {
	// Elicitation: "allow" lets tools ask the person for input while they
	// run (the MCP client's form, the terminal's questions); "deny"
	// refuses every such request.
	Elicitation string `yaml:"elicitation" default:"allow"`
	// Sampling: "allow" lets tools ask for a model's completion (the MCP
	// client's model, else the configured one); "deny" refuses them.
	Sampling string `yaml:"sampling" default:"allow"`
}

// MCPOAuth is how Toolbelt signs in to an imported HTTP server that is an
// OAuth-protected resource. The authorization server is found from the
// server itself (its WWW-Authenticate challenge and protected-resource
// metadata); the tokens it grants are kept encrypted in the store.
type MCPOAuth struct {
	// ClientID is a client registered with the authorization server
	// beforehand. Without it (and without clientMetadataUrl) Toolbelt
	// registers itself (dynamic client registration).
	ClientID string `yaml:"clientId"`
	// ClientSecret is that client's secret; ${VAR} takes it from the
	// environment.
	ClientSecret string `yaml:"clientSecret"`
	// Scopes are the scopes asked for; without them, the ones the server's challenge
	// or metadata name.
	Scopes []string `yaml:"scopes"`
	// ClientMetadataURL is an https URL of a client ID metadata document
	// describing Toolbelt, used as the client id where the authorization
	// server accepts such documents.
	ClientMetadataURL string `yaml:"clientMetadataUrl"`
	// Grant is the grant used: authorization_code (a person signs in in a browser, with
	// toolbelt mcp login), client_credentials (a machine-to-machine
	// client: clientId with clientSecret or privateKeyFile) or enterprise
	// (enterprise-managed authorization: the enterprise identity provider
	// under idp exchanges its ID token for a grant the server's
	// authorization server takes from clientId).
	Grant string `yaml:"grant" default:"authorization_code"`
	// PrivateKeyFile is a PEM private key (RSA or EC) that signs the
	// client's assertion (private_key_jwt) in the client_credentials
	// grant, instead of a secret. Relative to toolbelt.yaml.
	PrivateKeyFile string `yaml:"privateKeyFile"`
	// TokenEndpointAuth is how the client authenticates at the token
	// endpoint: none, client_secret_basic or client_secret_post; empty
	// picks what the authorization server supports.
	TokenEndpointAuth string `yaml:"tokenEndpointAuth"`
	// RedirectPort is the loopback port the sign-in's redirect comes back
	// to (http://127.0.0.1:PORT/callback); 0 takes any free port.
	RedirectPort int `yaml:"redirectPort" default:"0"`
	// IDP is the enterprise identity provider of the enterprise grant.
	IDP *MCPOAuthIDP `yaml:"idp"`
}

// MCPOAuthIDP is the enterprise identity provider that vouches for the
// person to an imported server's authorization server (enterprise-managed
// authorization, SEP-990): it exchanges the person's ID token for an
// identity assertion grant (RFC 8693 token exchange, an ID-JAG), which the
// authorization server takes as a JWT bearer grant (RFC 7523).
type MCPOAuthIDP struct {
	// Issuer is the identity provider's issuer URL; its token endpoint is
	// found by OpenID discovery unless tokenEndpoint is set.
	Issuer string `yaml:"issuer"`
	// TokenEndpoint is the identity provider's token endpoint.
	TokenEndpoint string `yaml:"tokenEndpoint"`
	// ClientID is Toolbelt's client at the identity provider.
	ClientID string `yaml:"clientId"`
	// ClientSecret is that client's secret, if it has one; ${VAR} takes it
	// from the environment.
	ClientSecret string `yaml:"clientSecret"`
	// IDToken is the person's ID token from the identity provider (the
	// enterprise's single sign-on), usually ${VAR}. Give it, or
	// idTokenCommand, or idTokenEnv.
	IDToken string `yaml:"idToken"`
	// IDTokenCommand is a command whose standard output is the ID token,
	// run (without a shell: the program, then its arguments, the program
	// looked up in PATH or relative to toolbelt.yaml) each time the
	// exchange needs a token, so a token that expires is fetched fresh
	// (gcloud auth print-identity-token, as a list). It runs with Toolbelt's
	// environment for at most 30 s, and may print at most 64 KiB.
	IDTokenCommand []string `yaml:"idTokenCommand"`
	// IDTokenEnv names an environment variable read for the ID token each
	// time the exchange needs one.
	IDTokenEnv string `yaml:"idTokenEnv"`
}

// The OAuth grants of an imported server (MCPOAuth.Grant).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantEnterprise        = "enterprise"
)

// The transports of an imported MCP server (MCPServer.Type).
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Transport returns how the server is reached: its type, or stdio for a
// command and http for a url.
func (s MCPServer) Transport() string {
	switch {
	case s.Type != "":
		return s.Type
	case s.URL != "":
		return TransportHTTP
	}
	return TransportStdio
}

// ModelProvider is a model provider entry: a built-in provider's settings,
// or a new provider that speaks a built-in one's wire format.
type ModelProvider struct {
	// Base is the built-in provider a new entry is based on (its wire
	// format, default key variable and quirks); empty for a built-in name.
	Base string `yaml:"base"`
	// URL is the endpoint, as the provider's official SDK takes it:
	// http://host:port/v1 for OpenAI-style servers, http://host:port for
	// Anthropic and Gemini.
	URL string `yaml:"url"`
	// KeyEnv is the environment variable that holds the API key.
	KeyEnv string `yaml:"keyEnv"`
	// Headers are sent with every request; ${VAR} takes a value from the
	// environment.
	Headers map[string]string `yaml:"headers"`
	// NoStrict: the server rejects strict tool definitions.
	NoStrict bool `yaml:"noStrict" default:"false"`
	// NoParallelCalls asks for one tool call per turn.
	NoParallelCalls bool `yaml:"noParallelCalls" default:"false"`
	// NoImages: the model takes no images; a note stands for them.
	NoImages bool `yaml:"noImages" default:"false"`
	// OAuth says the key is a Claude subscription's OAuth token (Anthropic
	// only): it is sent as Claude Code sends it, the tools under Claude
	// Code's names. A key that starts with sk-ant-oat is taken as one
	// without this.
	OAuth bool `yaml:"oauth" default:"false"`
	// Prices are the models' prices per million tokens, by model name, so
	// each response's usage carries its cost.
	Prices map[string]ModelPrice `yaml:"prices"`
	// ContextWindow is the context window, in tokens, of the provider's
	// models where Toolbelt does not know it (compaction needs it); 0:
	// the known window of the model, if any.
	ContextWindow int `yaml:"contextWindow" default:"0"`
}

// Compaction is when and how an agent's conversation is compacted: when
// what the model is sent nears its context window, the model summarizes
// the older turns.
type Compaction struct {
	// Enabled turns compaction on or off.
	Enabled *bool `yaml:"enabled" default:"true"`
	// Threshold is the share of the model's context window at which the
	// conversation is compacted (0 means the default).
	Threshold float64 `yaml:"threshold" default:"0.8"`
	// KeepTurns is how many recent model turns are kept whole (0 means the
	// default).
	KeepTurns int `yaml:"keepTurns" default:"4"`
	// ToolResultTurns: tool results older than that many model turns are
	// replaced by their start and a result_read handle (0 means the
	// default).
	ToolResultTurns int `yaml:"toolResultTurns" default:"3"`
	// Model is the PROVIDER/MODEL that writes the summary; the agent's
	// model when empty.
	Model string `yaml:"model"`
}

// Over returns o with the fields c sets put over it: an agent's
// compaction over the top-level one.
func (c Compaction) Over(o Compaction) Compaction {
	if c.Enabled != nil {
		o.Enabled = c.Enabled
	}
	o.Threshold = cmp.Or(c.Threshold, o.Threshold)
	o.KeepTurns = cmp.Or(c.KeepTurns, o.KeepTurns)
	o.ToolResultTurns = cmp.Or(c.ToolResultTurns, o.ToolResultTurns)
	o.Model = cmp.Or(c.Model, o.Model)
	return o
}

// On says whether compaction is on (enabled, true unless set false).
func (c Compaction) On() bool { return c.Enabled == nil || *c.Enabled }

// Repair is the model-side repair of arguments that fail validation.
type Repair struct {
	// Model is the PROVIDER/MODEL asked to repair the arguments of a call
	// that failed validation twice; no repair when empty.
	Model string `yaml:"model"`
}

// ModelPrice is a model's price per million tokens, in any currency.
type ModelPrice struct {
	// Input is the price of a million uncached input tokens.
	Input float64 `yaml:"input"`
	// Output is the price of a million output tokens.
	Output float64 `yaml:"output"`
	// CacheRead is the price of a million input tokens read from the cache.
	CacheRead float64 `yaml:"cacheRead"`
	// CacheWrite is the price of a million input tokens written to the cache.
	CacheWrite float64 `yaml:"cacheWrite"`
}

// MCP configures Toolbelt's MCP server and the import of other servers.
type MCP struct {
	// Addr is where `toolbelt serve` listens (default 127.0.0.1:7420).
	Addr string `yaml:"addr" default:"127.0.0.1:7420"`
	// Token is the bearer token HTTP clients must send; required on a
	// non-loopback address (TOOLBELT_MCP_TOKEN overrides).
	Token string `yaml:"token"`
	// AllowedHosts extends the Host headers HTTP requests may carry: a name
	// on any port, or name:port (the server's own names are allowed on its
	// own port).
	AllowedHosts []string `yaml:"allowedHosts"`
	// AllowedOrigins extends the Origin headers HTTP requests may carry,
	// as scheme://host[:port] (the server's own origin is always allowed;
	// another port of this machine is another origin).
	AllowedOrigins []string `yaml:"allowedOrigins"`
	// Dialect is the schema dialect of tools/list (default anthropic).
	Dialect string `yaml:"dialect" default:"anthropic"`
	// Compact offers tool_search, tool_describe and tool_call instead of every
	// tool.
	Compact bool `yaml:"compact" default:"false"`
	// CompactAbove turns compact mode on by itself above that many tools
	// (0: never).
	CompactAbove int `yaml:"compactAbove" default:"0"`
	// ExposeDetails sends results' details to clients as structured content.
	ExposeDetails bool `yaml:"exposeDetails" default:"false"`
	// MaxResponseBytes bounds a tool result sent to a client (default 8 MiB);
	// a larger one is cut by the pipeline's policy, never dropped.
	MaxResponseBytes int `yaml:"maxResponseBytes" default:"8388608"`
	// ConfirmFallback is what happens to a call that needs approval when the
	// client cannot be asked (no elicitation): "console" (default: it waits
	// for the console's decision when a console is open, else it is
	// blocked), "deny" (it is blocked at once) or "allow".
	ConfirmFallback string `yaml:"confirmFallback" default:"console"`
	// Separator joins server and tool names of imported tools (default "__").
	Separator string `yaml:"separator" default:"__"`
	// Prompts is the folder of prompts served to clients: Markdown files
	// with front matter (default prompts, beside toolbelt.yaml; a missing
	// folder holds none; without a configuration file there is none).
	Prompts string `yaml:"prompts" default:"prompts"`
	// Resources are more resources served to clients beside the
	// workspace's files: each a fixed URI or a URI template, answered with
	// inline text or a file's contents.
	Resources []MCPResource `yaml:"resources"`

	// Owner says whether MCP clients are the owner (default false: owner-only
	// tools are refused): stdio clients, and HTTP clients of mcp.token or of
	// no token. It comes from here, never from the transport.
	Owner bool `yaml:"owner" default:"false"`
	// Tokens are more bearer tokens for HTTP clients, each mapped to a
	// principal (recorded with every call) and an owner flag.
	Tokens []MCPToken `yaml:"tokens"`
	// OAuth makes `toolbelt serve` an OAuth resource server: bearer JWTs an
	// authorization server issued for it are accepted beside the tokens.
	OAuth ServeOAuth `yaml:"oauth"`
	// MaxMessageBytes bounds one message: a line on stdio, a request body
	// over HTTP (default 4 MiB).
	MaxMessageBytes int `yaml:"maxMessageBytes" default:"4194304"`
	// MaxSessions bounds the HTTP sessions open at once (default 256).
	MaxSessions int `yaml:"maxSessions" default:"256"`
	// SessionIdleTimeout closes an HTTP session with no request for that
	// long (default 15m).
	SessionIdleTimeout Duration `yaml:"sessionIdleTimeout" default:"15m"`
	// MaxConnections bounds the HTTP connections open at once (default 512).
	MaxConnections int `yaml:"maxConnections" default:"512"`
	// ReadHeaderTimeout bounds reading an HTTP request's headers.
	ReadHeaderTimeout Duration `yaml:"readHeaderTimeout" default:"10s"`
	// BodyTimeout bounds reading an HTTP request's body; a client slower
	// than that gets 408.
	BodyTimeout Duration `yaml:"bodyTimeout" default:"30s"`
	// ReadBeforeEdit holds each client session to read before edit, as
	// Toolbelt's own agent loop is: edit, apply_patch's updates and write
	// over an existing file are refused unless the session has read the
	// file through Toolbelt (or written it) and it has not changed on disk
	// since. Off by default: clients such as Claude Code keep their own
	// read state and read through their own tools.
	ReadBeforeEdit bool `yaml:"readBeforeEdit" default:"false"`
}

// MCPToken is a bearer token of the MCP HTTP server and who it stands for.
type MCPToken struct {
	// Token is the secret; write ${NAME} to read it from the environment
	// variable NAME when the server starts.
	Token string `yaml:"token"`
	// Principal names who the token stands for.
	Principal string `yaml:"principal"`
	// Owner makes the principal the owner.
	Owner bool `yaml:"owner" default:"false"`
}

// MCPResource is a resource `toolbelt serve` and `toolbelt mcp` serve:
// uri or uriTemplate (whose {variables} fill in the text and the file's
// path), answered with text or the contents of file.
type MCPResource struct {
	// URI is the resource's fixed URI (test://notes, docs://handbook).
	URI string `yaml:"uri"`
	// URITemplate is an RFC 6570 template (docs://pages/{name}) instead
	// of a fixed URI.
	URITemplate string `yaml:"uriTemplate"`
	// Name is its name in resources/list (default: the URI).
	Name string `yaml:"name"`
	// Title and Description are for people.
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	// MIMEType is its media type (default: from the file's extension or
	// contents; text/plain for text).
	MIMEType string `yaml:"mimeType"`
	// Text is the resource's contents.
	Text string `yaml:"text"`
	// File is the file whose contents it is, relative to toolbelt.yaml;
	// read at each resources/read, and watched for resources/subscribe.
	File string `yaml:"file"`
}

// ServeOAuth is the authorization server whose tokens `toolbelt serve`
// accepts (off without an issuer).
type ServeOAuth struct {
	// Issuer is the authorization server's issuer URL; tokens must name it.
	Issuer string `yaml:"issuer"`
	// JWKSURL is where its signing keys are (default: jwks_uri of the
	// issuer's metadata).
	JWKSURL string `yaml:"jwksUrl"`
	// Resource is this server's resource URL (its /mcp endpoint as clients
	// reach it), the audience tokens must name.
	Resource string `yaml:"resource"`
	// Scopes are the scopes the server advertises; a token with none of
	// them is refused (403 insufficient_scope).
	Scopes []string `yaml:"scopes"`
	// Principals maps a scope to the principal its tokens stand for (for
	// principals.<name> policy); a token with no mapped scope stands for
	// its PrincipalClaim.
	Principals map[string]string `yaml:"principals"`
	// PrincipalClaim is the claim naming the principal (default sub).
	PrincipalClaim string `yaml:"principalClaim" default:"sub"`
	// OwnerScope, when set, makes a token with that scope the owner.
	OwnerScope string `yaml:"ownerScope"`
}

// Secret returns the token, read from the environment when it is written
// as ${NAME}.
func (t MCPToken) Secret(getenv func(string) string) (string, error) {
	name, ok := strings.CutPrefix(t.Token, "${")
	if !ok {
		return t.Token, nil
	}
	name, ok = strings.CutSuffix(name, "}")
	if !ok || name == "" {
		return "", fmt.Errorf("mcp.tokens: token of %s: write ${NAME} to read it from the environment", t.Principal)
	}
	v := getenv(name)
	if v == "" {
		return "", fmt.Errorf("mcp.tokens: the token of %s is read from $%s, which is not set", t.Principal, name)
	}
	return v, nil
}

// DefaultMCPSeparator joins server and tool names of imported tools when
// mcp.separator is not set.
const DefaultMCPSeparator = "__"

// Agent is one configured agent (toolbelt agents; toolbelt run --agent ID).
type Agent struct {
	// Name is what people see; the id when empty.
	Name string `yaml:"name"`
	// Description says what the agent is for (agents_list shows it to
	// agents that may spawn it).
	Description string `yaml:"description"`
	// Model is the agent's PROVIDER/MODEL; the top-level model when empty.
	// toolbelt run --model overrides it.
	Model string `yaml:"model"`
	// Workspace is the agent's workspace directory (its files and its
	// memory: MEMORY.md, memory/); a relative path is taken from the config
	// file's directory. It must exist. The current directory (or
	// --workspace) when empty.
	Workspace string `yaml:"workspace"`
	// System is the agent's system prompt, or @FILE to read it from a file
	// (relative to the workspace, e.g. @AGENTS.md). toolbelt run --system
	// overrides it.
	System string `yaml:"system"`
	// Tools is the agent's tool policy layer.
	Tools Rules `yaml:"tools"`
	// Mode is the permission mode of the agent's calls; the top-level mode
	// when empty. toolbelt run --mode overrides it.
	Mode string `yaml:"mode"`
	// Thinking is how much the agent's model thinks before it answers:
	// off, low, medium or high, mapped to each provider's setting (see
	// docs/agents.md); the provider's default when empty. toolbelt run
	// --thinking and sessions_spawn's thinking override it.
	Thinking string `yaml:"thinking"`
	// Compact offers the agent tool_search, tool_describe and tool_call
	// instead of every tool, its tools named in the system prompt
	// (docs/compact.md); toolbelt run and chat --compact do it for a run.
	Compact bool `yaml:"compact" default:"false"`
	// Subagents says which agents this one may spawn.
	Subagents SubagentLimits `yaml:"subagents"`
	// Compaction overrides the top-level compaction for this agent's
	// sessions, field by field.
	Compaction Compaction `yaml:"compaction"`
	// Repair overrides the top-level repair for this agent's sessions.
	Repair Repair `yaml:"repair"`
	// ReadBeforeEdit holds the agent's sessions to read before edit: edit,
	// apply_patch's updates and write over an existing file are refused
	// unless the session has read the file (or written it itself) and it
	// has not changed on disk since. false turns it off for this agent.
	ReadBeforeEdit *bool `yaml:"readBeforeEdit" default:"true"`
}

// thinkingLevels are the values of agents.<id>.thinking, as package llm
// maps them (config links no provider client).
var thinkingLevels = []string{"off", "low", "medium", "high"}

// ReadsBeforeEdit says whether the agent's sessions are held to read
// before edit (agents.<id>.readBeforeEdit, true unless set false).
func (a Agent) ReadsBeforeEdit() bool { return a.ReadBeforeEdit == nil || *a.ReadBeforeEdit }

// SubagentLimits is an agent's sub-agent policy.
type SubagentLimits struct {
	// Allow lists the agent ids it may spawn ("*" for any); none when empty.
	Allow Names `yaml:"allow"`
	// MaxDepth is how deep a chain of sub-agents under it may go (0 means
	// the default).
	MaxDepth int `yaml:"maxDepth" default:"1"`
	// MaxConcurrent is how many of its sub-agents may run at once (0 means
	// the default).
	MaxConcurrent int `yaml:"maxConcurrent" default:"4"`
}

// Depth is MaxDepth with its default.
func (l SubagentLimits) Depth() int { return cmp.Or(l.MaxDepth, 1) }

// Concurrent is MaxConcurrent with its default.
func (l SubagentLimits) Concurrent() int { return cmp.Or(l.MaxConcurrent, 4) }

// ValidAgentID reports whether id may name an agent: letters, digits, '_'
// and '-' (ids are part of session keys, agent:<id>:…).
func ValidAgentID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Scope holds the tool policy of a channel, the sandbox or sub-agents.
type Scope struct {
	Tools Rules `yaml:"tools"`
}

// Rules is one layer of tool policy.
type Rules struct {
	// Profile limits the tools to a profile (minimal, coding, messaging, full).
	Profile string `yaml:"profile" default:"full"`
	// Allow, when not empty, allows only these tools (names, * globs, group:
	// references).
	Allow Names `yaml:"allow"`
	// AlsoAllow adds tools to the profile.
	AlsoAllow Names `yaml:"alsoAllow"`
	// Deny removes tools. Within a layer deny wins.
	Deny Names `yaml:"deny"`
	// Ask requires a person's confirmation for matching calls.
	Ask []AskRule `yaml:"ask"`
	// ByProvider holds rules for one provider ("openai") or one model
	// ("openai/gpt-5"), applied on top of these.
	ByProvider map[string]Rules `yaml:"byProvider"`
}

// AskRule requires confirmation for calls of some tools, optionally only when
// arguments match: when.command: ["rm -rf *", "git push*"] (one pattern may
// be written without the list). A condition on files — path, file,
// file_path, paths, … — is about the files the call touches, whatever the
// tool: when.path: "*.go" holds when a path the call names, or a file it
// would change (as its preview lists them: relative to the workspace, links
// resolved, both sides of a move), matches; and it always holds for a tool
// that cannot list the files it changes (exec, directory and imported
// tools): see docs/governance.md.
type AskRule struct {
	// Tool names the tools the rule is for; "write" names every tool that
	// changes files (write, edit, apply_patch, tts).
	Tool Names `yaml:"tool"`
	// When limits the rule to calls whose arguments match: an argument's
	// name and its * patterns (case ignored). Without it the rule holds for
	// every call.
	When map[string]Names `yaml:"when"`
}

// UnmarshalYAML reads an ask rule, or a tool reference alone
// ("exec(git push:*)"), which is the rule {tool: REF}.
func (a *AskRule) UnmarshalYAML(node ast.Node) error {
	if _, ok := node.(*ast.StringNode); ok {
		return yaml.NodeToValue(node, &a.Tool)
	}
	type plain AskRule
	return yaml.NodeToValue(node, (*plain)(a))
}

// Tools is the global policy plus the tools' own settings: any key of tools:
// that is not a policy key is the settings of the tool (or section) it names,
// passed to it as tool.Context.Config[key] and checked against the type the
// tool declares (CheckTools).
type Tools struct {
	Rules
	// Dirs are the folders of directory tools (default: toolbelt/tools in
	// the user's config directory). A workspace's own tools folder is loaded
	// only when listed here.
	Dirs []ToolDir `yaml:"dirs" default:"~/.config/toolbelt/tools"`
	// DirsSet says dirs was written (an empty list turns the default off).
	DirsSet bool `yaml:"-"`
	// OpenAPI are the HTTP APIs whose OpenAPI documents are imported as
	// tools.
	OpenAPI []OpenAPI `yaml:"openapi"`
	// Summaries are the lines that list tools in compact mode, by tool
	// name (tool_search's answers and the agent's system prompt). They beat
	// a directory tool's metadata.json summary and an imported server's
	// summaries, which beat the first sentence of the tool's description.
	Summaries map[string]string `yaml:"summaries"`
	Settings  map[string]any
	// nodes of each settings key (its key and its value), in file order,
	// to check them where they are written.
	nodes []*ast.MappingValueNode
}

// PolicyKeys are the keys of Rules under tools:; every other key there holds
// a tool's (or a section's) settings.
var PolicyKeys = []string{"profile", "allow", "alsoAllow", "deny", "ask", "byProvider"}

// UnmarshalYAML decodes the policy keys and keeps every other key as tool
// settings; the checker has made sure each has the right shape.
func (t *Tools) UnmarshalYAML(node ast.Node) error {
	m, ok := node.(*ast.MappingNode)
	if !ok {
		return nil
	}
	rules := &ast.MappingNode{BaseNode: m.BaseNode, Start: m.Start, End: m.End, IsFlowStyle: m.IsFlowStyle}
	t.Settings, t.nodes = map[string]any{}, nil
	for _, kv := range m.Values {
		key := keyOf(kv)
		if key == "dirs" {
			if err := yaml.NodeToValue(kv.Value, &t.Dirs); err != nil {
				return err
			}
			t.DirsSet = true
			continue
		}
		if key == "openapi" {
			if err := yaml.NodeToValue(kv.Value, &t.OpenAPI); err != nil {
				return err
			}
			continue
		}
		if key == "summaries" {
			if err := yaml.NodeToValue(kv.Value, &t.Summaries); err != nil {
				return err
			}
			continue
		}
		if slices.Contains(PolicyKeys, key) {
			rules.Values = append(rules.Values, kv)
			continue
		}
		v := map[string]any{}
		if err := yaml.NodeToValue(kv.Value, &v); err != nil {
			return err
		}
		t.Settings[key] = v
		t.nodes = append(t.nodes, kv)
	}
	return yaml.NodeToValue(rules, &t.Rules)
}

// Names is one tool reference or a list of them (names, aliases, * globs,
// group: references).
type Names []string

// UnmarshalYAML accepts a string or a sequence of strings. In a flow
// sequence YAML reads [group:web] as a mapping {group: web}; such an element
// is read back as the reference "group:web" it was meant to be.
func (n *Names) UnmarshalYAML(node ast.Node) error {
	switch v := node.(type) {
	case *ast.NullNode:
		*n = nil
		return nil
	case *ast.SequenceNode:
		list := make(Names, 0, len(v.Values))
		for _, item := range v.Values {
			ref, err := reference(item)
			if err != nil {
				return err
			}
			list = append(list, ref)
		}
		*n = list
		return nil
	}
	ref, err := reference(node)
	if err != nil {
		return err
	}
	*n = Names{ref}
	return nil
}

// reference reads one tool reference.
func reference(node ast.Node) (string, error) {
	switch v := node.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.MappingNode:
		if len(v.Values) == 1 {
			kv := v.Values[0]
			if s, ok := kv.Value.(*ast.StringNode); ok {
				return kv.Key.String() + ":" + s.Value, nil
			}
		}
	case *ast.MappingValueNode:
		if s, ok := v.Value.(*ast.StringNode); ok {
			return v.Key.String() + ":" + s.Value, nil
		}
	}
	return "", fmt.Errorf("want a tool name, alias, * glob or group: reference, not %s", given(node))
}

// Duration is a time.Duration written as "30s", "5m", "1h".
type Duration time.Duration

// UnmarshalYAML parses a Go duration.
func (d *Duration) UnmarshalYAML(node ast.Node) error {
	v, ok := durationOf(node)
	if !ok {
		return fmt.Errorf("want a duration such as 30s, 5m or 1h, not %s", given(node))
	}
	*d = v
	return nil
}

// durationOf reads a duration: a string such as 30s, 5m or 1h, not
// negative.
func durationOf(node ast.Node) (Duration, bool) {
	s, ok := node.(*ast.StringNode)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s.Value)
	return Duration(v), err == nil && v >= 0
}

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// LineError is a problem at a line (and column) of the file.
type LineError struct {
	Path   string
	Line   int
	Column int
	Msg    string
}

func (e *LineError) Error() string {
	var at string
	switch {
	case e.Line > 0 && e.Column > 0:
		at = fmt.Sprintf("%d:%d", e.Line, e.Column)
	case e.Line > 0:
		at = strconv.Itoa(e.Line)
	}
	switch {
	case at == "" && e.Path == "":
		return e.Msg
	case at == "":
		return e.Path + ": " + e.Msg
	case e.Path == "":
		return "line " + at + ": " + e.Msg
	}
	return e.Path + ":" + at + ": " + e.Msg
}

// Parse reads a configuration from data; name is the file it came from, for
// messages. Its error names every problem, in file order, each at its line
// and column: unknown keys (with the closest key), values of the wrong type,
// values out of range and paths that do not exist.
func Parse(name string, data []byte) (*Config, error) {
	c, errs := parse(name, data)
	if err := Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// Check reports every problem of the configuration in data (from the file
// name), in file order: those Parse reports, and those CheckTools reports
// against the tools of reg of what in it could be read.
func Check(name string, data []byte, reg *registry.Registry) error {
	c, errs := parse(name, data)
	if c != nil {
		errs = append(errs, c.CheckTools(reg))
	}
	return Join(errs...)
}

// parse reads what it can of a configuration, leaving out the keys with
// problems, and returns it (nil when the file is not YAML) with every
// problem.
func parse(name string, data []byte) (*Config, []error) {
	c := &Config{Path: name}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, []error{syntaxError(name, err)}
	}
	c.file = file
	if len(file.Docs) == 0 || file.Docs[0].Body == nil {
		return c, nil
	}
	body := file.Docs[0].Body
	k := &checker{file: name, tag: "yaml"}
	k.check(body, reflect.TypeFor[Config](), "")
	if err := yaml.NodeToValue(body, c); err != nil {
		return nil, append(k.errs, fmt.Errorf("%s: %w", name, err))
	}
	errs := append(k.errs, c.validate()...)
	for name, srv := range c.MCPServers {
		if srv.EnvFile != "" {
			srv.EnvFile = c.Resolve(srv.EnvFile)
			c.MCPServers[name] = srv
		}
		if srv.OAuth != nil && srv.OAuth.PrivateKeyFile != "" {
			srv.OAuth.PrivateKeyFile = c.Resolve(srv.OAuth.PrivateKeyFile)
		}
		if srv.OAuth != nil && srv.OAuth.IDP != nil && len(srv.OAuth.IDP.IDTokenCommand) > 0 && strings.ContainsRune(srv.OAuth.IDP.IDTokenCommand[0], '/') {
			srv.OAuth.IDP.IDTokenCommand[0] = c.Resolve(srv.OAuth.IDP.IDTokenCommand[0])
		}
	}
	return c, errs
}

// syntaxError renders the parser's error as "FILE:LINE:COLUMN: message".
func syntaxError(name string, err error) error {
	var yerr yaml.Error
	if errors.As(err, &yerr) {
		if tk := yerr.GetToken(); tk != nil {
			return &LineError{Path: name, Line: tk.Position.Line, Column: tk.Position.Column, Msg: yerr.GetMessage()}
		}
	}
	return fmt.Errorf("%s: %w", name, err)
}

// topKeys lists the keys of a configuration's top level, in order.
func topKeys() []string {
	var keys []string
	for f := range reflect.TypeFor[Config]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// Load reads the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Find returns the configuration file to use: explicit (from --config) if
// given, else TOOLBELT_CONFIG, else toolbelt.yaml in the working directory,
// else in the user's config directory. It returns "" when there is none,
// which means the defaults; an explicit file that does not exist is an error.
func Find(explicit string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv("TOOLBELT_CONFIG")
	}
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("config file: %w", err)
		}
		return explicit, nil
	}
	candidates := []string{FileName}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "toolbelt", FileName))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", nil
}

// Open finds and loads the configuration (see Find); without a file it
// returns the defaults.
func Open(explicit string) (*Config, error) {
	path, err := Find(explicit)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return &Config{}, nil
	}
	return Load(path)
}

// Line returns the line of the value at a YAML path ("$.tools.deny[0]"), or
// 0 when the configuration did not come from a file or has no such value.
func (c *Config) Line(path string) int {
	return c.ErrorAt(path, "").Line
}

// ErrorAt returns a LineError at the value at a YAML path (at the nearest
// value that holds it when the path names none).
func (c *Config) ErrorAt(path, msg string) *LineError {
	return errorAt(c.Path, c.node(path), msg)
}

// node returns the value at a YAML path, or nil.
func (c *Config) node(path string) ast.Node {
	if c.file == nil {
		return nil
	}
	for {
		if p, err := yaml.PathString(path); err == nil {
			if node, err := p.FilterFile(c.file); err == nil && node != nil {
				return node
			}
		}
		// A list of one may be written as its element: tool: write for
		// tool: [write]; the element's line is then the key's.
		trimmed, ok := strings.CutSuffix(path, "]")
		i := strings.LastIndexByte(trimmed, '[')
		if !ok || i < 0 {
			return nil
		}
		path = trimmed[:i]
	}
}

// errorAt returns a LineError for the value at a YAML path.
func (c *Config) errorAt(path, msg string) error {
	return c.ErrorAt(path, msg)
}

// SettingLine returns the line of the tool settings under tools.<key>.
func (c *Config) SettingLine(key string) int {
	for _, kv := range c.Tools.nodes {
		if keyOf(kv) == key {
			return kv.Key.GetToken().Position.Line
		}
	}
	return 0
}

// validate checks what the types alone do not.
func (c *Config) validate() []error {
	var errs []error
	if o := c.Audit.Sync; o != "" && o != "none" && o != "always" {
		errs = append(errs, c.errorAt("$.audit.sync", fmt.Sprintf("audit.sync is %q: use none (the default: records reach the operating system before the result) or always (fsync before the result)", o)))
	}
	if w := c.Jobs.Workers; w < 0 {
		errs = append(errs, c.errorAt("$.jobs.workers", fmt.Sprintf("jobs.workers is %d: use a positive number, or leave it out for 25", w)))
	}
	if d := c.Jobs.StepTimeout; d < 0 {
		errs = append(errs, c.errorAt("$.jobs.stepTimeout", "jobs.stepTimeout must not be negative"))
	}
	if s := c.Jobs.WebhookSecret; s != "" && !strings.HasPrefix(s, "whsec_") {
		errs = append(errs, c.errorAt("$.jobs.webhookSecret", `jobs.webhookSecret must be "whsec_" followed by base64 (the Standard Webhooks form); make one with: echo whsec_$(head -c 32 /dev/urandom | base64)`))
	}
	errs = append(errs, c.checkMode("$.mode", "mode", c.Mode))
	if o := c.Confirm.OnTimeout; o != "" && o != "deny" && o != "allow" {
		errs = append(errs, c.errorAt("$.confirm.onTimeout", fmt.Sprintf("confirm.onTimeout is %q: use deny or allow", o)))
	}
	for _, f := range []struct {
		path string
		v    int
	}{
		{"$.limits.maxResultChars", c.Limits.MaxResultChars}, {"$.limits.maxResultTokens", c.Limits.MaxResultTokens},
		{"$.limits.eventMaxChars", c.Limits.EventMaxChars}, {"$.limits.imageMaxSide", c.Limits.ImageMaxSide},
		{"$.limits.imageMaxBytes", c.Limits.ImageMaxBytes},
	} {
		if f.v < 0 {
			errs = append(errs, c.errorAt(f.path, fmt.Sprintf("%s is %d: it must not be negative", strings.TrimPrefix(f.path, "$."), f.v)))
		}
	}
	for name, srv := range c.MCPServers {
		errs = append(errs, c.validateServer(name, srv)...)
	}
	for i, d := range c.Tools.Dirs {
		if strings.TrimSpace(d.Path) == "" {
			errs = append(errs, c.errorAt(fmt.Sprintf("$.tools.dirs[%d]", i), fmt.Sprintf("tools.dirs[%d] has no path: give the folder of the tools", i)))
		}
	}
	errs = append(errs, c.validateOpenAPI()...)
	if c.Workspace != "" {
		errs = append(errs, c.mustBeDir("$.workspace", "workspace", c.Workspace))
	}
	for _, id := range slices.Sorted(maps.Keys(c.Agents)) {
		a, path := c.Agents[id], "$.agents.'"+id+"'"
		if !ValidAgentID(id) {
			errs = append(errs, c.errorAt(path, fmt.Sprintf("agents: the id %q may use only letters, digits, '_' and '-' (it becomes part of session keys)", id)))
		}
		if a.Workspace != "" {
			errs = append(errs, c.mustBeDir(path+".workspace", "agents."+id+".workspace", a.Workspace))
		}
		if a.Model != "" && !strings.Contains(a.Model, "/") {
			errs = append(errs, c.errorAt(path+".model", fmt.Sprintf("agents.%s.model is %q: write PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5", id, a.Model)))
		}
		errs = append(errs, c.checkMode(path+".mode", "agents."+id+".mode", a.Mode))
		if a.Thinking != "" && !slices.Contains(thinkingLevels, a.Thinking) {
			errs = append(errs, c.errorAt(path+".thinking", fmt.Sprintf("agents.%s.thinking is %q: use %s", id, a.Thinking, strings.Join(thinkingLevels, ", "))))
		}
		errs = append(errs, c.checkCompaction(path+".compaction", "agents."+id+".compaction", a.Compaction))
		errs = append(errs, c.checkModel(path+".compaction.model", "agents."+id+".compaction.model", a.Compaction.Model))
		errs = append(errs, c.checkModel(path+".repair.model", "agents."+id+".repair.model", a.Repair.Model))
		if a.Subagents.MaxDepth < 0 || a.Subagents.MaxConcurrent < 0 {
			errs = append(errs, c.errorAt(path+".subagents", fmt.Sprintf("agents.%s.subagents: maxDepth and maxConcurrent must not be negative (0 means the default)", id)))
		}
		for _, target := range a.Subagents.Allow {
			if _, ok := c.Agents[target]; !ok && target != "*" {
				errs = append(errs, c.errorAt(path+".subagents.allow", fmt.Sprintf("agents.%s.subagents.allow names %q, which is not a configured agent (configured: %s)", id, target, strings.Join(slices.Sorted(maps.Keys(c.Agents)), ", "))))
			}
		}
	}
	if f := c.MCP.ConfirmFallback; f != "" && f != "console" && f != "deny" && f != "allow" {
		errs = append(errs, c.errorAt("$.mcp.confirmFallback", fmt.Sprintf("mcp.confirmFallback is %q: use console, deny or allow", f)))
	}
	for _, kv := range [][2]string{{"elicitation", c.ToolRequests.Elicitation}, {"sampling", c.ToolRequests.Sampling}} {
		if key, v := kv[0], kv[1]; v != "" && v != "allow" && v != "deny" {
			errs = append(errs, c.errorAt("$.toolRequests."+key, fmt.Sprintf("toolRequests.%s is %q: use allow or deny", key, v)))
		}
	}
	if c.MCP.CompactAbove < 0 || c.MCP.MaxResponseBytes < 0 {
		errs = append(errs, c.errorAt("$.mcp", "mcp.compactAbove and mcp.maxResponseBytes must not be negative"))
	}
	errs = append(errs, c.validateHooks()...)
	errs = append(errs, c.validateChannels()...)
	for _, f := range []struct {
		key string
		v   int
	}{{"maxMessageBytes", c.MCP.MaxMessageBytes}, {"maxSessions", c.MCP.MaxSessions}, {"maxConnections", c.MCP.MaxConnections}} {
		if f.v < 0 {
			errs = append(errs, c.errorAt("$.mcp."+f.key, fmt.Sprintf("mcp.%s is %d: it must not be negative (0 means the default)", f.key, f.v)))
		}
	}
	seen := map[string]bool{}
	for i, t := range c.MCP.Tokens {
		path := fmt.Sprintf("$.mcp.tokens[%d]", i)
		switch {
		case strings.TrimSpace(t.Token) == "":
			errs = append(errs, c.errorAt(path, fmt.Sprintf("mcp.tokens[%d] has no token: give the secret or ${ENV_VAR}", i)))
		case strings.TrimSpace(t.Principal) == "":
			errs = append(errs, c.errorAt(path, fmt.Sprintf("mcp.tokens[%d] has no principal: name who the token stands for", i)))
		case seen[t.Token]:
			errs = append(errs, c.errorAt(path, fmt.Sprintf("mcp.tokens[%d] repeats the token of an earlier entry: each token must map to one principal", i)))
		}
		seen[t.Token] = true
	}
	errs = append(errs, c.checkMCPOAuth()...)
	errs = append(errs, c.checkMCPResources()...)
	errs = append(errs, c.checkModel("$.model", "model", c.Model))
	errs = append(errs, c.checkCompaction("$.compaction", "compaction", c.Compaction))
	errs = append(errs, c.checkModel("$.compaction.model", "compaction.model", c.Compaction.Model))
	errs = append(errs, c.checkModel("$.repair.model", "repair.model", c.Repair.Model))
	for name, p := range c.Providers {
		if p.ContextWindow < 0 {
			errs = append(errs, c.errorAt("$.providers.'"+name+"'.contextWindow", fmt.Sprintf("providers.%s.contextWindow must not be negative", name)))
		}
		if p.URL != "" && !strings.HasPrefix(p.URL, "http://") && !strings.HasPrefix(p.URL, "https://") {
			errs = append(errs, c.errorAt("$.providers.'"+name+"'.url", fmt.Sprintf("providers.%s.url is %q: it must be an http:// or https:// URL", name, p.URL)))
		}
		for model, pr := range p.Prices {
			if pr.Input < 0 || pr.Output < 0 || pr.CacheRead < 0 || pr.CacheWrite < 0 {
				errs = append(errs, c.errorAt("$.providers.'"+name+"'.prices", fmt.Sprintf("providers.%s.prices.%s: prices must not be negative", name, model)))
			}
		}
	}
	if c.Database != "" && !strings.HasPrefix(c.Database, "postgres://") && !strings.HasPrefix(c.Database, "postgresql://") {
		errs = append(errs, c.errorAt("$.database", fmt.Sprintf("database is %q: it must be a postgres:// URL (SQLite lives in the data directory)", redactURL(c.Database))))
	}
	return slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

// checkCompaction returns an error at path when cp, the value of key, is
// out of range, nil when it is not.
func (c *Config) checkCompaction(path, key string, cp Compaction) error {
	if cp.Threshold < 0 || cp.Threshold > 1 || cp.KeepTurns < 0 || cp.ToolResultTurns < 0 {
		return c.errorAt(path, fmt.Sprintf("%s: threshold must be a share of the context window between 0 and 1, keepTurns and toolResultTurns must not be negative (0 means the default)", key))
	}
	return nil
}

// checkModel returns an error at path when model, the value of key, is
// set and not PROVIDER/MODEL, nil when it is not.
func (c *Config) checkModel(path, key, model string) error {
	if p, name, ok := strings.Cut(model, "/"); model != "" && (!ok || p == "" || name == "") {
		return c.errorAt(path, fmt.Sprintf("%s is %q: write it as PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5", key, model))
	}
	return nil
}

// checkMode returns an error at path unless name, the value of key, is a
// permission mode; nil when it is.
func (c *Config) checkMode(path, key, name string) error {
	if _, err := policy.ParseMode(name); err != nil {
		return c.errorAt(path, key+": "+err.Error())
	}
	return nil
}

// Modes returns the permission modes the configuration sets: the one for
// every agent, and the agents' own.
func (c *Config) Modes() (policy.Mode, map[string]policy.Mode) {
	agents := map[string]policy.Mode{}
	for id, a := range c.Agents {
		if a.Mode != "" {
			agents[id] = policy.Mode(a.Mode)
		}
	}
	return policy.Mode(c.Mode), agents
}

// mustBeDir returns an error at path unless dir, the value of key, is a
// directory (resolved as Resolve does); nil when it is.
func (c *Config) mustBeDir(path, key, dir string) error {
	abs := c.Resolve(dir)
	if a, err := filepath.Abs(abs); err == nil {
		abs = a
	}
	given := fmt.Sprintf("%q", dir)
	if abs != dir {
		given += " (" + abs + ")"
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return c.errorAt(path, fmt.Sprintf("%s is %s, which %s: create it or give another directory", key, given, reason(err)))
	case !st.IsDir():
		return c.errorAt(path, fmt.Sprintf("%s is %s, which is a file, not a directory", key, given))
	}
	return nil
}

// reason says why a file could not be used, without Go's words.
func reason(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "does not exist"
	case errors.Is(err, os.ErrPermission):
		return "may not be read"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Resolve resolves a path written in the configuration: ~ is the home
// directory, and a relative path is relative to the configuration file.
func (c *Config) Resolve(p string) string {
	if p == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(p, "~"); ok && (rest == "" || rest[0] == '/') {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + rest
		}
	}
	if !filepath.IsAbs(p) && c.Path != "" {
		p = filepath.Join(filepath.Dir(c.Path), p)
	}
	return p
}

// redactURL hides a URL's password, for messages.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

// checkMCPOAuth checks mcp.oauth: with any key set, issuer and resource are
// absolute URLs, and the scopes named in principals and ownerScope are
// among the advertised ones.
func (c *Config) checkMCPOAuth() []error {
	o := c.MCP.OAuth
	if o.Issuer == "" && o.Resource == "" && o.JWKSURL == "" && len(o.Scopes) == 0 && len(o.Principals) == 0 && o.OwnerScope == "" {
		return nil
	}
	var errs []error
	for _, f := range []struct{ key, v string }{{"issuer", o.Issuer}, {"resource", o.Resource}, {"jwksUrl", o.JWKSURL}} {
		if u, err := url.Parse(f.v); (f.v != "" || f.key != "jwksUrl") && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
			errs = append(errs, c.errorAt("$.mcp.oauth."+f.key, fmt.Sprintf("mcp.oauth.%s is %q: give an absolute http(s) URL", f.key, f.v)))
		}
	}
	unknown := func(key, scope string) {
		if scope != "" && len(o.Scopes) > 0 && !slices.Contains(o.Scopes, scope) {
			errs = append(errs, c.errorAt("$.mcp.oauth."+key, fmt.Sprintf("mcp.oauth.%s names the scope %q, which is not in mcp.oauth.scopes", key, scope)))
		}
	}
	for _, scope := range slices.Sorted(maps.Keys(o.Principals)) {
		unknown("principals", scope)
	}
	unknown("ownerScope", o.OwnerScope)
	return errs
}

// checkMCPResources checks mcp.resources: each names a uri or a
// uriTemplate, and text or a file; no URI or template is served twice.
func (c *Config) checkMCPResources() []error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range c.MCP.Resources {
		path, key := fmt.Sprintf("$.mcp.resources[%d]", i), fmt.Sprintf("mcp.resources[%d]", i)
		id := r.URI + r.URITemplate
		switch {
		case (r.URI == "") == (r.URITemplate == ""):
			errs = append(errs, c.errorAt(path, key+" needs either uri (test://notes) or uriTemplate (docs://pages/{name}), not both"))
		case (r.Text == "") == (r.File == ""):
			errs = append(errs, c.errorAt(path, key+" needs either text or file (relative to toolbelt.yaml), not both"))
		case !strings.Contains(id, "://"):
			errs = append(errs, c.errorAt(path, fmt.Sprintf("%s is %q: a resource's URI needs a scheme (scheme://…)", key, id)))
		case r.URITemplate != "" && !strings.Contains(r.URITemplate, "{"):
			errs = append(errs, c.errorAt(path+".uriTemplate", fmt.Sprintf("%s.uriTemplate %q has no {variable}: use uri for a fixed URI", key, r.URITemplate)))
		case r.URITemplate != "" && templateError(r.URITemplate) != nil:
			errs = append(errs, c.errorAt(path+".uriTemplate", fmt.Sprintf("%s.uriTemplate %q is not a URI template (RFC 6570): %v", key, r.URITemplate, templateError(r.URITemplate))))
		case seen[id]:
			errs = append(errs, c.errorAt(path, fmt.Sprintf("%s serves %s again: each URI and template once", key, id)))
		}
		seen[id] = true
	}
	return errs
}

// templateError says why t is not an RFC 6570 URI template, nil when it is.
func templateError(t string) error {
	_, err := uritemplate.New(t)
	return err
}
