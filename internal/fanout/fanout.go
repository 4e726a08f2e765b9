// Package fanout delivers values to any number of subscribers without ever
// blocking the publisher: each subscriber has a bounded buffer, and values
// that do not fit are counted as missed and reported to it with the next
// value it receives. The pipeline's events (invoke.Bus) and the live feed
// of calls (package feed) are published through it.
package fanout

import (
	"sync"
	"sync/atomic"
)

// Bus delivers values of type E. Its zero value has no subscribers.
type Bus[E any] struct {
	mu   sync.Mutex
	subs atomic.Pointer[[]*Sub[E]]
}

// Sub is a subscription to a Bus.
type Sub[E any] struct {
	bus    *Bus[E]
	ch     chan E
	mark   func(E, uint64) E
	missed atomic.Uint64 // total
	gap    atomic.Uint64 // since the last delivered value
	once   sync.Once
	mu     sync.Mutex // serializes sends with Close
	closed bool
}

// Subscribe returns a subscription whose channel buffers up to buffer
// values. mark, when set, is given each value with the number of values
// the subscriber lost since the one before, and returns what is sent.
func (b *Bus[E]) Subscribe(buffer int, mark func(e E, missed uint64) E) *Sub[E] {
	s := &Sub[E]{bus: b, ch: make(chan E, buffer), mark: mark}
	b.mu.Lock()
	defer b.mu.Unlock()
	var next []*Sub[E]
	if cur := b.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, s)
	b.subs.Store(&next)
	return s
}

// Active reports whether anyone is subscribed, so publishers can skip
// building values nobody receives.
func (b *Bus[E]) Active() bool {
	p := b.subs.Load()
	return p != nil && len(*p) > 0
}

// Publish delivers e to every subscriber without blocking.
func (b *Bus[E]) Publish(e E) {
	p := b.subs.Load()
	if p == nil {
		return
	}
	for _, s := range *p {
		s.deliver(e)
	}
}

func (s *Sub[E]) deliver(e E) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.mark != nil {
		e = s.mark(e, s.gap.Load())
	}
	select {
	case s.ch <- e:
		s.gap.Store(0)
	default:
		s.gap.Add(1)
		s.missed.Add(1)
	}
}

// Events returns the channel values arrive on. It is closed by Close.
func (s *Sub[E]) Events() <-chan E { return s.ch }

// Missed returns how many values this subscriber has lost in all.
func (s *Sub[E]) Missed() uint64 { return s.missed.Load() }

// Close stops delivery and closes the channel.
func (s *Sub[E]) Close() {
	s.once.Do(func() {
		b := s.bus
		b.mu.Lock()
		if cur := b.subs.Load(); cur != nil {
			var next []*Sub[E]
			for _, o := range *cur {
				if o != s {
					next = append(next, o)
				}
			}
			b.subs.Store(&next)
		}
		b.mu.Unlock()
		s.mu.Lock()
		s.closed = true
		close(s.ch)
		s.mu.Unlock()
	})
}
