package harness

import (
	"bytes"
	"fmt"
	"log"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Timed runs cmd to its end and returns what it printed on stdout, its
// wall time, and its CPU time: user and system, the garbage collector's
// threads and the children it waited for included (the kernel's rusage of
// the process). A command that fails ends the benchmark, with its stderr,
// unless its exit code is one of okExit.
func Timed(cmd *exec.Cmd, okExit ...int) (out []byte, wall, cpu time.Duration) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	if err != nil && (cmd.ProcessState == nil || !slices.Contains(okExit, cmd.ProcessState.ExitCode())) {
		log.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes(), wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// Sample is one side's measurements, a wall time and a CPU time per run.
type Sample struct {
	Wall, CPU []time.Duration
}

// Add records one run.
func (s *Sample) Add(wall, cpu time.Duration) {
	s.Wall = append(s.Wall, wall)
	s.CPU = append(s.CPU, cpu)
}

// Medians are the medians of the wall and CPU times.
func (s *Sample) Medians() (wall, cpu time.Duration) {
	return Quantile(s.Wall, 0.5), Quantile(s.CPU, 0.5)
}

// Ratio is a÷b's median wall and CPU times, as "1.23× (CPU 1.10×)".
func Ratio(a, b *Sample) string {
	aw, ac := a.Medians()
	bw, bc := b.Medians()
	return fmt.Sprintf("%.2f× (CPU %.2f×)", float64(aw)/float64(bw), float64(ac)/float64(max(bc, time.Millisecond)))
}

// Ms formats d in milliseconds with one decimal.
func Ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
