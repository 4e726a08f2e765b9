package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/agent/host"
	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/mcp/compact"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/tools/image"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// agentFlags are the flags of the commands that run an agent.
type agentFlags struct {
	Agent    string `help:"Run as this configured agent (toolbelt agents): its model, workspace, system prompt and tool policy, unless --model, --workspace or --system say otherwise." placeholder:"ID"`
	Model    string `help:"PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5, openai/gpt-4o, openai-responses/gpt-5.1, google/gemini-2.5-pro, ollama/llama3.2 (default: TOOLBELT_MODEL, then model in toolbelt.yaml)." placeholder:"PROVIDER/MODEL"`
	BaseURL  string `name:"base-url" help:"The provider's endpoint, as its official SDK takes it: http://host:port/v1 for OpenAI-style servers, http://host:port for Anthropic and Gemini." placeholder:"URL"`
	System   string `help:"System prompt, or @FILE to read it from a file." placeholder:"TEXT|@FILE"`
	MaxTurns int    `name:"max-turns" help:"Stop after N model turns (default 50)." placeholder:"N"`
	Thinking string `help:"How much the model thinks before it answers: off, low, medium or high (default: the agent's thinking, else the provider's default)." placeholder:"LEVEL"`
	Profile  string `help:"Offer only the tools of this profile (minimal, coding, messaging, full)."`
	Session  string `help:"Keep the conversation in the store as session ID: resume it if it exists, create it if not." placeholder:"ID"`
	Compact  bool   `help:"Offer the model tool_search, tool_describe and tool_call instead of every tool's schema, the tools named in the system prompt (docs/compact.md); agents.<id>.compact does it for an agent."`
	workspaceFlags
	runFlags
	modeFlags

	// as, when set, is who asks for the run instead of the command line's
	// user (whoever set a schedule).
	as *tool.Identity
}

// agentRun is an agent set up from agentFlags.
type agentRun struct {
	agent  *agent.Agent
	tc     *tool.Context
	cfg    *config.Config
	model  string
	closer io.Closer
	// host runs the agent's session and the sessions it reaches.
	host *runHost
}

// setup checks the flags and makes the agent — its model client, system
// prompt and pipeline — and the session host its session runs in, so that
// it can spawn sub-agents and reach other sessions (when agents are
// configured).
func (f *agentFlags) setup(e *env) (*agentRun, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	var ag config.Agent
	if f.Agent != "" {
		if ag, err = configuredAgent(cfg, f.Agent); err != nil {
			return nil, err
		}
		if f.Workspace == "" {
			f.Workspace = configPath(cfg, ag.Workspace)
		}
	}
	model := cmp.Or(f.Model, ag.Model, os.Getenv("TOOLBELT_MODEL"), cfg.Model)
	switch {
	case model == "":
		return nil, fmt.Errorf("name the model with --model PROVIDER/MODEL (providers: %s), TOOLBELT_MODEL or model in toolbelt.yaml", strings.Join(llm.ProviderNames(), ", "))
	case f.MaxTurns < 0:
		return nil, fmt.Errorf("--max-turns must not be negative")
	case f.DryRun:
		return nil, fmt.Errorf("--dry-run is for call: an agent needs its tools' real results")
	case f.Profile != "" && !catalog.IsProfile(f.Profile):
		return nil, fmt.Errorf("unknown profile %q: use one of %s", f.Profile, strings.Join(catalog.Profiles(), ", "))
	}
	thinking, err := llm.ParseThinking(cmp.Or(f.Thinking, ag.Thinking))
	if err != nil {
		return nil, fmt.Errorf("--thinking: %w", err)
	}
	client, err := toolbelt.ModelClient(cfg, model, f.BaseURL)
	if err != nil {
		return nil, err
	}
	if name, ok := strings.CutPrefix(f.System, "@"); ok && name != "-" {
		if e.systemFile, err = filepath.Abs(name); err != nil {
			return nil, fmt.Errorf("--system %s: %w", f.System, err)
		}
	}
	tc, err := f.runContext(e)
	if err != nil {
		return nil, err
	}
	tc.AgentID = f.Agent
	// An agent's session writes files as a server does: it starts by
	// removing what writes interrupted earlier left behind.
	e.removeStaleTemp(tc, true)
	system := f.System
	if name, ok := strings.CutPrefix(system, "@"); ok {
		b, err := readInput(e, name)
		if err != nil {
			return nil, fmt.Errorf("--system %s: %w", system, err)
		}
		system = string(b)
	} else if system == "" && ag.System != "" {
		if system, err = agentSystem(tc.Workspace, f.Agent, ag.System); err != nil {
			return nil, err
		}
	}
	extra, err := sessionTools(cfg, model, f.Profile)
	if err != nil {
		return nil, err
	}
	rh, err := e.newRunHost(f, cfg, model, tc)
	if err != nil {
		return nil, err
	}
	if err := rh.serveCanvas(); err != nil {
		rh.Close()
		return nil, err
	}
	if err := f.runAs(tc, rh); err != nil {
		return nil, err
	}
	if len(cfg.Agents) > 0 {
		sessions.HostService.Set(tc, rh)
	}
	image.ModelsService.Set(tc, toolbelt.ImageModels(cfg, tc.AgentID, model))
	rh.holdReads(tc, ag)
	compaction, err := agentCompaction(cfg, ag, model, model, f.BaseURL)
	if err != nil {
		return nil, err
	}
	repair, err := agentRepair(cfg, ag, model, f.BaseURL, e.tb.Record)
	if err != nil {
		return nil, err
	}
	system, extra = e.skills(cfg, tc, system, extra)
	runner, closer, err := rh.runner(tc, extra)
	if err != nil {
		return nil, err
	}
	a := &agent.Agent{Client: client, Runner: runner, System: system, MaxTurns: f.MaxTurns, Thinking: thinking, Compaction: compaction, Repair: repair, Hooks: toolbelt.AgentHooks(cfg)}
	if f.Compact || ag.Compact {
		closer = e.compactAgent(a, closer)
	}
	return &agentRun{agent: a, tc: tc, cfg: cfg, model: model, closer: closer, host: rh}, nil
}

// sessionTools selects the tools of an agent session of model: the
// profile's, if one is named, without apply_patch unless
// tools.apply_patch.providers offers it to the model (by default only
// OpenAI's, as the seeds do).
func sessionTools(cfg *config.Config, model, profile string) ([]invoke.Option, error) {
	var sel []registry.Option
	if profile != "" {
		sel = append(sel, registry.Profile(profile))
	}
	patch, err := fs.OffersPatch(tool.Config(cfg.Tools.Settings), model)
	if err != nil {
		return nil, fmt.Errorf("tools.apply_patch: %w", err)
	}
	if !patch {
		sel = append(sel, registry.Exclude("apply_patch"))
	}
	if len(sel) == 0 {
		return nil, nil
	}
	return []invoke.Option{invoke.WithSelection(sel...)}, nil
}

// skills offers the agent of tc the skills of its workspace
// (toolbelt.Skills): system with their listing after it, and extra with
// the option that applies the allowed-tools of those it loads. Skills left
// out are warned about on stderr.
func (e *env) skills(cfg *config.Config, tc *tool.Context, system string, extra []invoke.Option) (string, []invoke.Option) {
	listing, opt, problems := toolbelt.Skills(cfg, tc)
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "toolbelt: skill not loaded: %v\n", p)
	}
	// A resumed session keeps the skills it loaded active.
	if _, err := e.tb.RestoreSkills(context.Background(), tc); err != nil {
		fmt.Fprintf(e.stderr, "toolbelt: %v\n", err)
	}
	if listing != "" {
		system = strings.TrimSpace(system + "\n\n" + listing)
	}
	return system, append(extra, opt)
}

// compactAgent puts agent a in compact mode (docs/compact.md): it is
// offered tool_search, tool_describe and tool_call, which run the tools
// they name through its runner, and its system prompt lists those tools by
// name. The closer returned stops following the registry, then closes c.
func (e *env) compactAgent(a *agent.Agent, c io.Closer) io.Closer {
	cm := compact.New(a.Runner, compact.Options{Summaries: e.tb.Config().Tools.Summaries})
	front := registry.New()
	for _, t := range cm.Tools() {
		if err := front.Register(t); err != nil {
			panic("toolbelt: compact mode's tools: " + err.Error())
		}
	}
	// The named tool's call is governed, audited and shaped by the full
	// pipeline; the front one shares its output store, so result_read
	// handles stay valid.
	tc := a.Runner.Context()
	a.Runner = invoke.New(front, tc, invoke.WithOutputs(tc.Outputs))
	a.System = strings.TrimSpace(a.System + "\n\n" + cm.Listing())
	unwatch := e.tb.Registry().Watch(cm.Refresh)
	return closerFunc(func() error {
		unwatch()
		return c.Close()
	})
}

// runAs makes tc run as the run's session: as who asks for the run (the
// person at the terminal, or f.as) with f.Agent, or, resuming a kept
// session (f.Session), as the identity recorded with it — refused when it
// has rights the asker lacks or belongs to another agent.
func (f *agentFlags) runAs(tc *tool.Context, rh *runHost) error {
	as := tc.Identity
	if f.as != nil {
		as = *f.as
	}
	as.AgentID = f.Agent
	if f.Session != "" {
		var err error
		if as, err = rh.Identity(context.Background(), f.Session, as); err != nil {
			return err
		}
	}
	tc.RunAs(as)
	return nil
}

// agentSystem is an agent's configured system prompt: the text, or the
// file @FILE names, relative to the agent's workspace and confined to it.
func agentSystem(workspace, id, system string) (string, error) {
	name, ok := strings.CutPrefix(system, "@")
	if !ok {
		return system, nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fmt.Errorf("agents.%s.system %s: %w", id, system, err)
	}
	defer root.Close()
	b, err := root.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("agents.%s.system %s: reading it from the workspace %s: %w", id, system, workspace, err)
	}
	return string(b), nil
}

// agentLoops is the loop detection of agent runs: a call repeated with the
// same arguments and outcome gets a warning from the third time in a row
// and is refused once five came back, so a model stuck in a loop hears it.
var agentLoops = invoke.LoopConfig{Warn: 3, Block: 5}

type runCmd struct {
	Prompt string `arg:"" help:"What to ask the model; - reads it from stdin."`
	JSON   bool   `name:"json" help:"Print the transcript as a JSON array of messages, as the last thing on stdout."`
	Events bool   `help:"Print the run's events as JSON lines on stdout instead of the answer."`
	agentFlags
}

func (c *runCmd) Run(e *env) error {
	if c.Prompt == "-" {
		in, err := io.ReadAll(e.stdin)
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		c.Prompt = string(in)
	}
	switch {
	case c.JSON && c.Events:
		return fmt.Errorf("--json and --events both write to stdout: give one")
	case strings.TrimSpace(c.Prompt) == "":
		return fmt.Errorf("the prompt is empty: say what to ask the model")
	}
	// With async tools the run works their jobs, and waits for them.
	e.serving.workJobs = true
	ar, err := c.setup(e)
	if err != nil {
		return err
	}
	defer ar.closer.Close()
	a := ar.agent
	ctx, stop := e.interruptible()
	defer stop()
	switch {
	case c.Events:
		a.OnEvent = func(ev agent.Event) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if enc.Encode(ev) == nil {
				_, _ = e.stdout.Write(termsafe.JSON(buf.Bytes()))
			}
		}
	default:
		// The calls on stderr; a spinner too, unless stdout is for programs.
		view := ar.host.view
		view.spins = !c.JSON
		a.OnEvent = func(ev agent.Event) { view.onCallEvent("", ev) }
	}
	key := c.Session
	if key == "" && c.Agent != "" {
		// An agent's run is kept as a session of its own, to list and resume.
		key = store.SessionKey(c.Agent, "cli", randid.New("", 6))
		fmt.Fprintf(e.stderr, "toolbelt: session %s (resume it with --session %s)\n", key, key)
	}
	transcript, runErr := ar.runSession(ctx, e, key, c.Prompt)
	if transcript == nil {
		return runErr
	}
	if runErr != nil {
		printError(e.stderr, runErr)
		if errors.Is(runErr, llm.ErrContextOverflow) {
			fmt.Fprintln(e.stderr, "toolbelt: the conversation no longer fits the model's context window; start again with less, or use a model with a larger window.")
		}
	}
	switch {
	case c.JSON:
		if err := writeJSON(e.stdout, transcript); err != nil {
			return err
		}
	case !c.Events:
		if last := transcript[len(transcript)-1]; last.Role == llm.RoleAssistant && last.Text() != "" {
			fmt.Fprintln(e.stdout, termsafe.Text(strings.TrimRight(last.Text(), "\n")))
		}
	}
	if runErr != nil {
		return exitCode(exitToolError)
	}
	return nil
}

// runSession runs the agent with prompt in the run's session host: on
// session key, its transcript first and the run's messages kept after;
// with no key, in a session that is not kept. It returns when every
// session the run reached is idle and no job the session started is
// pending (a finished job's outcome reaches the session as a follow-up),
// with the session's transcript. A nil transcript means the session could
// not be read or started.
func (ar *agentRun) runSession(ctx context.Context, e *env, key, prompt string) ([]llm.Message, error) {
	spec, history, err := ar.ownSession(ctx, e, key, "cli:run")
	if err != nil {
		return nil, err
	}
	h := ar.host
	defer h.Close()
	started := time.Now()
	if err := h.StartSession(ctx, spec, history, llm.UserText(prompt)); err != nil {
		return nil, err
	}
	waitErr := waitIdle(ctx, h, e.tb.Jobs(), spec.Key, started)
	if waitErr != nil {
		h.Abort()
		_ = h.Wait(context.Background())
	}
	transcript, err := h.Result(spec.Key)
	return transcript, cmp.Or(err, waitErr)
}

// ownSession readies the session the agent itself runs in its host (run's
// or chat's): session key with its transcript so far, or, with no key, a
// session that is not kept — named kind:<random> when a job queue works
// jobs or a canvas is served, so that jobs and people's actions on the
// canvas have a session to come back to. It runs as the agent's tool
// context does, and the session's canvas URL is printed.
func (ar *agentRun) ownSession(ctx context.Context, e *env, key, kind string) (host.Spec, []llm.Message, error) {
	var history []llm.Message
	if key != "" {
		var err error
		if history, err = ar.host.Transcript(ctx, key); err != nil {
			return host.Spec{}, nil, err
		}
	}
	spec := host.Spec{Key: key, As: ar.tc.Identity, Model: ar.model, Transient: key == ""}
	c := e.tb.Canvas()
	if spec.Transient && (e.tb.Jobs() != nil || c != nil) {
		spec.Key = randid.New(kind+":", 6)
	}
	spec.As.SessionKey = spec.Key
	ar.tc.SessionKey = spec.Key // what chat's /undo records
	if c != nil {
		fmt.Fprintf(e.stderr, "toolbelt: canvas %s\n", c.URL(spec.Key))
	}
	ar.host.root, ar.host.rootKey, ar.host.rootAs = ar.agent, spec.Key, spec.As
	return spec, history, nil
}

// clipLine shows s on one line, cut to n characters (textclip.Clip), line
// breaks as spaces and escapes visible.
func clipLine(s string, n int) string {
	return termsafe.Line(textclip.Clip(strings.ReplaceAll(s, "\n", " "), n))
}
