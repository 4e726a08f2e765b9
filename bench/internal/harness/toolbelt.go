package harness

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Setup makes the temporary directory a benchmark works in, named after
// prefix, and returns it with the toolbelt binary to measure — bin when
// the benchmark was given one (its -toolbelt flag), else ./cmd/toolbelt
// built into the directory — and remove, which removes the directory.
func Setup(prefix, bin string) (dir, toolbelt string, remove func()) {
	dir, err := os.MkdirTemp("", prefix)
	Check(err)
	remove = func() { _ = os.RemoveAll(dir) }
	if bin == "" {
		bin = Build(dir, "toolbelt", "./cmd/toolbelt")
	}
	return dir, bin, remove
}

// Env is the environment of a toolbelt process with state of its own
// under dir: its data in dir/data and its user configuration directory
// dir/config (so that the user's own never counts), and its configuration
// file config unless that is "".
func Env(dir, config string) []string {
	env := append(os.Environ(), "TOOLBELT_DATA="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	if config != "" {
		env = append(env, "TOOLBELT_CONFIG="+config)
	}
	return env
}

// Call is one call of tool with the JSON arguments args in a new toolbelt
// process (`toolbelt call TOOL --json --args ARGS`, in the workspace ws
// unless that is ""), with the environment env.
func Call(bin string, env []string, tool, ws, args string) *exec.Cmd {
	cmd := exec.Command(bin, "call", tool, "--json", "--args", args)
	if ws != "" {
		cmd.Args = append(cmd.Args, "--workspace", ws)
	}
	cmd.Env = env
	return cmd
}
