package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// execInput is the exec tool's parameters.
type execInput struct {
	Command    string            `json:"command" minLength:"1" jsonschema:"The shell command to run, as bash -c would: pipes, redirections, && and quoting all work. Example: go test ./... 2>&1 | tail -50"`
	Workdir    string            `json:"workdir,omitempty" jsonschema:"Directory to run in, relative to the workspace root (default: the workspace root). It must be inside the workspace."`
	Env        map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables for the command. Variables that change which programs or start-up scripts run cannot be set: PATH, HOME, ZDOTDIR, BASH_ENV, ENV, LD_*, DYLD_* and a few more."`
	Timeout    *int              `json:"timeout,omitempty" minimum:"1" jsonschema:"Seconds the command may run before it is stopped, with every process it started."`
	YieldMs    *int              `json:"yieldMs,omitempty" minimum:"0" jsonschema:"Milliseconds to wait for the command to finish. If it is still running then, the call returns its output so far and the command keeps running in the background (follow it with the process tool)."`
	Background bool              `json:"background,omitempty" jsonschema:"Return at once and leave the command running in the background (servers, watchers, long builds). Follow it with the process tool. It is still stopped after its timeout."`
	Pty        bool              `json:"pty,omitempty" jsonschema:"Run the command in a pseudo-terminal, for programs that behave differently or refuse to run without one. Output then contains terminal control sequences."`
	Sandbox    bool              `json:"sandbox,omitempty" jsonschema:"Run the command in the sandbox: only the workspace is writable, no network, private /tmp, limited processes. Use it for untrusted code. Cannot be turned off when the configuration requires it."`
}

const execDescription = `Run a shell command in the workspace and return its output (stdout and stderr interleaved) and exit status.

- The command runs with bash -c in the workspace root, or in workdir (inside the workspace).
- Output is limited to %d characters; when longer, the beginning and the end are kept.
- A command that does not finish within yieldMs (default %d ms) keeps running in the background: the result says so and gives its sessionId; use the process tool to poll it, read its log, write to its input or kill it.
- background: true returns at once; use it for servers and watchers.
- timeout (default %d s, at most %d s) stops the command and every process it started, in the background too.
- A non-zero exit status is reported at the end of the output, e.g. "(Command exited with code 1)".
- Environment variables whose names contain KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL are not passed to commands.
- Plain read-only commands (ls, cat, head, grep, rg, find, wc, diff, git status/log/diff/show, … and pipes of them, with files inside the workspace) run without asking, read-only, without network and with no input; anything else may wait for a person's approval.%s`

// execFactory makes the exec tool for a tool context: it needs a workspace.
func (m *Manager) execFactory(tc *tool.Context) (*tool.Tool, error) {
	root, err := workspaceRoot(tc)
	if err != nil {
		return nil, err
	}
	cfg, err := loadSettings(tc.Config)
	if err != nil {
		return nil, err
	}
	cfg.conceal = ConcealedIn(tc, root)
	cfg.protect = protectionOf(tc)
	sandboxNote := ""
	if cfg.sandbox.Required || tc.Sandboxed {
		network := "there is no network"
		if len(cfg.network.Allow) > 0 {
			network = "the network is reached only through a proxy that lets through " + strings.Join(cfg.network.Allow, ", ") + " and asks the user about any other host"
		}
		sandboxNote = "\n- Every command runs in the sandbox: only the workspace is writable, " + network + ", /tmp is private and the number of processes is limited."
	}
	desc := fmt.Sprintf(execDescription, cfg.maxOutput, cfg.yield.Milliseconds(),
		int(cfg.defaultTimeout/time.Second), int(cfg.maxTimeout/time.Second), sandboxNote)
	sandboxed := func(in execInput, callTC *tool.Context) bool {
		return in.Sandbox || cfg.sandbox.Required || tc.Sandboxed || callTC != nil && callTC.Sandboxed
	}
	t, err := tool.New("exec", desc, func(ctx context.Context, in execInput, inv tool.Invocation) (tool.Result, error) {
		return m.exec(ctx, root, cfg, sandboxed(in, inv.Context), ownerOf(inv.Context), in)
	})
	if err != nil {
		return nil, err
	}
	t.Preview, err = tool.NewPreview("exec", func(ctx context.Context, in execInput, inv tool.Invocation) (tool.Effects, error) {
		return m.preview(ctx, root, cfg, sandboxed(in, inv.Context), in)
	})
	if err != nil {
		return nil, err
	}
	maxTimeout := float64(cfg.maxTimeout / time.Second)
	timeout := t.Parameters.Properties["timeout"]
	timeout.Maximum = &maxTimeout
	timeout.Description += fmt.Sprintf(" Default %d, at most %d.", int(cfg.defaultTimeout/time.Second), int(maxTimeout))
	t.Parameters.Properties["yieldMs"].Description += fmt.Sprintf(" Default %d.", cfg.yield.Milliseconds())
	t.Meta = execMeta
	return &t, nil
}

// exec runs one call of the exec tool.
//
// A call the pipeline ran without asking anyone (its preview said low
// risk) runs only if its command still may (see lowRiskProblem): checked
// again now, it runs as checked (see analysis.script), contained under
// bubblewrap when that works here, else on the host with the allowlisted
// environment, with /dev/null as input; if it no longer passes, it is not
// run. A call a person approved runs as asked — unless it was approved for
// the workspace's files as they were and one has changed since (see
// checkApproved); one made outside the pipeline runs as asked. A call with
// a time limit set by its caller, or whose caller cannot follow background
// work (tool.Foreground), is never left running in the background: its
// command is stopped at its limit.
func (m *Manager) exec(ctx context.Context, root string, cfg settings, sandboxed bool, owner string, in execInput) (tool.Result, error) {
	p, err := prepare(root, cfg, in)
	if err != nil {
		return tool.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("the call was cancelled before the command started: %w", err)
	}
	// A caller that cannot follow a command in the background (a one-shot
	// toolbelt call) waits for it, up to its time limit.
	foreground := tool.Foreground(ctx)
	if foreground && in.Background {
		return tool.Result{}, tool.InputErrorf("the command was not run: this caller cannot follow a command in the background (toolbelt call stops what is still running when it exits). Run it without \"background\": the call then waits for it, up to its timeout (%s by default), or start it from toolbelt mcp, serve, run or chat, where the process tool can follow it", roundDuration(cfg.defaultTimeout))
	}
	script := ""
	if tool.ApprovalOf(ctx) == tool.ApprovalUnasked {
		a := analyzeCommand(in.Command, root, p.workdir, nil, cfg.conceal)
		if problem := m.lowRiskProblem(ctx, root, p.workdir, cfg, sandboxed, in, a); problem != "" {
			return tool.Result{}, tool.InputErrorf("the command was not run: it was let through without approval, but it now needs a person's approval (%s). The workspace changed since it was checked; run it again to have it checked anew", problem)
		}
		script = a.script
	}
	sp, err := m.spawnSpec(ctx, root, p.workdir, cfg, sandboxed, script, in)
	if err != nil {
		return tool.Result{}, &tool.InputError{Message: err.Error()}
	}
	defer func() {
		if sp.release != nil { // not handed to a session
			sp.release()
		}
	}()
	sp.owner = owner
	sp.timeout = p.timeout
	// The caller's limit bounds the call, and the command with it: the
	// call's context ends at that limit, and the command's own timer (for
	// when it is in the background) is set to it too.
	limit, capped := tool.CallerLimit(ctx)
	if capped && limit < sp.timeout {
		sp.timeout, sp.capped = limit, true
	}
	sp.foreground = foreground
	if err := m.checkApproved(ctx, root, cfg.conceal); err != nil {
		return tool.Result{}, err
	}
	s, err := m.start(sp)
	if err != nil {
		return tool.Result{}, fmt.Errorf("the command could not be started: %w", err)
	}
	sp.release = nil // the session releases it when the command has exited
	defer s.reportHosts(ctx)
	if in.Background {
		return runningResult(s, "Command started in the background"), nil
	}
	var yieldC <-chan time.Time
	yield := cfg.yield
	if !capped && !foreground {
		if in.YieldMs != nil {
			yield = time.Duration(*in.YieldMs) * time.Millisecond
		}
		yield = withinDeadline(ctx, yield)
		t := time.NewTimer(yield)
		defer t.Stop()
		yieldC = t.C
	}
	select {
	case <-s.done:
	case <-yieldC:
		return runningResult(s, fmt.Sprintf("Command is still running after %s and continues in the background", roundDuration(yield))), nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.stop(stopTimeout)
		} else {
			s.stop(stopCancelled)
		}
		<-s.done
	}
	m.forget(s.id)
	res := tool.Text(withEnd(s.unread(), s.endLine(cfg.maxTimeout)))
	info := s.info()
	info.SessionID = "" // finished and forgotten: there is nothing to follow
	res.Details = info
	res.IsError = s.end.reason == stopTimeout || s.end.reason == stopCancelled || s.end.err != nil
	return res, nil
}

// ownerOf is who owns the commands a call starts: the session of the
// tool context (and its workspace). Only calls of the same owner see them
// through the process tool.
func ownerOf(tc *tool.Context) string {
	if tc == nil {
		return ""
	}
	return tc.FSRoot + "\x00" + tc.SessionKey
}

// spawnSpec works out how to start the command: the shell, the
// environment, and the sandbox — bubblewrap with the workspace writable
// when one is asked for; contained, or else on the host with only the
// allowlisted environment, for a command that runs without approval. Such
// a command runs script, its checked form (see analysis.script); script is
// "" for a command a person approved, which runs as it was written.
func (m *Manager) spawnSpec(ctx context.Context, root, workdir string, cfg settings, sandboxed bool, script string, in execInput) (spawnSpec, error) {
	low := script != ""
	shell := cfg.shell
	if shell == "" || low {
		shell = "/bin/sh"
		if p, err := lookSystem("bash"); err == nil {
			shell = p
		} else if p, err := exec.LookPath("bash"); err == nil && !low {
			shell = p
		}
	}
	argv := []string{shell, "-c", in.Command}
	if low {
		argv[2] = script
	}
	set := callEnv(in)
	sp := spawnSpec{
		command: in.Command, path: argv[0], args: argv, dir: workdir, workdir: workdir,
		pty: in.Pty, sandboxed: sandboxed, mode: modeHost,
		killGrace: cfg.killGrace, ttl: cfg.sessionTTL, maxOutput: cfg.maxOutput,
	}
	// Contained is the strictest way: an unasked command runs so whenever
	// bubblewrap works, also when the sandbox was asked for.
	if low {
		if b := m.container(ctx, cfg.sandbox.Bwrap, root); b != nil {
			plan := b.Contain(root, workdir, cfg.conceal, argv)
			sp.path, sp.args, sp.dir = plan.Path, append([]string{plan.Path}, plan.Args...), "/"
			sp.env, sp.nullStdin, sp.mode = lowEnv(root), true, modeContained
			for k, v := range plan.Env {
				sp.env = append(sp.env, k+"="+v)
			}
			return sp, nil
		}
		if !sandboxed {
			sp.env, sp.nullStdin, sp.mode = lowEnv(root), true, modeAllowlisted
			return sp, nil
		}
	}
	if sandboxed {
		spec := sandbox.Spec{Root: root, Workdir: workdir, ProcessLimit: cfg.sandbox.ProcessLimit, Conceal: cfg.conceal, Protect: cfg.protect}
		b, err := m.bwrap(ctx, cfg.sandbox.Bwrap, spec)
		if err != nil {
			return spawnSpec{}, err
		}
		// A command a person let run gets the network the configuration
		// allows, through its own proxy; an unasked one never does.
		var na *netAccess
		if len(cfg.network.Allow) > 0 && !low {
			if na, err = m.startNetwork(ctx, cfg.network, in.Command); err != nil {
				return spawnSpec{}, err
			}
			spec.Network = na.network()
		}
		plan, err := b.Wrap(spec, argv)
		if err == nil && na != nil {
			err = na.grant(plan.Credential)
		}
		if err != nil {
			plan.Release()
			if na != nil {
				na.close()
			}
			return spawnSpec{}, err
		}
		sp.path, sp.args, sp.cred, sp.dir = plan.Path, append([]string{plan.Path}, plan.Args...), plan.Credential, "/"
		sp.release, sp.net = plan.Release, na
		if na != nil {
			sp.release = func() { plan.Release(); na.close() }
		}
		for k, v := range plan.Env {
			set[k] = v
		}
		sp.mode = modeSandbox
		if low {
			sp.env, sp.nullStdin = lowEnv(root), true
			for _, k := range sortedKeys(plan.Env) {
				sp.env = append(sp.env, k+"="+plan.Env[k])
			}
			return sp, nil
		}
	}
	sp.env = commandEnv(os.Environ(), cfg.envAllow, set)
	return sp, nil
}

// exposedData says why a command may not run unasked here because
// Toolbelt's own data directory lies in the workspace: nothing but
// bubblewrap hides it from a command, and without it (no sandbox, and
// containment not working here) the command would run on the host, where
// only path checks would stand between it and the audit log and the undo
// journal. Such commands need approval instead: a wrong check cannot
// reach the data. It is "" when nothing is concealed or the command is
// hidden from it.
func (m *Manager) exposedData(ctx context.Context, root string, cfg settings, sandboxed bool) string {
	if len(cfg.conceal) == 0 || sandboxed || m.container(ctx, cfg.sandbox.Bwrap, root) != nil {
		return ""
	}
	return fmt.Sprintf("Toolbelt's own data directory %s is inside the workspace, and without bubblewrap (which does not work here) nothing hides it from a command run on the host", relTo(root, cfg.conceal[0]))
}

// How a command runs (the "mode" of its result's details).
const (
	modeContained   = "contained"   // without approval, under bubblewrap: read-only, no network
	modeAllowlisted = "allowlisted" // without approval, on the host: allowlist and path checks only
	modeSandbox     = "sandbox"     // in the sandbox a call or the configuration asked for
	modeHost        = "host"        // on the host, as approved
)

// lowEnv is the whole environment of a command that runs without
// approval: the system PATH, no home, the locale and terminal of the
// server, and git's hardening (see gitEnv). Nothing else of the server's
// environment (RIPGREP_CONFIG_PATH, GREP_OPTIONS, GIT_DIR, LD_PRELOAD…)
// reaches it.
func lowEnv(root string) []string {
	env := []string{"PATH=" + systemPath, "HOME=/nonexistent"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "LANG" || name == "TZ" || name == "TERM" || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	g := gitEnv(root)
	for _, k := range sortedKeys(g) {
		env = append(env, k+"="+g[k])
	}
	return env
}

// prepared is a call of exec checked, with what it runs with worked out.
type prepared struct {
	timeout time.Duration
	workdir string
}

// prepare checks a call of exec — the variables it sets, its timeout, its
// working directory — before anything runs.
func prepare(root string, cfg settings, in execInput) (prepared, error) {
	if err := checkEnv(in.Env); err != nil {
		return prepared{}, &tool.InputError{Message: err.Error()}
	}
	p := prepared{timeout: cfg.defaultTimeout}
	if in.Timeout != nil {
		p.timeout = time.Duration(*in.Timeout) * time.Second
		if p.timeout > cfg.maxTimeout {
			return prepared{}, tool.InputErrorf("timeout %d is above the maximum of %d seconds. Use at most %d, or run the command with \"background\": true and follow it with the process tool", *in.Timeout, int(cfg.maxTimeout/time.Second), int(cfg.maxTimeout/time.Second))
		}
	}
	var err error
	p.workdir, err = resolveWorkdir(root, in.Workdir)
	return p, err
}

// callEnv returns the variables a call sets for its command: its env, and
// TERM for a pseudo-terminal when neither sets one.
func callEnv(in execInput) map[string]string {
	set := make(map[string]string, len(in.Env)+1)
	for k, v := range in.Env {
		set[k] = v
	}
	if in.Pty && os.Getenv("TERM") == "" && set["TERM"] == "" {
		set["TERM"] = "xterm-256color"
	}
	return set
}

// runningResult is the result for a command left running: its output so
// far and how to follow it.
func runningResult(s *session, headline string) tool.Result {
	out := strings.TrimRight(s.unread(), "\n")
	id := s.id
	var text string
	if out != "" {
		text = out + "\n\n"
	}
	text += fmt.Sprintf("%s (session %s, pid %d). It will be stopped if still running after its timeout of %s.\n"+
		"Follow it with the process tool: "+
		`{"action":"poll","sessionId":%q,"timeout":30000} waits up to 30 s and returns new output and the exit status; `+
		`{"action":"log","sessionId":%q} shows its output; {"action":"write","sessionId":%q,"data":"..."} sends input; `+
		`{"action":"kill","sessionId":%q} stops it.`,
		headline, id, s.pid, roundDuration(s.timeout), id, id, id, id)
	return s.result(text)
}
