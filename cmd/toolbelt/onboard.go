package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/llm"
)

// modelChoice is the model init writes into toolbelt.yaml.
type modelChoice struct {
	provider llm.Provider
	model    string
	baseURL  string // the endpoint, when it is not the provider's default or the provider is local
}

// spec is the choice as model: takes it, PROVIDER/MODEL.
func (m modelChoice) spec() string { return m.provider.Name + "/" + m.model }

// local says whether the provider is a server of one's own (no key needed).
func local(p llm.Provider) bool { return !p.KeyRequired }

// chooseFromFlags returns the model the flags name, nil when they name
// none; the model is missing when only the provider is given. --model may
// carry the provider (ollama/qwen3).
func (c *initCmd) chooseFromFlags() (*modelChoice, error) {
	prov, model := c.Provider, c.Model
	if prov == "" {
		if p, m, ok := strings.Cut(model, "/"); ok {
			if _, known := llm.LookupProvider(p); known {
				prov, model = p, m
			}
		}
	}
	switch {
	case prov == "" && model == "" && c.BaseURL == "":
		return nil, nil
	case prov == "":
		return nil, fmt.Errorf("--model and --base-url need the provider: --provider NAME (%s), or --model PROVIDER/MODEL", strings.Join(llm.ProviderNames(), ", "))
	}
	p, ok := llm.LookupProvider(prov)
	if !ok {
		msg := fmt.Sprintf("--provider %q is not a provider toolbelt knows: use one of %s", prov, strings.Join(llm.ProviderNames(), ", "))
		if close := closest.Names(prov, llm.ProviderNames(), 1); len(close) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", close[0])
		}
		return nil, errors.New(msg)
	}
	return &modelChoice{provider: p, model: model, baseURL: c.BaseURL}, nil
}

// complete fills in a local server's usual address, and says what is
// missing for a choice made without questions.
func (m *modelChoice) complete() error {
	if m.model == "" {
		return fmt.Errorf("--provider %s needs the model: --model NAME, the name the provider knows it by (e.g. %s)", m.provider.Name, exampleModel(m.provider))
	}
	if m.baseURL == "" && local(m.provider) {
		m.baseURL = m.provider.BaseURL
	}
	return nil
}

// asker asks a person questions at the terminal.
type asker struct {
	in  *bufio.Reader
	out io.Writer
}

// ask prints the question and returns the answer, or def for an empty one.
func (a asker) ask(question, def string) (string, error) {
	if def != "" {
		question += " [" + def + "]"
	}
	fmt.Fprint(a.out, question+": ")
	line, err := a.in.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		fmt.Fprintln(a.out)
		return "", errors.New("no answer: nothing written (the flags --provider, --model and --yes set it up without questions)")
	}
	if line = strings.TrimSpace(line); line != "" {
		return line, nil
	}
	return def, nil
}

// yes asks a yes-or-no question; no is the default.
func (a asker) yes(question string) (bool, error) {
	answer, err := a.ask(question+" [y/N]", "")
	return strings.HasPrefix(strings.ToLower(answer), "y"), err
}

// askModel asks for the provider, its address (of a local server) and the
// model, each unless the flags gave it; nil means no model now.
func (c *initCmd) askModel(a asker, given *modelChoice) (*modelChoice, error) {
	choice := given
	if choice == nil {
		p, ok, err := askProvider(a)
		if err != nil || !ok {
			return nil, err
		}
		choice = &modelChoice{provider: p}
	}
	if local(choice.provider) && choice.baseURL == "" {
		url, err := a.ask("Base URL of the "+choice.provider.Name+" server", choice.provider.BaseURL)
		if err != nil {
			return nil, err
		}
		choice.baseURL = url
	}
	if local(choice.provider) && choice.model == "" {
		m, err := askListedModel(a, *choice)
		if err != nil {
			return nil, err
		}
		choice.model = m
	}
	for choice.model == "" {
		m, err := a.ask("Model (the name "+choice.provider.Name+" knows it by, e.g. "+exampleModel(choice.provider)+")", "")
		if err != nil {
			return nil, err
		}
		choice.model = m
	}
	return choice, nil
}

// listTimeout bounds asking a local server for its models.
const listTimeout = 10 * time.Second

// askListedModel shows the models the local server of m has, numbered,
// and asks for one (a number, or any name); "" when the list cannot be
// read or is empty, having said why in a line.
func askListedModel(a asker, m modelChoice) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	models, err := llm.Models(ctx, m.provider, m.baseURL)
	switch {
	case err != nil:
		fmt.Fprintf(a.out, "Could not list the models at %s (%v).\n", m.baseURL, err)
		return "", nil
	case len(models) == 0:
		fmt.Fprintf(a.out, "The server at %s has no models yet.\n", m.baseURL)
		return "", nil
	}
	fmt.Fprintf(a.out, "Models at %s:\n", m.baseURL)
	for i, name := range models {
		fmt.Fprintf(a.out, "  %2d  %s\n", i+1, name)
	}
	answer, err := a.ask("Model (a number or a name)", "1")
	if n, nerr := strconv.Atoi(answer); err == nil && nerr == nil && n >= 1 && n <= len(models) {
		return models[n-1], nil
	}
	return answer, err
}

// askProvider shows the providers, local servers first, and asks for one;
// false means none.
func askProvider(a asker) (llm.Provider, bool, error) {
	var order []llm.Provider
	fmt.Fprintln(a.out, "Which model should 'toolbelt run' and 'toolbelt chat' use? Local servers (no key):")
	for _, p := range llm.Providers() {
		if local(p) {
			order = append(order, p)
			fmt.Fprintf(a.out, "  %2d  %-17s %s\n", len(order), p.Name, p.BaseURL)
		}
	}
	fmt.Fprintln(a.out, "Hosted (the key is read from the environment):")
	for _, p := range llm.Providers() {
		if !local(p) {
			order = append(order, p)
			fmt.Fprintf(a.out, "  %2d  %-17s $%s\n", len(order), p.Name, p.KeyEnv[0])
		}
	}
	fmt.Fprintln(a.out, "   0  none              no model now (MCP clients bring their own)")
	for range 3 {
		answer, err := a.ask("Provider (a number or a name)", "1")
		if err != nil {
			return llm.Provider{}, false, err
		}
		if n, err := strconv.Atoi(answer); err == nil && n >= 0 && n <= len(order) {
			if n == 0 {
				return llm.Provider{}, false, nil
			}
			return order[n-1], true, nil
		}
		if answer == "none" {
			return llm.Provider{}, false, nil
		}
		if p, ok := llm.LookupProvider(answer); ok {
			return p, true, nil
		}
		fmt.Fprintf(a.out, "%q is neither a number from the list nor a provider's name.\n", answer)
	}
	return llm.Provider{}, false, errors.New("no provider chosen: nothing written")
}

// exampleModel is a model name to show as an example for p.
func exampleModel(p llm.Provider) string {
	switch p.Name {
	case "anthropic":
		return "claude-sonnet-4-5"
	case "openai", "openai-responses":
		return "gpt-5.1"
	case "google":
		return "gemini-2.5-flash"
	case "vllm":
		return "Qwen/Qwen3-8B"
	}
	return "qwen3"
}

// testTimeout bounds the connection test: a local server may load the
// model into memory first.
const testTimeout = 2 * time.Minute

// testModel sends the model a one-line request, as toolbelt run would, and
// returns nil when it answered, or why not with what to fix.
func testModel(ctx context.Context, m modelChoice) error {
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	client, err := llm.NewClient(m.provider, m.model, llm.Options{BaseURL: m.baseURL, Retry: &llm.Retry{Attempts: 1}})
	if err != nil {
		return err
	}
	// 16 tokens: the least the Responses API takes.
	_, err = client.Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("Say ok.")}, MaxTokens: 16}, nil)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%v\n  %s", err, fixFor(err, m))
}

// fixFor says what to do about a failed connection test.
func fixFor(err error, m modelChoice) string {
	url := m.baseURL
	if url == "" {
		url = m.provider.BaseURL
	}
	var api *llm.APIError
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden):
		return fmt.Sprintf("The server refused the key: check $%s (or the key the server expects).", strings.Join(m.provider.KeyEnv, " or $"))
	case errors.As(err, &api) && api.Status == http.StatusNotFound:
		hint := "check the model's name"
		if m.provider.Name == "ollama" {
			hint = "'ollama pull " + m.model + "' fetches it, 'ollama list' shows the models there are"
		}
		return fmt.Sprintf("%s at %s does not know the model %q: %s.", m.provider.Name, url, m.model, hint)
	case errors.As(err, &opErr) || errors.As(err, &netErr):
		if local(m.provider) {
			return fmt.Sprintf("Nothing answered at %s: start the server (%s), or give its address with --base-url.", url, startHint(m.provider.Name))
		}
		return fmt.Sprintf("%s could not be reached at %s: check the network (and --base-url).", m.provider.Name, url)
	}
	return fmt.Sprintf("Check the model's name and the address %s.", url)
}

// startHint says how a local server is started.
func startHint(provider string) string {
	switch provider {
	case "ollama":
		return "'ollama serve'"
	case "llamacpp":
		return "'llama-server -hf MODEL --jinja'"
	case "vllm":
		return "'vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes'"
	}
	return "its own way"
}

// plainYAML is a value YAML reads as the same string without quotes.
var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._/@+-]*(:[A-Za-z0-9._/@+-]+)*$`)

// yamlString writes s as a YAML scalar: plain where YAML reads it as the
// same string, else double-quoted (JSON's quoting, which YAML reads).
func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
		return strconv.Quote(s)
	}
	if plainYAML.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// modelSection is what init adds to the template for the model: model:,
// providers: (the address of a local server, or a --base-url) and an
// example agent.
func modelSection(m modelChoice) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# The model 'toolbelt run' and 'toolbelt chat' use, PROVIDER/MODEL (--model\n# overrides it for one run).")
	if !local(m.provider) {
		fmt.Fprintf(&b, " The key is read from $%s.", m.provider.KeyEnv[0])
	}
	fmt.Fprintf(&b, "\nmodel: %s\n", yamlString(m.spec()))
	if m.baseURL != "" {
		fmt.Fprintf(&b, "\n# Where the provider is reached (docs/providers.md has its other settings).\nproviders:\n  %s:\n    url: %s\n", m.provider.Name, yamlString(m.baseURL))
	}
	b.WriteString(`
# An example agent (docs/agents.md), with the model above:
#   toolbelt run --agent helper "What is in this folder?"
agents:
  helper:
    description: Answers questions about the files of the workspace.
    system: You help with the files in this workspace. Read them before you answer, and say which ones you used.
    tools:
      profile: coding
`)
	return b.String()
}

// personAt says whether a person types at r: a terminal, not the null
// device a script's input often is (which is a character device too).
func personAt(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || !isTerminal(f) {
		return false
	}
	st, err := f.Stat()
	null, nerr := os.Stat(os.DevNull)
	return err == nil && (nerr != nil || !os.SameFile(st, null))
}
