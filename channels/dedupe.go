package channels

import (
	"context"
	"sync"
	"time"
)

// DeliveryWindow is how long a webhook channel remembers the webhook-id of
// a delivery it took: a retry of it (same webhook-id) within the window is
// acknowledged and not delivered again. Standard Webhooks senders retry
// for about a day.
const DeliveryWindow = 24 * time.Hour

// maxRemembered bounds the webhook-ids a channel keeps in memory; past it
// the oldest are forgotten first.
const maxRemembered = 10000

// Deliveries keeps what a webhook channel remembers of the deliveries it
// took beyond the process, so that a retry after a restart (or one that
// reaches another gateway sharing the store) is not taken twice; the
// store's cache (a *store.Cache) is one.
type Deliveries interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// seenIDs remembers webhook-ids for DeliveryWindow: in memory (at most
// maxRemembered) and, when set, in a Deliveries.
type seenIDs struct {
	mu    sync.Mutex
	at    map[string]time.Time
	order []string
}

// first records id as taken at now and says whether it is the first time
// within the window; kept, when not nil, remembers it beyond the process.
// A kept that cannot be read or written is not trusted to refuse: the
// delivery is taken (delivering twice beats losing one).
func (s *seenIDs) first(ctx context.Context, kept Deliveries, id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	for len(s.order) > 0 && (len(s.order) >= maxRemembered || now.Sub(s.at[s.order[0]]) > DeliveryWindow) {
		delete(s.at, s.order[0])
		s.order = s.order[1:]
	}
	if t, ok := s.at[id]; ok && now.Sub(t) <= DeliveryWindow {
		return false
	}
	if kept != nil {
		if _, ok, err := kept.Get(ctx, id); err == nil && ok {
			return false
		}
	}
	s.at[id] = now
	s.order = append(s.order, id)
	if kept != nil {
		kept.Put(ctx, id, []byte(now.UTC().Format(time.RFC3339)), DeliveryWindow)
	}
	return true
}
