// Package retry holds what an HTTP client needs to send a failed request
// again: how long the server asked to wait, and a jittered backoff.
package retry

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// After reads how long a response asks to wait before the request is sent
// again: Retry-After-Ms, or Retry-After in seconds or as an HTTP date.
func After(h http.Header, now time.Time) (time.Duration, bool) {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n >= 0 {
			return time.Duration(n * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// Backoff is the delay before attempt+1 (attempts count from 1): full
// jitter over base·2^(attempt-1), at most limit.
func Backoff(base, limit time.Duration, attempt int) time.Duration {
	d := base << (attempt - 1)
	if d <= 0 || d > limit {
		d = limit
	}
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}
