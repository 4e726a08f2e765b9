package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

func TestCachePutGetExpire(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := newClock()
		st.SetClock(clk.Now)
		c := st.Cache(store.CacheOptions{})
		if err := c.Put(ctx, "a", []byte("first"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "a", []byte("second"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "b", []byte("long"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "none", []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			key, want string
			ok        bool
		}{{"a", "second", true}, {"b", "long", true}, {"none", "", false}, {"missing", "", false}} {
			got, ok, err := c.Get(ctx, tc.key)
			if err != nil || ok != tc.ok || string(got) != tc.want {
				t.Errorf("Get(%s) = %q, %v, %v; want %q, %v", tc.key, got, ok, err, tc.want, tc.ok)
			}
		}
		clk.Advance(2 * time.Minute)
		if _, ok, _ := c.Get(ctx, "a"); ok {
			t.Error("an expired value is still returned")
		}
		if _, ok, _ := c.Get(ctx, "b"); !ok {
			t.Error("a value within its TTL is gone")
		}
		// The next Put lets go of the expired row.
		if err := c.Put(ctx, "c", []byte("x"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if n := storetest.Count(t, st, "cache"); n != 2 {
			t.Errorf("%d rows after an expired one should have gone; want 2", n)
		}
	})
}

func TestCacheSizeBound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := st.Cache(store.CacheOptions{MaxBytes: 250})
		for _, k := range []string{"k1", "k2", "k3"} {
			if err := c.Put(ctx, k, []byte(strings.Repeat("x", 100)), time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok, _ := c.Get(ctx, "k1"); ok {
			t.Error("the oldest value survived past the size bound")
		}
		for _, k := range []string{"k2", "k3"} {
			if _, ok, _ := c.Get(ctx, k); !ok {
				t.Errorf("%s is gone although it fits the bound", k)
			}
		}
		if err := c.Put(ctx, "huge", make([]byte, 300), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := c.Get(ctx, "huge"); ok {
			t.Error("a value larger than the whole bound was kept")
		}
	})
}
