package browser

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processesUsing returns the processes whose command line gives profile as
// the user data directory: Chromium passes it to every process it starts.
func processesUsing(profile string) []int {
	want := []byte("--user-data-dir=" + profile)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive reports whether the process pid runs: it exists and is not a
// zombie (dead, not yet reaped).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state != 'Z' && state != 'X'
}

// killUsing kills the processes using profile until a few looks in a row
// find none: a child can fork as its parent dies, and show up late.
func killUsing(profile string) {
	for quiet, looks := 0, 0; quiet < 3 && looks < 200; looks, _ = looks+1, sleep() {
		pids := processesUsing(profile)
		if len(pids) == 0 {
			quiet++
			continue
		}
		quiet = 0
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sleep pauses between two looks for processes.
func sleep() bool {
	time.Sleep(10 * time.Millisecond)
	return true
}
