package harness

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Machine names the machine a benchmark runs on: the CPU's model, the
// number of CPUs and the Go version.
func Machine() string {
	return fmt.Sprintf("%s, %d CPUs, %s", cpuModel(), runtime.NumCPU(), runtime.Version())
}

// LoadAverage is the system's load average over 1, 5 and 15 minutes.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

// Quantile is the p-quantile (0 ≤ p ≤ 1) of ds, by nearest rank rounded
// down; ds is not changed.
func Quantile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// Median is the median of xs (the upper one of an even count); xs is not
// changed.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
