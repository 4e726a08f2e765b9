package toolbelt

import (
	"context"

	"github.com/toolbelt/toolbelt/channels"
)

// openChannels makes the adapters of the configured channels that have a
// type, for the message tool; none connects until ServeChannels.
func (tb *Toolbelt) openChannels(context.Context) error {
	hub, err := channels.NewHub(tb.cfg.Channels, channels.Options{})
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
