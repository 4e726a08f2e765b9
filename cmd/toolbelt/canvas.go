package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
)

// serveCanvas serves the root's canvas for a run or a chat on a loopback
// port, under a path no one knows but who reads the printed URL, unless a
// server (toolbelt serve, running a scheduled agent) serves it already.
// The actions people take on it reach their sessions in h as follow-ups.
// h's Close stops both.
func (rh *runHost) serveCanvas() error {
	c := rh.e.tb.Canvas()
	if c == nil {
		return nil
	}
	if !c.Served() {
		srv, err := rh.e.serveLoopbackCanvas(c)
		if err != nil {
			return err
		}
		rh.closeWith(srv)
	}
	stop := c.Listen(rh.deliverAction)
	rh.closeWith(closerFunc(func() error { stop(); return nil }))
	return nil
}

// serveLoopbackCanvas serves the canvas c on a loopback port, under a path
// no one knows but who reads c's URL, and sets c's base to it; closing
// the server it returns stops it.
func (e *env) serveLoopbackCanvas(c *canvas.Host) (io.Closer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	prefix := "/" + randid.New("", 16) + "/canvas"
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, c.Handler()))
	srv := &http.Server{Handler: mux}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			e.log.Warn("serving the canvas", "err", err)
		}
	}()
	c.SetBase("http://" + ln.Addr().String() + prefix + "/")
	return srv, nil
}

// deliverAction hands a person's action on a canvas to its session, when
// it is one of rh's: a follow-up while it runs, a new run when it is idle.
// Another host's session (toolbelt serve runs several) is left to it.
func (rh *runHost) deliverAction(a canvas.Action) {
	err := rh.Deliver(context.Background(), a.Session, llm.UserText(a.Message()))
	if err != nil && !errors.Is(err, store.ErrNoSession) {
		rh.e.log.Warn("delivering a canvas action", "session", a.Session, "action", a.Name, "err", err)
	}
}

// closeWith has rh's Close close c.
func (rh *runHost) closeWith(c io.Closer) {
	rh.mu.Lock()
	defer rh.mu.Unlock()
	rh.closers = append(rh.closers, c)
}
