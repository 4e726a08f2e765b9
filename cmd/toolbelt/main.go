// Command toolbelt lists, describes and runs the tools of a Toolbelt registry
// through the governed pipeline.
//
// Exit codes: 0 ok, 1 a tool returned an error result, 2 a usage or
// configuration error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/gcpace"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tools"
)

func main() {
	os.Exit(run(os.Args[1:], processEnv(tools.Core)))
}

// processEnv is the environment of the toolbelt command run as a process:
// its standard streams, the tools makeTools makes, made early, and the
// start's lighter garbage collection.
func processEnv(makeTools func() (*registry.Registry, io.Closer)) env {
	startDone := collectLessAtStart()
	return env{
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		tools:     early(makeTools),
		startDone: func() { startDone() },
		reexec:    reexec,
	}
}

// reexec replaces the process with the toolbelt command run with args, in
// the same environment: the same executable, process id and standard
// streams (descriptors Go opened close on exec).
func reexec(args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, append([]string{os.Args[0]}, args...), os.Environ())
}

// early starts making the built-in tools at once, beside the parsing of the
// command line and the configuration, and returns what waits for them:
// inferring their schemas was half a millisecond of a server's start.
// A command that never uses them leaves them to the process's exit.
func early(makeTools func() (*registry.Registry, io.Closer)) func() (*registry.Registry, io.Closer) {
	type made struct {
		reg    *registry.Registry
		closer io.Closer
	}
	ch := make(chan made, 1)
	go func() {
		reg, closer := makeTools()
		ch <- made{reg, closer}
	}()
	return sync.OnceValues(func() (*registry.Registry, io.Closer) {
		m := <-ch
		return m.reg, m.closer
	})
}

// A run collects garbage less often (startGCPercent) for its first
// startGCFor, or until a server has given its first answers
// (afterFirstAnswer); while it does, a heap that grows past
// startMemoryLimit is collected all the same.
const (
	startGCPercent   = 400
	startGCFor       = time.Second
	startMemoryLimit = 256 << 20
)

// gcHeadroom is the heap a server may allocate between two garbage
// collections at least, once its start is done (gcpace). The MCP SDK
// decodes each message's JSON with a fresh 32 KB buffer, several times
// per call over HTTP: with the runtime's usual 4 MB goal a server
// collected every dozen calls, a fifth of its CPU over HTTP, and the
// collections' marking made the slowest stdio calls. The cost is memory:
// a busy server's heap grows by up to this much before it is collected.
//
// The pacer stays for the aim of HTTP calls/s ≥ 0.9× the bare go-sdk
// server: go run ./bench/compare -starts 16 -calls 2000 -seconds 2, three
// runs on 2026-11-29 (load average 5–17), builds interleaved: 0.95×, 1.04×,
// 1.02× with it; 0.75×, 0.82×, 0.57× without gcpace (the start's pace
// kept), 0.68×, 0.72×, 0.70× without either. It does not move the starts
// (CPU of a plain start 70.2 ms with, 70.4 ms without either, 40 starts
// each). Its cost is memory: an idle server after 2,000 stdio calls and a
// rest holds 9.8–10.2 MB of anonymous memory with it, 11.4–11.6 MB without
// (it gives the headroom back at rest), but a server busy over HTTP grows
// by up to gcHeadroom before it collects.
const gcHeadroom = 16 << 20

// collectLessAtStart makes the garbage collector run less often while the
// command starts: a start allocates a lot that lives on (the tools, their
// schemas, imported servers' tool lists) and little garbage, and a
// collection during a server's start delays its first answers. It returns
// what ends the start's pace (run after startGCFor in any case): the
// memory limit comes back and the collector keeps gcHeadroom from then on
// (gcpace.Start), which a server's calls need and a short command never
// reaches; it gives that pacer, nil when GOGC is set.
func collectLessAtStart() func() *gcpace.Pacer {
	percent := debug.SetGCPercent(startGCPercent)
	limit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(limit, startMemoryLimit))
	restore := sync.OnceValue(func() *gcpace.Pacer {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
		return gcpace.Start(gcHeadroom)
	})
	time.AfterFunc(startGCFor, func() { restore() })
	return restore
}

// env is what a run of the CLI works with; tests supply their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// tools makes the registry the commands use, and what closes the
	// tools' resources.
	tools func() (*registry.Registry, io.Closer)
	log   *slog.Logger
	// startDone, when set, ends the start's lighter garbage collection
	// (collectLessAtStart).
	startDone func()

	// tb is the run's composition root, opened by the first command that
	// needs it (root), of kind tbKind; serving is what it is asked to do
	// beside opening.
	tb      *toolbelt.Toolbelt
	tbKind  rootKind
	serving serving
	// gateway is the server the gateway tool manages (serve only).
	gateway *serveGateway
	// reexec, when set, replaces the process with the toolbelt command
	// run with args (the gateway tool's restart); in-process runs (tests)
	// have none, and their server cannot restart itself.
	reexec func(args []string) error
	// lines, when set, is standard input read by lines: toolbelt chat's at
	// a terminal, where its questions at the terminal read their answers.
	lines *lineSource
	// workspace is the command's --workspace flag, for what is decided
	// before the command asks (which directory tools the agent can reach).
	workspace string
	// mode is the command's --mode flag: the permission mode of its calls.
	mode string
	// trying is the folder of the directory tool toolbelt tool try runs.
	trying string
	// wrapBridge, when set (by tests), wraps the file bridge of every
	// workspace, to stop a change between two files.
	wrapBridge func(fsbridge.Bridge) fsbridge.Bridge
	// systemFile is the file toolbelt run --system @FILE reads (absolute):
	// protected from the tools, as the agents' system prompts are.
	systemFile string

	parser *kong.Kong // the grammar, for help and completion

	// interrupt and terminate are cancelled by Ctrl-C (or SIGTERM) and by
	// SIGTERM while a command runs in them (interruptible).
	interrupt, terminate context.Context

	configPath, dataDir string         // the global flags
	cfg                 *config.Config // loaded once per run, when a command needs it
}

// config returns the run's configuration, loading it on first use.
func (e *env) config() (*config.Config, error) {
	if e.cfg == nil {
		cfg, err := config.Open(e.configPath)
		if err != nil {
			return nil, err
		}
		e.cfg = cfg
	}
	return e.cfg, nil
}

// cli is the command line grammar.
type cli struct {
	Verbose     bool             `short:"v" help:"Log debug messages to stderr."`
	Config      string           `help:"Configuration file (default: TOOLBELT_CONFIG, ./toolbelt.yaml, then the user's config directory)." placeholder:"FILE"`
	Data        string           `help:"Directory for state (default: TOOLBELT_DATA, the config's data, then the user's data directory)." placeholder:"DIR"`
	VersionFlag kong.VersionFlag `name:"version" short:"V" help:"Print the version and exit."`

	Serve serveCmd `cmd:"" group:"serve" help:"Serve the tools over MCP on streamable HTTP at /mcp — Toolbelt's main job."`
	MCP   mcpCmd   `cmd:"" group:"serve" name:"mcp" help:"Serve the tools over MCP on stdio (for a client that starts toolbelt itself)."`
	Node  nodeCmd  `cmd:"" group:"serve" help:"Run this machine as a node of a gateway (--gateway URL), under its own policy."`
	Nodes nodesCmd `cmd:"" group:"serve" help:"List the nodes paired with the gateways on this store, and approve or reject their pairing requests."`

	Run      runCmd      `cmd:"" group:"agent" help:"Run an agent: a model (--model PROVIDER/MODEL) answers the prompt, calling the tools through the pipeline."`
	Chat     chatCmd     `cmd:"" group:"agent" help:"Chat with a model that calls the tools: streamed answers, calls shown as they run, /model, /tools, /undo."`
	Agents   agentsCmd   `cmd:"" group:"agent" help:"List the agents configured under agents: in toolbelt.yaml."`
	Sessions sessionsCmd `cmd:"" group:"agent" help:"List the sessions agents keep in the store, or show one with its transcript."`
	Cron     cronCmd     `cmd:"" group:"agent" help:"List, add, remove and run the cron tool's schedules, and show their runs (toolbelt serve runs them when due)."`
	Jobs     jobsCmd     `cmd:"" group:"agent" help:"List, show, cancel or retry the background jobs of async tools."`

	List     listCmd     `cmd:"" group:"tools" help:"List tools by section with risk and availability."`
	Describe describeCmd `cmd:"" group:"tools" help:"Show a tool's metadata and parameter schema."`
	Call     callCmd     `cmd:"" group:"tools" help:"Run one call, or a batch, through the pipeline."`
	Undo     undoCmd     `cmd:"" group:"tools" help:"Take back the file changes of a call, if the files are still as it left them."`
	Schema   schemaCmd   `cmd:"" group:"tools" help:"Compile, validate, export and lint parameter schemas for model providers."`
	Tool     toolCmd     `cmd:"" group:"tools" help:"Make, check and try directory tools (a folder with metadata.json, schema.json and a handler)."`

	Policy    policyCmd    `cmd:"" group:"governance" help:"Explain the tool policy."`
	Audit     auditCmd     `cmd:"" group:"governance" help:"List the audit log of calls, or verify its hash chain."`
	Approvals approvalsCmd `cmd:"" group:"governance" help:"List or revoke the actions a person allowed always in a workspace."`

	Init       initCmd       `cmd:"" group:"setup" help:"Write an annotated toolbelt.yaml (and a .mcp.json with --mcp-json)."`
	Config_    configCmd     `cmd:"" group:"setup" name:"config" help:"Show or check the configuration."`
	Completion completionCmd `cmd:"" group:"setup" help:"Print a shell completion script (bash, zsh or fish)."`
	Help       helpCmd       `cmd:"" group:"setup" help:"Show the commands, or one command's usage."`
	Version    versionCmd    `cmd:"" group:"setup" help:"Print the version."`
}

// groups are the headings of the command overview, in order.
var groups = []kong.Group{
	{Key: "serve", Title: "Serve tools to agents:"},
	{Key: "agent", Title: "Run an agent:"},
	{Key: "tools", Title: "Use tools from the shell:"},
	{Key: "governance", Title: "Governance:"},
	{Key: "setup", Title: "Setup:"},
}

// Exit codes.
const (
	exitOK        = 0
	exitToolError = 1
	exitUsage     = 2
	// exitInterrupted ends a command stopped by Ctrl-C (SIGINT): 128 and
	// the signal's number, as shells report it. SIGTERM, how services are
	// stopped, is a clean stop (exit 0).
	exitInterrupted = 130
)

// interruptible returns the context of a command that stops cleanly on
// Ctrl-C or SIGTERM, and what stops watching for them; after Ctrl-C the
// run ends with exitInterrupted (interrupted).
func (e *env) interruptible() (context.Context, context.CancelFunc) {
	term, stopTerm := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	ctx, stopInt := signal.NotifyContext(term, os.Interrupt)
	e.interrupt, e.terminate = ctx, term
	return ctx, func() { stopInt(); stopTerm() }
}

// interrupted says whether Ctrl-C stopped the command: a context stopped
// by its signal has that as its cause (its child, the parent's), one
// merely stopped has context.Canceled.
func (e *env) interrupted() bool {
	caught := func(ctx context.Context) bool {
		return ctx != nil && context.Cause(ctx) != nil && context.Cause(ctx) != context.Canceled
	}
	return caught(e.interrupt) && !caught(e.terminate)
}

// flagValue returns the flag name (workspace, mode) of the selected
// command, or "" when it has none.
func flagValue(kctx *kong.Context, name string) string {
	if n := kctx.Selected(); n != nil {
		for _, f := range n.Flags {
			if f.Name == name {
				s, _ := kctx.FlagValue(f).(string)
				return s
			}
		}
	}
	return ""
}

// exitCode ends a command with a code after it has printed what it had to.
// Any other error a command returns is a usage or configuration error.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// kongExit carries kong's exit request (after --help) out of the parser.
type kongExit int

func run(args []string, e env) (code int) {
	var c cli
	defer func() {
		if p := recover(); p != nil {
			k, ok := p.(kongExit)
			if !ok {
				panic(p)
			}
			code = int(k)
		}
	}()
	root, syncGlobals := grammarOf(args, &c)
	parser, err := kong.New(root,
		kong.Name("toolbelt"),
		kong.Description("Toolbelt runs the tools AI agents call, through one governed pipeline."),
		kong.Writers(e.stdout, e.stderr),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.Help(printHelp),
		kong.ExplicitGroups(groups),
		kong.Vars{"version": "toolbelt " + buildVersion()},
	)
	if err != nil {
		printError(e.stderr, err)
		return exitUsage
	}
	if code, done := preParse(parser, args, e); done {
		return code
	}
	args = helpArgs(args)
	kctx, err := parser.Parse(args)
	if path, word, near := mistypedCommand(parser.Model.Node, args); err != nil && len(near) > 0 {
		fmt.Fprintf(e.stderr, "toolbelt %s: unknown command %q; did you mean %s?\nRun 'toolbelt %s --help' for its commands.\n",
			path, word, quoteJoin(near, " or "), path)
		return exitUsage
	}
	if err != nil {
		printError(e.stderr, err)
		var perr *kong.ParseError
		if errors.As(err, &perr) && perr.Context != nil && perr.Context.Selected() != nil {
			fmt.Fprintf(e.stderr, "Run 'toolbelt %s --help' for its usage.\n", perr.Context.Selected().Path())
		} else {
			fmt.Fprintln(e.stderr, "Run 'toolbelt help' for the commands.")
		}
		return exitUsage
	}
	syncGlobals()
	e.parser = parser
	level := slog.LevelWarn
	if c.Verbose {
		level = slog.LevelDebug
	}
	e.log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	e.configPath, e.dataDir = c.Config, c.Data
	e.workspace, e.mode = flagValue(kctx, "workspace"), flagValue(kctx, "mode")
	err = kctx.Run(&e)
	e.closeRoot()
	if r := (restartServer{}); errors.As(err, &r) {
		// Everything the server held is closed: the new one starts afresh,
		// listening where this one did.
		fmt.Fprintln(e.stderr, "toolbelt: restarting")
		err = e.reexec(append(slices.Clone(args), "--addr", r.addr))
	}
	var ec exitCode
	switch {
	case e.interrupted():
		if err != nil && !errors.As(err, &ec) && !errors.Is(err, context.Canceled) {
			printError(e.stderr, err)
		}
		return exitInterrupted
	case err == nil:
		return exitOK
	case errors.As(err, &ec):
		return int(ec)
	default:
		printError(e.stderr, err)
		return exitUsage
	}
}
