package store_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// clock is a settable time for retention tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestOutputsPutGet(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("line of output ✓\n", 1<<16) // 1.1 MB
	binary := "nul\x00 byte, invalid \xff UTF-8"
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		o := st.Outputs(store.OutputOptions{})
		for _, tc := range []struct{ id, text string }{
			{"call-big", big},
			{"call-binary", binary},
			{"call-empty", ""},
			{"call-replaced", "first"},
			{"call-replaced", "second"},
		} {
			if err := o.Put(ctx, tc.id, tc.text); err != nil {
				t.Fatalf("Put(%s): %v", tc.id, err)
			}
		}
		for _, tc := range []struct {
			id, want string
			ok       bool
		}{
			{"call-big", big, true},
			{"call-binary", binary, true},
			{"call-empty", "", true},
			{"call-replaced", "second", true},
			{"call-never", "", false},
		} {
			got, ok, err := o.Get(ctx, tc.id)
			if err != nil || ok != tc.ok || got.Text != tc.want || got.Origin != nil {
				t.Errorf("Get(%s) = %d bytes from %+v, %v, %v; want %d bytes of its own, %v", tc.id, len(got.Text), got.Origin, ok, err, len(tc.want), tc.ok)
			}
		}
		if n := storetest.Count(t, st, "outputs"); n != 4 {
			t.Errorf("%d rows, want 4 (a Put for the same call replaces)", n)
		}
	})
}

func TestOutputsRefuses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		o := st.Outputs(store.OutputOptions{MaxBytes: 10})
		for _, tc := range []struct{ id, text, want string }{
			{"", "x", "the call id is empty"},
			{"call-1", "eleven byte", "keeping the output of call call-1: 11 bytes is more than the store keeps (10 bytes)"},
		} {
			if err := o.Put(context.Background(), tc.id, tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Put(%q, %q) = %v, want %q", tc.id, tc.text, err, tc.want)
			}
		}
	})
}

func TestOutputsKeepNewestBytes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		o := st.Outputs(store.OutputOptions{MaxBytes: 100})
		text := strings.Repeat("x", 40)
		steps := []struct {
			put  string
			kept []string
			gone []string
		}{
			{"a", []string{"a"}, nil},
			{"b", []string{"a", "b"}, nil},
			{"c", []string{"b", "c"}, []string{"a"}},
			// Putting b again makes it the newest.
			{"b", []string{"b", "c"}, []string{"a"}},
			{"d", []string{"b", "d"}, []string{"a", "c"}},
		}
		for i, s := range steps {
			if err := o.Put(ctx, s.put, text); err != nil {
				t.Fatal(err)
			}
			for _, id := range s.kept {
				if _, ok, err := o.Get(ctx, id); err != nil || !ok {
					t.Errorf("step %d: %s not kept (%v)", i, id, err)
				}
			}
			for _, id := range s.gone {
				if _, ok, err := o.Get(ctx, id); err != nil || ok {
					t.Errorf("step %d: %s still kept (%v)", i, id, err)
				}
			}
		}
	})
}

func TestOutputsKeepDays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := newClock()
		st.SetClock(clk.Now)
		o := st.Outputs(store.OutputOptions{MaxAge: 24 * time.Hour})
		if err := o.Put(ctx, "old", "from yesterday"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(23 * time.Hour)
		if _, ok, _ := o.Get(ctx, "old"); !ok {
			t.Fatal("expired before its age")
		}
		clk.Advance(2 * time.Hour)
		// Expired outputs are not returned, even before they are removed.
		if _, ok, err := o.Get(ctx, "old"); ok || err != nil {
			t.Fatalf("expired output returned (%v)", err)
		}
		if n := storetest.Count(t, st, "outputs"); n != 1 {
			t.Fatalf("%d rows before the next Put, want 1", n)
		}
		if err := o.Put(ctx, "new", "today"); err != nil {
			t.Fatal(err)
		}
		if n := storetest.Count(t, st, "outputs"); n != 1 {
			t.Fatalf("%d rows after the next Put, want 1 (the expired one removed)", n)
		}
	})
}

// TestOutputsKeepTheirOrigin: an output kept from outside comes back so
// labelled, with its source; one kept without an origin comes back as a
// tool's own words.
func TestOutputsKeepTheirOrigin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		o := st.Outputs(store.OutputOptions{})
		outside := tool.WithOrigin(ctx, tool.Origin{External: true, Source: "web_fetch https://evil.example/"})
		if err := o.Put(outside, "call-web", "a page"); err != nil {
			t.Fatal(err)
		}
		if err := o.Put(ctx, "call-read", "a file"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			id     string
			origin *tool.Origin
		}{
			{"call-web", tool.FromOutside("web_fetch https://evil.example/")},
			{"call-read", nil},
		} {
			out, ok, err := o.Get(ctx, tc.id)
			if err != nil || !ok || !reflect.DeepEqual(out.Origin, tc.origin) {
				t.Errorf("Get(%s): origin %+v, %v, %v; want %+v", tc.id, out.Origin, ok, err, tc.origin)
			}
		}
	})
}
