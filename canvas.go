package toolbelt

import (
	"context"

	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/tool"
)

// openCanvas makes the root's canvas host, whose people's actions the
// feed publishes. It serves nothing until a front door mounts it and
// sets its URL (Canvas); until then the canvas tool is unavailable.
func (tb *Toolbelt) openCanvas(context.Context) error {
	tb.canvas = canvas.New("")
	stop := tb.canvas.Listen(func(a canvas.Action) {
		tb.feed.Publish(feed.Event{Kind: feed.UserAction, Tool: "canvas", Caller: tool.Identity{SessionKey: a.Session}, URL: a.URL, Text: a.Message()})
	})
	tb.onClose(func(context.Context) error {
		stop()
		return tb.canvas.Close()
	})
	return nil
}

// Canvas returns the canvas host of the root's sessions: a front door
// serves its Handler (toolbelt serve at /canvas/, run and chat on a
// loopback port) and sets its URL with SetBase before making runners, and
// listens for the actions people take on it (Listen). It is nil when the
// root opened no tools.
func (tb *Toolbelt) Canvas() *canvas.Host { return tb.canvas }
