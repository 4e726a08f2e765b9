package channels

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/toolbelt/toolbelt/config"
)

// Hub holds the channels of a configuration that have a type, by name.
type Hub struct {
	adapters map[string]Adapter
	settings map[string]config.Channel
}

// NewHub makes the adapters of cfg's typed channels (none connects before
// Start).
func NewHub(cfg map[string]config.Channel, o Options) (*Hub, error) {
	h := &Hub{adapters: map[string]Adapter{}, settings: map[string]config.Channel{}}
	if o.State == nil {
		o.State = newMemoryState()
	}
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		ch := cfg[name]
		if ch.Type == "" {
			continue
		}
		a, err := New(name, ch, o)
		if err != nil {
			return nil, err
		}
		h.Add(name, ch, a)
	}
	return h, nil
}

// Add adds a channel the configuration does not make (an embedder's own
// adapter), with its settings.
func (h *Hub) Add(name string, ch config.Channel, a Adapter) {
	h.adapters[name], h.settings[name] = a, ch
}

// Names returns the channels' names, sorted.
func (h *Hub) Names() []string { return slices.Sorted(maps.Keys(h.adapters)) }

// Adapter returns the adapter of the channel name.
func (h *Hub) Adapter(name string) (Adapter, bool) {
	a, ok := h.adapters[name]
	return a, ok
}

// Settings returns the configuration of the channel name.
func (h *Hub) Settings(name string) config.Channel { return h.settings[name] }

// Start connects every channel, handing what each receives to deliver;
// when one fails, those started are stopped again and the error names it.
func (h *Hub) Start(ctx context.Context, deliver func(Message)) error {
	var started []string
	for _, name := range h.Names() {
		if err := h.adapters[name].Start(ctx, deliver); err != nil {
			return errors.Join(fmt.Errorf("starting channel %s: %w", name, err), h.stop(ctx, started))
		}
		started = append(started, name)
	}
	return nil
}

// Stop disconnects every channel.
func (h *Hub) Stop(ctx context.Context) error { return h.stop(ctx, h.Names()) }

func (h *Hub) stop(ctx context.Context, names []string) error {
	var errs []error
	for _, name := range names {
		errs = append(errs, h.adapters[name].Stop(ctx))
	}
	return errors.Join(errs...)
}

// FirstContact says whether the message tool asks a person before sending
// to a recipient for the first time on channel name.
func (h *Hub) FirstContact(name string) bool { return h.settings[name].FirstContact }

// Handlers returns the HTTP handlers that take the channels' incoming
// messages, by path: each webhook channel's at its path (default
// /channels/NAME).
func (h *Hub) Handlers() map[string]http.Handler {
	out := map[string]http.Handler{}
	for name, a := range h.adapters {
		if hd, ok := a.(http.Handler); ok {
			out[cmp.Or(h.settings[name].Path, "/channels/"+name)] = hd
		}
	}
	return out
}
