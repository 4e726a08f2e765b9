//go:build unix

package client

import (
	"os"
	"os/exec"
	"syscall"
)

// terminate asks a process to exit.
var terminate os.Signal = syscall.SIGTERM

// ownGroup makes the command start a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the command's process group.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig.(syscall.Signal))
	}
}
