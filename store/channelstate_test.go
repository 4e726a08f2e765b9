package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// Two processes' stores on one database claiming the same deliveries at
// once: each key is taken by exactly one claim, whichever store made it;
// a claim past its time lets the key be claimed again; another channel's
// key of the same name is another delivery.
func TestChannelStateClaimOncePerKey(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a, b := storetest.Open(t, dsn), storetest.Open(t, dsn)
		const keys, claimers = 5, 8
		var mu sync.Mutex
		won := map[string]int{}
		var wg sync.WaitGroup
		for i := range claimers {
			st := []*store.Store{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range keys {
					key := fmt.Sprintf("webhook-id:msg_%d", k)
					first, err := st.ChannelState().Claim(ctx, "team", key, time.Hour)
					if err != nil {
						t.Errorf("claiming %s: %v", key, err)
						return
					}
					if first {
						mu.Lock()
						won[key]++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		for k := range keys {
			if key := fmt.Sprintf("webhook-id:msg_%d", k); won[key] != 1 {
				t.Errorf("%s was taken %d times, want once", key, won[key])
			}
		}
		if first, err := b.ChannelState().Claim(ctx, "ops", "webhook-id:msg_0", time.Hour); err != nil || !first {
			t.Errorf("another channel's msg_0: %v, %v; want first", first, err)
		}

		clk := newClock()
		a.SetClock(clk.Now)
		long := strings.Repeat("x", 5000)
		for _, want := range []bool{true, false} {
			if first, err := a.ChannelState().Claim(ctx, "team", long, time.Minute); err != nil || first != want {
				t.Errorf("claiming a 5000-byte key: %v, %v; want %v", first, err, want)
			}
		}
		clk.Advance(2 * time.Minute)
		if first, err := a.ChannelState().Claim(ctx, "team", long, time.Minute); err != nil || !first {
			t.Errorf("claiming a key past its time: %v, %v; want first again", first, err)
		}
	})
}

// A value kept under a channel's key is read back by another process on
// the store (a restart), until it expires; a later Put replaces it.
func TestChannelStatePutGet(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := newClock()
		a := storetest.Open(t, dsn)
		a.SetClock(clk.Now)
		if err := a.ChannelState().Put(ctx, "mail", "thread:<q1@example.com>", []byte("one"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := a.ChannelState().Put(ctx, "mail", "thread:<q1@example.com>", []byte("two"), time.Hour); err != nil {
			t.Fatal(err)
		}
		b := storetest.Open(t, dsn)
		b.SetClock(clk.Now)
		for _, c := range []struct {
			channel, key, want string
			ok                 bool
		}{{"mail", "thread:<q1@example.com>", "two", true}, {"other", "thread:<q1@example.com>", "", false}, {"mail", "thread:<q9@example.com>", "", false}} {
			got, ok, err := b.ChannelState().Get(ctx, c.channel, c.key)
			if err != nil || ok != c.ok || string(got) != c.want {
				t.Errorf("Get(%s, %s) = %q, %v, %v; want %q, %v", c.channel, c.key, got, ok, err, c.want, c.ok)
			}
		}
		clk.Advance(2 * time.Hour)
		if _, ok, err := b.ChannelState().Get(ctx, "mail", "thread:<q1@example.com>"); ok || err != nil {
			t.Errorf("a value past its time: %v, %v; want none", ok, err)
		}
	})
}
