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
	hub, err := channels.NewHub(tb.cfg.Channels, channels.Options{Deliveries: storeDeliveries{tb}})
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

// storeDeliveries keeps the webhook channels' delivery ids in the store's
// cache, so that a retry after a restart (or at another gateway sharing a
// PostgreSQL store) is not taken twice; the channels open before the
// store, which this reaches once it is open.
type storeDeliveries struct{ tb *Toolbelt }

func (d storeDeliveries) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if d.tb.st == nil {
		return nil, false, nil
	}
	return d.tb.st.Cache(store.CacheOptions{}).Get(ctx, key)
}

func (d storeDeliveries) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if d.tb.st == nil {
		return nil
	}
	return d.tb.st.Cache(store.CacheOptions{}).Put(ctx, key, value, ttl)
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
