package toolbelt

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/browser"
	canvastool "github.com/toolbelt/toolbelt/tools/canvas"
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

// snapshotCanvas takes a picture of session's canvas in that session's
// headless browser. The browser opens it from a listener of its own on
// loopback (canvasPreview), not from the front door's URL, which may ask
// to log in.
func (tb *Toolbelt) snapshotCanvas(ctx context.Context, session string, o canvastool.CaptureOptions) ([]byte, error) {
	base, err := tb.canvasPreview()
	if err != nil {
		return nil, err
	}
	return tb.browser.Capture(ctx, session, base+url.PathEscape(session)+"/", browser.CaptureOptions(o))
}

// canvasPreview serves the canvas host on a loopback port, under a path
// only this process knows, for the browser's snapshots; made on first use,
// closed by Close. It returns the base URL of the canvases.
func (tb *Toolbelt) canvasPreview() (string, error) {
	tb.previewOnce.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.previewErr = err
			return
		}
		prefix := "/" + randid.New("", 16) + "/canvas"
		srv := &http.Server{Handler: http.StripPrefix(prefix, tb.canvas.Handler()), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		tb.onClose(func(context.Context) error { return srv.Close() })
		tb.previewURL = "http://" + ln.Addr().String() + prefix + "/"
	})
	return tb.previewURL, tb.previewErr
}
