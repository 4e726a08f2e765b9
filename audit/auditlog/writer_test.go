package auditlog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

func TestWriterKeepsOrderAndChain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := auditlog.New(st)
		var errs []error
		var mu sync.Mutex
		w := l.Writer(auditlog.WriterOptions{OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		// Concurrent writers; each one's records keep their order.
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 150 {
					if err := w.Append(ctx, audit.Record{CallID: fmt.Sprintf("g%d-%03d", g, i), Tool: "read"}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if err := w.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		recs := list(t, l, auditlog.Filter{})
		if len(recs) != 600 {
			t.Fatalf("%d records after Close, want 600", len(recs))
		}
		last := map[byte]string{}
		for _, r := range recs {
			g := r.CallID[1]
			if r.CallID <= last[g] {
				t.Fatalf("%s after %s", r.CallID, last[g])
			}
			last[g] = r.CallID
		}
		if sum, err := l.Verify(ctx); err != nil || sum.Records != 600 {
			t.Errorf("verify: %+v %v", sum, err)
		}
		if err := w.Append(ctx, audit.Record{CallID: "late"}); err == nil {
			t.Error("append after Close accepted")
		}
		if err := w.Stop(ctx); err != nil {
			t.Error("second Close:", err)
		}
	})
}
