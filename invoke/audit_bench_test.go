package invoke_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// BenchmarkAuditedCall runs no-op calls through the complete pipeline with
// the audit writer on a real SQLite file, and reports the latency of a call
// as its caller sees it: p50 and p99 in µs. A call returns once its record
// is committed. "sequential" is one caller; "concurrent8" eight callers at
// once (their records share commits). sync=none is the default (the record
// reaches the operating system); sync=always fsyncs every commit.
func BenchmarkAuditedCall(b *testing.B) {
	for _, bc := range []struct {
		sync    string
		callers int
	}{{"none", 1}, {"none", 8}, {"always", 1}, {"always", 8}} {
		callers := bc.callers
		name := "sequential"
		if callers > 1 {
			name = fmt.Sprintf("concurrent%d", callers)
		}
		var opts []store.Option
		if bc.sync == "always" {
			opts = append(opts, store.SyncCommits())
		}
		b.Run("sync="+bc.sync+"/"+name, func(b *testing.B) {
			b.SetParallelism(max(callers/runtime.GOMAXPROCS(0), 1))
			st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), store.DefaultFile), opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			w := audit.New(st).Writer(func(err error) { b.Error(err) })
			defer w.Close()
			reg := registry.New()
			if err := reg.Register(noopTool("noop")); err != nil {
				b.Fatal(err)
			}
			r := invoke.New(reg, nil, invoke.WithAudit(w))
			ctx := context.Background()
			var (
				mu    sync.Mutex
				times []time.Duration
				n     int
			)
			call := func() time.Duration {
				mu.Lock()
				n++
				id := fmt.Sprintf("call_%d", n)
				mu.Unlock()
				start := time.Now()
				if msg := r.Run(ctx, tool.Call{ID: id, Name: "noop", Arguments: fiveArgs}); msg.IsError {
					b.Error(msg.Content[0].Text)
				}
				return time.Since(start)
			}
			b.ResetTimer()
			if callers == 1 {
				for b.Loop() {
					times = append(times, call())
				}
			} else {
				b.RunParallel(func(pb *testing.PB) {
					var mine []time.Duration
					for pb.Next() {
						mine = append(mine, call())
					}
					mu.Lock()
					times = append(times, mine...)
					mu.Unlock()
				})
			}
			b.StopTimer()
			slices.Sort(times)
			if len(times) > 0 {
				b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
			}
		})
	}
}
