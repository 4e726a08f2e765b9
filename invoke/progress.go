package invoke

import (
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// progress turns a call's updates into update events: in order, at most one
// per UpdateInterval (a faster tool's updates are coalesced, the latest
// winning), the last one always delivered, nothing after the call ended.
type progress struct {
	r   *Runner
	req *Request

	mu      sync.Mutex
	last    time.Time    // when the last update went out
	pending *tool.Result // the latest update not yet sent
	timer   *time.Timer  // sends pending when due
	ended   bool
}

// update is the call's UpdateFunc.
func (p *progress) update(partial tool.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	now := time.Now()
	wait := p.r.cfg.UpdateInterval - now.Sub(p.last)
	if wait <= 0 && p.pending == nil {
		p.send(partial, now)
		return
	}
	p.pending = &partial
	if p.timer == nil {
		p.timer = time.AfterFunc(max(wait, 0), p.flush)
	}
}

// flush sends the pending update when it is due.
func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	if p.ended || p.pending == nil {
		return
	}
	partial := *p.pending
	p.pending = nil
	p.send(partial, time.Now())
}

// end delivers the last pending update and drops any later ones.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.pending != nil {
		p.send(*p.pending, time.Now())
		p.pending = nil
	}
	p.ended = true
}

// send delivers one update; p.mu is held, so updates keep their order.
func (p *progress) send(partial tool.Result, now time.Time) {
	p.last = now
	if p.req.onUpdate != nil {
		p.req.onUpdate(partial)
	}
	if p.r.events.Active() {
		p.req.emit(Event{Type: EventUpdate, Args: rawArgs(p.req.Call.Arguments), PartialResult: p.r.eventResult(partial)})
	}
}
