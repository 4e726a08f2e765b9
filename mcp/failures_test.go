package mcp

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
)

// levels records the level of each record logged.
type levels []slog.Level

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	*l = append(*l, r.Level)
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

// TestFailuresOfServersNotReadyForgotten: a run of failures of a server
// that stops being ready (it stopped, or left the configuration) is
// forgotten, so that its next failure, once it is ready again, is warned
// about rather than logged at debug; another server's run, and another
// kind of try of the same server, are kept.
func TestFailuresOfServersNotReadyForgotten(t *testing.T) {
	var got levels
	log := slog.New(&got)
	var f failures
	down := errors.New("down")
	f.note(log, listing, "docs", down)
	f.note(log, listing, "wiki", down)
	f.note(log, renewing, "docs", down)
	f.keepReady(listing, []string{"wiki"})
	f.note(log, listing, "docs", down)
	f.note(log, listing, "wiki", down)
	f.note(log, renewing, "docs", down)
	want := levels{slog.LevelWarn, slog.LevelWarn, slog.LevelWarn, slog.LevelWarn, slog.LevelDebug, slog.LevelDebug}
	if !slices.Equal(got, want) {
		t.Errorf("levels %v, want %v", got, want)
	}
}
