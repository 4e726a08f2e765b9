package llm

import (
	"net/http"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/provider"
)

// API is a provider's wire format for conversations.
type API int

// The wire formats.
const (
	APIOpenAIChat API = iota
	APIOpenAIResponses
	APIAnthropic
	APIGemini
)

// Provider is a model provider: its wire format, endpoint, key and quirks.
type Provider struct {
	// Name is the provider's name, as --model takes it.
	Name string
	API  API
	// BaseURL is the default endpoint, in the form the official SDK takes.
	BaseURL string
	// KeyEnv are the environment variables the API key is read from, in
	// order; KeyRequired says a request without one cannot succeed.
	KeyEnv      []string
	KeyRequired bool
	Quirks      Quirks
}

// Quirks are what a provider does differently from its wire format's
// reference, as data.
type Quirks struct {
	// CallIDs, when set, rewrites call ids on the wire into this style
	// (ids the provider issued itself already fit and go back unchanged).
	CallIDs *provider.IDStyle
	// NoStrict: the server rejects "strict" tool definitions, so tools are
	// sent in the non-strict dialect.
	NoStrict bool
	// Dialect, when set, is the schema target for tools (provider.ParseTarget),
	// e.g. "xai" or "compat:pattern".
	Dialect string
	// NoParallelCalls: ask for one tool call per turn (parallel_tool_calls: false).
	NoParallelCalls bool
	// NoImages: the model takes no images; images in tool results are
	// replaced by a note.
	NoImages bool
	// Overflow are lower-case fragments of this provider's error message
	// for a request longer than the context window.
	Overflow []string
	// OAuth (Anthropic): the key is an OAuth token of a Claude
	// subscription, sent as Claude Code sends it (Authorization: Bearer,
	// its beta flags and identity, its tool names — mapped back on the
	// way in). A key that starts with sk-ant-oat is one without this set.
	OAuth bool
}

var idStrict9 = provider.IDStrict9
var idAnthropic = provider.IDAnthropic

// providers are the built-in providers.
var providers = []Provider{
	{Name: "openai", API: APIOpenAIChat, BaseURL: "https://api.openai.com/v1", KeyEnv: []string{"OPENAI_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{Overflow: []string{"context_length_exceeded", "maximum context length"}}},
	{Name: "openai-responses", API: APIOpenAIResponses, BaseURL: "https://api.openai.com/v1", KeyEnv: []string{"OPENAI_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{Overflow: []string{"context_length_exceeded", "exceeds the context window"}}},
	{Name: "anthropic", API: APIAnthropic, BaseURL: "https://api.anthropic.com", KeyEnv: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}, KeyRequired: true,
		Quirks: Quirks{CallIDs: &idAnthropic, Overflow: []string{"prompt is too long", "input length and `max_tokens` exceed context limit"}}},
	{Name: "google", API: APIGemini, BaseURL: "https://generativelanguage.googleapis.com", KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{Overflow: []string{"exceeds the maximum number of tokens", "input token count"}}},
	{Name: "ollama", API: APIOpenAIChat, BaseURL: "http://localhost:11434/v1", KeyEnv: []string{"OLLAMA_API_KEY"},
		Quirks: Quirks{NoStrict: true, Overflow: []string{"context length", "exceeds the available context"}}},
	{Name: "vllm", API: APIOpenAIChat, BaseURL: "http://localhost:8000/v1", KeyEnv: []string{"VLLM_API_KEY"},
		Quirks: Quirks{NoStrict: true, Overflow: []string{"maximum context length", "context length"}}},
	{Name: "llamacpp", API: APIOpenAIChat, BaseURL: "http://localhost:8080/v1", KeyEnv: []string{"LLAMACPP_API_KEY"},
		Quirks: Quirks{NoStrict: true, NoParallelCalls: true, NoImages: true, Overflow: []string{"exceeds the available context size", "context size"}}},
	{Name: "lmstudio", API: APIOpenAIChat, BaseURL: "http://localhost:1234/v1", KeyEnv: []string{"LMSTUDIO_API_KEY"},
		Quirks: Quirks{NoStrict: true, Overflow: []string{"context length", "context overflow"}}},
	{Name: "mistral", API: APIOpenAIChat, BaseURL: "https://api.mistral.ai/v1", KeyEnv: []string{"MISTRAL_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{CallIDs: &idStrict9, NoStrict: true, NoParallelCalls: true, NoImages: true, Overflow: []string{"too large for model", "context length"}}},
	{Name: "openrouter", API: APIOpenAIChat, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: []string{"OPENROUTER_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{NoStrict: true, Overflow: []string{"maximum context length", "context length"}}},
	{Name: "xai", API: APIOpenAIChat, BaseURL: "https://api.x.ai/v1", KeyEnv: []string{"XAI_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{NoStrict: true, Dialect: "xai", Overflow: []string{"maximum prompt length", "context length"}}},
	{Name: "deepseek", API: APIOpenAIChat, BaseURL: "https://api.deepseek.com/v1", KeyEnv: []string{"DEEPSEEK_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{NoStrict: true, NoImages: true, Overflow: []string{"maximum context length"}}},
	{Name: "groq", API: APIOpenAIChat, BaseURL: "https://api.groq.com/openai/v1", KeyEnv: []string{"GROQ_API_KEY"}, KeyRequired: true,
		Quirks: Quirks{NoStrict: true, Overflow: []string{"context_length_exceeded", "reduce the length"}}},
}

// Providers returns the built-in providers.
func Providers() []Provider { return slices.Clone(providers) }

// ProviderNames lists the built-in providers' names.
func ProviderNames() []string {
	out := make([]string, len(providers))
	for i, p := range providers {
		out[i] = p.Name
	}
	return out
}

// LookupProvider returns the built-in provider with this name ("gemini"
// is google).
func LookupProvider(name string) (Provider, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "gemini" {
		name = "google"
	}
	for _, p := range providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Target returns the name of the tool target (provider.ParseTarget) the
// provider's requests use.
func (p Provider) Target() string {
	if p.Quirks.Dialect != "" {
		return p.Quirks.Dialect
	}
	switch p.API {
	case APIAnthropic:
		return "anthropic"
	case APIGemini:
		return "gemini"
	case APIOpenAIResponses:
		if p.Quirks.NoStrict {
			return "openai-responses"
		}
		return "openai-responses-strict"
	}
	if p.Quirks.NoStrict {
		return "openai"
	}
	return "openai-strict"
}

// overflow says whether an error response means the request was longer
// than the context window.
func (p Provider) overflow(status int, code, msg string) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	if status != 0 && status != http.StatusBadRequest {
		return false
	}
	text := strings.ToLower(code + " " + msg)
	for _, f := range p.Quirks.Overflow {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// idMap returns the call-id map of one request, or nil when ids go as they are.
func (p Provider) idMap() *provider.IDMap {
	if p.Quirks.CallIDs == nil {
		return nil
	}
	return provider.NewIDMap(*p.Quirks.CallIDs)
}

// wireID returns a call id as it goes on the wire.
func wireID(m *provider.IDMap, id string) string {
	if m == nil {
		return id
	}
	return m.ID(id)
}

// noteImagesOmitted is the text that stands for images a model cannot take.
const noteImagesOmitted = "(%d image(s) omitted: this model does not accept images)"

// noteAudioOmitted is the text that stands for audio a model cannot take.
const noteAudioOmitted = "(%d audio clip(s) omitted: this model does not accept audio)"
