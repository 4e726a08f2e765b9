package invoke

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/toolbelt/toolbelt/tool"
)

// LoopConfig configures loop detection: a call with the same tool and the
// same arguments that keeps getting the same outcome. Zero values turn a
// stage off.
type LoopConfig struct {
	// Warn adds a warning to the result once the same outcome has come back
	// this many times in a row.
	Warn int
	// Block refuses the call, without running it, once the same outcome has
	// come back this many times in a row.
	Block int
}

// loopMemory remembers, per tool and arguments, the last outcome and how many
// times in a row it came back. It keeps at most loopMemorySize entries.
type loopMemory struct {
	mu      sync.Mutex
	entries map[[32]byte]*loopEntry
	order   [][32]byte
}

type loopEntry struct {
	outcome [32]byte
	repeats int
}

const loopMemorySize = 1024

func newLoopMemory() *loopMemory { return &loopMemory{entries: map[[32]byte]*loopEntry{}} }

// loopStep is the "loop" step; it does nothing unless LoopConfig is set.
func (r *Runner) loopStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		cfg := r.cfg.Loop
		if cfg.Warn <= 0 && cfg.Block <= 0 {
			return next(ctx, req)
		}
		key := sha256.Sum256(append([]byte(req.Tool.Name+"\x00"), req.Call.Arguments...))
		if n := r.loops.repeats(key); cfg.Block > 0 && n >= cfg.Block {
			return block(req, fmt.Sprintf("You have called %s with these same arguments %d times in a row and got the same result every time. "+
				"Calling it again will not change the outcome: change your approach — different arguments, another tool, or ask the user.", req.Tool.Name, n))
		}
		res := next(ctx, req)
		n := r.loops.record(key, outcome(res))
		if cfg.Warn > 0 && n >= cfg.Warn {
			res.Content = append(append([]tool.Content(nil), res.Content...), tool.Content{Type: tool.TextContent, Text: fmt.Sprintf(
				"[Warning: this is the %d%s identical call to %s with the same result. Repeating it will not help; try something different.]", n, ordinal(n), req.Tool.Name)})
			req.Note("loop", n)
		}
		return res
	}
}

// repeats returns how many times in a row the call has had the same outcome.
func (m *loopMemory) repeats(key [32]byte) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[key]; e != nil {
		return e.repeats
	}
	return 0
}

// record notes an outcome and returns how many times in a row it has come back.
func (m *loopMemory) record(key, out [32]byte) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e == nil {
		if len(m.order) >= loopMemorySize {
			delete(m.entries, m.order[0])
			m.order = m.order[1:]
		}
		e = &loopEntry{}
		m.entries[key] = e
		m.order = append(m.order, key)
	}
	if e.repeats > 0 && e.outcome == out {
		e.repeats++
	} else {
		e.outcome, e.repeats = out, 1
	}
	return e.repeats
}

// outcome fingerprints a result.
func outcome(res tool.Result) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%v\x00", res.IsError)
	for _, c := range res.Content {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.Type, c.Text, c.Data)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

func ordinal(n int) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}
