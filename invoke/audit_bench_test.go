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

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// BenchmarkAuditedCall runs no-op calls through the complete pipeline,
// audited on a real SQLite file, and reports the latency of a call as its
// caller sees it: p50 and p99 in µs. A call returns once its record is
// durable: "spool" writes it to the process's append-only spool file (the
// CLI's choice for SQLite), "commit" commits it to the database. sync=none
// is the default (the record reaches the operating system); sync=always
// fsyncs (the spool file, and every database commit). "sequential" is one
// caller; "concurrent8" eight callers at once, whose records share writes.
func BenchmarkAuditedCall(b *testing.B) {
	for _, path := range []string{"spool", "commit"} {
		for _, sync := range []string{"none", "always"} {
			for _, callers := range []int{1, 8} {
				name := "sequential"
				if callers > 1 {
					name = fmt.Sprintf("concurrent%d", callers)
				}
				b.Run(path+"/sync="+sync+"/"+name, func(b *testing.B) {
					benchAuditedCall(b, path, sync == "always", callers)
				})
			}
		}
	}
}

func benchAuditedCall(b *testing.B, path string, syncAlways bool, callers int) {
	b.SetParallelism(max(callers/runtime.GOMAXPROCS(0), 1))
	var opts []store.Option
	if syncAlways {
		opts = append(opts, store.SyncCommits())
	}
	dir := b.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.DefaultFile), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	l := auditlog.New(st)
	var auditor interface {
		invoke.Auditor
		lifecycle.Service
	}
	switch path {
	case "spool":
		sp, err := l.Spool(filepath.Join(dir, "spool"), auditlog.SpoolOptions{Sync: syncAlways, OnError: func(err error) { b.Error(err) }})
		if err != nil {
			b.Fatal(err)
		}
		auditor = sp
	default:
		auditor = l.Writer(auditlog.WriterOptions{OnError: func(err error) { b.Error(err) }})
	}
	ctx := context.Background()
	if err := auditor.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer auditor.Stop(ctx)
	reg := registry.New()
	if err := reg.Register(noopTool("noop")); err != nil {
		b.Fatal(err)
	}
	r := invoke.New(reg, nil, invoke.WithAudit(auditor))
	var (
		mu    sync.Mutex
		times []time.Duration
	)
	call := func() time.Duration {
		start := time.Now()
		if msg := r.Run(ctx, tool.Call{Name: "noop", Arguments: fiveArgs}); msg.IsError {
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
		b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
		b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds())/1e3, "p99-µs")
	}
}
