package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// preview describes a call of exec without running it: the command line,
// the directory it would run in, the variables the call sets, every
// program it would start (or why that cannot be known), the program it
// starts first and the hash of the script files in the workspace it would
// run — what an approval is bound to — and its risk: low only when the
// command may run without approval (see lowRiskProblem). For a command
// that needs approval it also says what "allow always" covers, with the
// hash of the workspace's files when that binds it (see bindAlways). It
// fails as the call would on a refused variable, a timeout above the
// maximum or a working directory outside the workspace.
func (m *Manager) preview(ctx context.Context, root string, cfg settings, sandboxed bool, in execInput) (tool.Effects, error) {
	p, err := prepare(root, cfg, in)
	if err != nil {
		return tool.Effects{}, err
	}
	e := tool.Effects{Command: in.Command, Workdir: p.workdir, Risk: tool.RiskHigh}
	if env := callEnv(in); len(env) > 0 {
		e.Env = env
	}
	hostPath := filepath.SplitList(pathOf(commandEnv(os.Environ(), cfg.envAllow, callEnv(in))))
	a := analyzeCommand(in.Command, root, p.workdir, hostPath, cfg.conceal)
	e.Programs, e.Unsummarized = a.programs, a.unsummarized
	if e.RiskReason = m.lowRiskProblem(ctx, root, p.workdir, cfg, sandboxed, in, a); e.RiskReason == "" {
		// It will run with the system PATH: name the programs it finds.
		e.Risk, e.ReadOnly = tool.RiskLow, true
		if f, err := parseCommand(in.Command); err == nil {
			e.Programs, e.Unsummarized = listPrograms(f, &resolver{root: root, dir: p.workdir, path: filepath.SplitList(systemPath)})
		}
	}
	e.Summary = summary(in, p.workdir, sandboxed, e)
	if f, err := parseCommand(in.Command); err == nil {
		r := resolver{root: root, dir: p.workdir, path: hostPath}
		l := r.launched(f)
		e.Executable, e.ScriptHash = l.executable, scriptHash(root, l.scripts)
	}
	if e.Risk != tool.RiskLow {
		if err := m.bindAlways(ctx, &e, root, p.workdir, hostPath, cfg.conceal, in); err != nil {
			return tool.Effects{}, err
		}
	}
	return e, nil
}

// lowRiskProblem says why a call of exec may not run without a person's
// approval, or "" when it may: its command passes the allowlist and path
// checks (see analyzeCommand), it sets no variables and asks for no
// pseudo-terminal (variables change what programs do; git in a terminal
// starts a pager that later input could drive), it would not run on the
// host in a workspace that holds Toolbelt's data directory (see
// exposedData), and, when it runs git, the repository git would find
// configures nothing that runs a program.
func (m *Manager) lowRiskProblem(ctx context.Context, root, workdir string, cfg settings, sandboxed bool, in execInput, a analysis) string {
	switch {
	case !a.low:
		return a.notLow
	case len(in.Env) > 0:
		return "it sets environment variables"
	case in.Pty:
		return "it asks for a pseudo-terminal"
	}
	if problem := m.exposedData(ctx, root, cfg, sandboxed); problem != "" {
		return problem
	}
	if len(a.gitDirs) > 0 {
		gitPath, err := lookSystem("git")
		if err != nil {
			return "git is not installed in a system directory"
		}
		for _, dir := range a.gitDirs {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				continue // git will fail to enter it
			}
			if problem := gitConfigProblem(ctx, gitPath, dir, root); problem != "" {
				return problem
			}
		}
	}
	return ""
}

// lookSystem finds a program on systemPath.
func lookSystem(name string) (string, error) {
	for _, dir := range filepath.SplitList(systemPath) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// pathOf returns the PATH of an environment ("NAME=value" entries).
func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// summary says in one line what the call would do, naming every program
// it would start.
func summary(in execInput, workdir string, sandboxed bool, e tool.Effects) string {
	const most = 120
	cmd := strings.Join(strings.Fields(in.Command), " ")
	if r := []rune(cmd); len(r) > most {
		cmd = string(r[:most]) + "…"
	}
	s := fmt.Sprintf("run `%s` in %s", cmd, workdir)
	if sandboxed {
		s += " in the sandbox"
	}
	if in.Background {
		s += ", in the background"
	}
	if list := e.ProgramList(); list != "" {
		s += "; programs: " + list
	}
	return s
}
