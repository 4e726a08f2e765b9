//go:build unix

package schema

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far, user and system:
// on a shared machine it measures the work a benchmark did, where the
// wall clock also counts the time other processes held the CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
