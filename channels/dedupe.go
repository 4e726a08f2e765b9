package channels

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DeliveryWindow is how long a channel remembers a delivery it took (a
// webhook-id, a Slack message, a Discord message, a Telegram update, a
// mail's Message-ID): the same delivery again within the window — a
// retry, or the copy another gateway on the same store received — is not
// handed on again. Standard Webhooks senders retry for about a day.
const DeliveryWindow = 24 * time.Hour

// maxRemembered bounds the entries a hub without a store keeps in memory;
// past it the oldest are forgotten first.
const maxRemembered = 10000

// State is what channels remember beyond the process, by channel and key
// until it expires: the deliveries they took, claimed so that of several
// gateways sharing it exactly one takes each, and values such as an email
// thread's headers. The store's channel state (a *store.ChannelState) is
// one; without one a hub keeps it in memory.
type State interface {
	// Claim records key as taken for ttl and says whether this is the
	// first claim of it within that time, of every process sharing the
	// state.
	Claim(ctx context.Context, channel, key string, ttl time.Duration) (bool, error)
	// Get returns the value kept under key, and false when there is none.
	Get(ctx context.Context, channel, key string) ([]byte, bool, error)
	// Put keeps value under key for ttl, replacing what was there.
	Put(ctx context.Context, channel, key string, value []byte, ttl time.Duration) error
}

// firstDelivery claims the delivery key of channel, saying whether it is
// the first time within DeliveryWindow. For channels whose service cannot
// be asked to deliver again (Discord's Gateway, Telegram's getUpdates,
// IMAP), a state that cannot say is not trusted to refuse: the delivery is
// taken, and logged (delivering twice beats losing one).
func (o Options) firstDelivery(ctx context.Context, channel, key string) bool {
	first, err := o.State.Claim(ctx, channel, key, DeliveryWindow)
	if err != nil {
		slog.Warn("channels: recording a delivery failed; taking it", "channel", channel, "delivery", key, "err", err)
		return true
	}
	return first
}

// memoryState is State within one process: at most maxRemembered
// entries, the oldest forgotten first.
type memoryState struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[[2]string]memoryEntry
	order   [][2]string // keys of entries, oldest first
}

type memoryEntry struct {
	value   []byte
	expires time.Time
}

func newMemoryState() *memoryState {
	return &memoryState{now: time.Now, entries: map[[2]string]memoryEntry{}}
}

// Claim records key as taken for ttl; s.mu makes one claim first.
func (s *memoryState) Claim(_ context.Context, channel, key string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.get(channel, key); ok {
		return false, nil
	}
	s.put(channel, key, nil, ttl)
	return true, nil
}

// Get returns the value under key, when it has not expired.
func (s *memoryState) Get(_ context.Context, channel, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.get(channel, key)
	return v, ok, nil
}

// Put keeps value under key for ttl.
func (s *memoryState) Put(_ context.Context, channel, key string, value []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(channel, key, value, ttl)
	return nil
}

// get reads an entry; s.mu is held.
func (s *memoryState) get(channel, key string) ([]byte, bool) {
	e, ok := s.entries[[2]string{channel, key}]
	if !ok || s.now().After(e.expires) {
		return nil, false
	}
	return e.value, true
}

// put writes an entry, forgetting the oldest past maxRemembered; s.mu is
// held.
func (s *memoryState) put(channel, key string, value []byte, ttl time.Duration) {
	k := [2]string{channel, key}
	if _, ok := s.entries[k]; !ok {
		s.order = append(s.order, k)
	}
	s.entries[k] = memoryEntry{value: value, expires: s.now().Add(ttl)}
	for len(s.order) > maxRemembered {
		delete(s.entries, s.order[0])
		s.order = s.order[1:]
	}
}
