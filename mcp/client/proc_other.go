//go:build !unix

package client

import (
	"os"
	"os/exec"
)

// terminate asks a process to exit; without process groups and SIGTERM it
// is a kill.
var terminate = os.Kill

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// signalGroup sends sig to the process itself.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
