package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// preview describes a call of exec without running it: the command line,
// the directory it would run in, the variables the call sets, the program
// it would start and the hash of the script files in the workspace it
// would run — what an approval is bound to — and its risk (see
// commandRisk; a call that sets variables or asks for a pseudo-terminal is
// high risk whatever its command). It fails as the call would on a refused
// variable, a timeout above the maximum or a working directory outside the
// workspace.
func preview(root string, cfg settings, sandboxed bool, in execInput) (tool.Effects, error) {
	p, err := prepare(root, cfg, in)
	if err != nil {
		return tool.Effects{}, err
	}
	e := tool.Effects{Summary: summary(in, p.workdir, sandboxed), Command: in.Command, Workdir: p.workdir, Risk: tool.RiskHigh}
	if env := callEnv(in); len(env) > 0 {
		e.Env = env
	}
	f, err := parseCommand(in.Command)
	if err != nil {
		return e, nil // bash will report the syntax error; nothing can be known
	}
	r := resolver{root: root, dir: p.workdir, path: filepath.SplitList(pathOf(commandEnv(os.Environ(), cfg.envAllow, callEnv(in))))}
	check := r
	// Variables change what read-only programs do (RIPGREP_CONFIG_PATH,
	// GIT_EXTERNAL_DIFF, PAGER…), and in a pseudo-terminal git starts a
	// pager that input sent later through the process tool can drive.
	if len(in.Env) == 0 && !in.Pty {
		e.Risk = commandRisk(f, &check)
	}
	l := r.launched(f)
	e.Executable, e.ScriptHash = l.executable, scriptHash(root, l.scripts)
	return e, nil
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

// summary says in one line what the call would do.
func summary(in execInput, workdir string, sandboxed bool) string {
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
	return s
}
