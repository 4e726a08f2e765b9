package retry

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    map[string]string
		want time.Duration
		ok   bool
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{nil, 0, false},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got, ok := After(h, now); got != c.want || ok != c.ok {
			t.Errorf("After(%v) = %v, %v; want %v, %v", c.h, got, ok, c.want, c.ok)
		}
	}
}

func TestBackoffIsJitteredAndBounded(t *testing.T) {
	distinct := map[time.Duration]bool{}
	for range 50 {
		d := Backoff(100*time.Millisecond, time.Second, 3) // 400ms: between 200 and 400
		if d < 200*time.Millisecond || d > 400*time.Millisecond {
			t.Fatalf("Backoff(3) = %v, want within [200ms, 400ms]", d)
		}
		distinct[d] = true
	}
	if len(distinct) < 2 {
		t.Errorf("Backoff is not jittered: %v", distinct)
	}
	if d := Backoff(100*time.Millisecond, time.Second, 30); d > time.Second {
		t.Errorf("Backoff(30) = %v, want at most Max", d)
	}
}
