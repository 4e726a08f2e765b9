package toolbelt

import (
	"context"
	"time"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tools/gateway"
)

// openChannels makes the adapters of the configured channels that have a
// type, for the message tool; none connects until ServeChannels.
func (tb *Toolbelt) openChannels(context.Context) error {
	hub, err := channels.NewHub(tb.cfg.Channels, channels.Options{State: storeState{tb}})
	if err != nil || len(hub.Names()) == 0 {
		return err
	}
	tb.channels = hub
	return nil
}

// Channels returns the configured channels; nil when none has a type.
func (tb *Toolbelt) Channels() *channels.Hub { return tb.channels }

// ServeChannels connects the configured channels and hands their messages
// to answer by the configuration's routes, auditing those ignored, until
// the returned stop is called (or Close). It does nothing and returns a
// stop that does nothing when no channel has a type.
func (tb *Toolbelt) ServeChannels(ctx context.Context, answer channels.Answerer) (stop func(context.Context) error, err error) {
	if tb.channels == nil {
		return func(context.Context) error { return nil }, nil
	}
	if tb.auditor == nil {
		return nil, ErrToolsOnly
	}
	r := channels.NewRouter(tb.channels, tb.cfg.Routes, answer, tb.auditor, tb.log)
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	tb.onClose(r.Stop)
	return r.Stop, nil
}

// storeState keeps what the channels remember — the deliveries they took,
// email threads — in the store's channel state, so that a retry after a
// restart (or at another gateway sharing a PostgreSQL store) is not taken
// twice and replies stay in their threads. The channels open before the
// store, which this reaches once it is open (a ToolsOnly root opens it
// on first use).
type storeState struct{ tb *Toolbelt }

func (s storeState) state() (*store.ChannelState, error) {
	st := s.tb.st
	if st == nil {
		if s.tb.lazyStore == nil {
			return nil, ErrToolsOnly
		}
		var err error
		if st, err = s.tb.lazyStore(); err != nil {
			return nil, err
		}
	}
	return st.ChannelState(), nil
}

func (s storeState) Claim(ctx context.Context, channel, key string, ttl time.Duration) (bool, error) {
	cs, err := s.state()
	if err != nil {
		return false, err
	}
	return cs.Claim(ctx, channel, key, ttl)
}

func (s storeState) Get(ctx context.Context, channel, key string) ([]byte, bool, error) {
	cs, err := s.state()
	if err != nil {
		return nil, false, err
	}
	return cs.Get(ctx, channel, key)
}

func (s storeState) Put(ctx context.Context, channel, key string, value []byte, ttl time.Duration) error {
	cs, err := s.state()
	if err != nil {
		return err
	}
	return cs.Put(ctx, channel, key, value, ttl)
}

// SetGateway makes g the server the gateway tool manages, for the tool
// contexts of its workspaces; toolbelt serve calls it before it serves.
func (tb *Toolbelt) SetGateway(g gateway.Gateway) {
	tb.wsMu.Lock()
	defer tb.wsMu.Unlock()
	tb.gateway = g
	for _, tc := range tb.workspaces {
		gateway.Service.Set(tc, g)
	}
	if tb.base != nil {
		gateway.Service.Set(tb.base, g)
	}
}
