package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// procStat is what TreeCPU and Tree read of one process's /proc stat.
type procStat struct {
	state byte // R, S, Z…
	ppid  int
	cpu   time.Duration // its own CPU time and that of the children it has waited for
}

// readStat reads /proc/PID/stat; ok is false when the process has gone.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 15 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	state := f[0][0]
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return procStat{state: state, ppid: ppid, cpu: time.Duration(ticks) * time.Second / 100}, true // USER_HZ
}

// processes reads the stat of every process on the machine.
func processes() map[int]procStat {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	all := make(map[int]procStat, len(dirs))
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if s, ok := readStat(pid); ok {
			all[pid] = s
		}
	}
	return all
}

// Alive says whether process pid is running (a zombie, exited and not yet
// reaped, is not).
func Alive(pid int) bool {
	s, ok := readStat(pid)
	return ok && s.state != 'Z'
}

// Tree is the process pid and every live descendant of it (children of
// children included, found by their parent's id), pid first.
func Tree(pid int) []int {
	return tree(pid, processes())
}

func tree(pid int, all map[int]procStat) []int {
	children := map[int][]int{}
	for p, s := range all {
		children[s.ppid] = append(children[s.ppid], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// TreeCPU is the CPU time (user and system, in 10 ms ticks) used by the
// process pid and its descendants: each live one's own time plus the time
// of the children it has waited for, so that a child that has exited
// still counts once its parent has reaped it.
func TreeCPU(pid int) time.Duration {
	all := processes()
	var total time.Duration
	for _, p := range tree(pid, all) {
		total += all[p].cpu
	}
	return total
}

// TreePSS is the proportional set size of the process pid and its live
// descendants, in bytes, from /proc/PID/smaps_rollup: their memory, each
// shared page divided among the processes that map it, so that the sum
// counts a page once.
func TreePSS(pid int) int64 {
	var total int64
	for _, p := range Tree(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		if err != nil {
			continue
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb << 10
				break
			}
		}
	}
	return total
}
