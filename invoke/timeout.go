package invoke

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// errTimedOut is the cancellation cause of a call that ran out of time.
var errTimedOut = errors.New("tool call timed out")

// timeoutFor returns the call's time limit: the per-call override (bounded
// by MaxTimeout), else the tool's own, else the default.
func (r *Runner) timeoutFor(req *Request) time.Duration {
	switch {
	case req.Timeout > 0:
		return min(req.Timeout, r.cfg.MaxTimeout)
	case req.Tool.Meta.Timeout > 0:
		return req.Tool.Meta.Timeout
	}
	return r.cfg.DefaultTimeout
}

// timeoutStep is the "timeout" step. The rest of the call runs with a
// context that is cancelled when the time limit passes or the caller
// cancels. The call then ends within CancelGrace even if the tool ignores
// its context: a tool that returns within the grace has its output shown
// after the notice; whatever it returns later is dropped and counted (see
// Runner.LateResults).
func (r *Runner) timeoutStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		limit := r.timeoutFor(req)
		if req.Timeout > 0 {
			ctx = tool.WithCallerLimit(ctx, limit)
		}
		cctx, cancel := context.WithTimeoutCause(ctx, limit, errTimedOut)
		defer cancel()
		done := make(chan tool.Result, 1)
		var abandoned atomic.Bool
		// The rest of the call works on its own copy of the request, so a
		// call abandoned at its deadline cannot change what this goroutine
		// goes on to read.
		w := *req
		w.notes = maps.Clone(req.notes)
		go func() {
			var res tool.Result
			defer func() {
				if p := recover(); p != nil {
					req.logger().Error("tool pipeline panicked", "tool", req.Tool.Name, "call", req.Call.ID, "panic", p, "stack", string(debug.Stack()))
					res = tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: fmt.Sprintf("internal error in the tool pipeline: %v", p)}.Result()
				}
				if abandoned.Load() {
					r.late.Add(1)
					req.logger().Warn("dropped the result of a call that had already ended", "tool", req.Tool.Name, "call", req.Call.ID)
				}
				done <- res
			}()
			res = next(cctx, &w)
		}()
		select {
		case res := <-done:
			req.absorb(&w)
			if d, ok := cctx.Deadline(); ok && res.IsError && !time.Now().Before(d) {
				// The deadline has passed: the tool stopped at it on its
				// own clock (exec's timeout is the caller's limit), maybe
				// before the context's timer ran. It is a time-out either way.
				<-cctx.Done()
			}
			if cctx.Err() == nil || !res.IsError {
				return res
			}
			return r.stopped(ctx, cctx, req, limit, &res)
		case <-cctx.Done():
		}
		grace := time.NewTimer(r.cfg.CancelGrace)
		defer grace.Stop()
		select {
		case res := <-done:
			req.absorb(&w)
			return r.stopped(ctx, cctx, req, limit, &res)
		case <-grace.C:
			if abandoned.CompareAndSwap(false, true) && len(done) == 0 {
				return r.stopped(ctx, cctx, req, limit, nil)
			}
			// The result arrived just as the grace ran out.
			abandoned.Store(false)
			res := <-done
			req.absorb(&w)
			return r.stopped(ctx, cctx, req, limit, &res)
		}
	}
}

// stopped is the result of a call that timed out or was cancelled, with what
// the tool returned, if anything.
func (r *Runner) stopped(parent, cctx context.Context, req *Request, limit time.Duration, got *tool.Result) tool.Result {
	var text string
	if context.Cause(cctx) == errTimedOut && parent.Err() == nil {
		text = "Tool " + req.Tool.Name + " timed out after " + strconv.FormatFloat(limit.Seconds(), 'f', -1, 64) + " s"
		req.Outcome = OutcomeTimeout
	} else {
		text = "Tool " + req.Tool.Name + " was cancelled"
		if cause := context.Cause(parent); cause != nil && cause != context.Canceled {
			text += ": " + cause.Error()
		}
		req.Outcome = OutcomeCancelled
	}
	res := tool.Errorf("%s.", text)
	if got != nil && !(got.IsError && isContextError(ErrorText(*got))) {
		res.Content[0].Text += " Output before it stopped:"
		res.Content = append(res.Content, got.Content...)
		res.Details = got.Details
	}
	return res
}

// isContextError reports whether an error text is just a context's error,
// which adds nothing to the notice.
func isContextError(text string) bool {
	switch text {
	case context.Canceled.Error(), context.DeadlineExceeded.Error(), errTimedOut.Error():
		return true
	}
	return false
}

// absorb takes over what the rest of the call recorded in its copy w of the
// request.
func (req *Request) absorb(w *Request) {
	if w.Outcome != "" {
		req.Outcome = w.Outcome
	}
	for k, v := range w.notes {
		req.Note(k, v)
	}
}
