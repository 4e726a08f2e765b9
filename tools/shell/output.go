package shell

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// output keeps what a command writes (stdout and stderr interleaved, in the
// order they arrive) within a fixed budget: the first half of the budget
// holds the beginning, a ring holds the most recent bytes, and what falls
// between is counted but dropped. Memory stays bounded however much a
// command prints.
type output struct {
	mu      sync.Mutex
	head    []byte // the first headCap bytes written
	headCap int
	ring    []byte // the last bytes written after head filled, circular
	ringCap int
	ringPos int   // next write position in ring
	total   int64 // bytes written in all
}

// newOutput returns an output that keeps at most limit bytes.
func newOutput(limit int) *output {
	if limit < 2 {
		limit = 2
	}
	h := limit / 2
	return &output{headCap: h, ringCap: limit - h}
}

// Write records p. It never fails and never blocks on a reader.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.total += int64(n)
	if room := o.headCap - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(grow(o.head, k, o.headCap), p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= o.ringCap {
		// Only the last ringCap bytes of p survive.
		o.ring = append(grow(o.ring[:0], o.ringCap, o.ringCap), p[len(p)-o.ringCap:]...)
		o.ringPos = 0
		return n, nil
	}
	if room := o.ringCap - len(o.ring); room > 0 {
		// The ring grows until it is full, so small outputs stay small.
		k := min(room, len(p))
		o.ring = append(grow(o.ring, k, o.ringCap), p[:k]...)
		o.ringPos = len(o.ring) % o.ringCap
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(o.ring[o.ringPos:], p)
		p = p[k:]
		o.ringPos = (o.ringPos + k) % o.ringCap
	}
	return n, nil
}

// grow returns b with room for add more bytes, doubling its capacity but
// never past limit (len(b)+add must not exceed limit).
func grow(b []byte, add, limit int) []byte {
	need := len(b) + add
	if need <= cap(b) {
		return b
	}
	nb := make([]byte, len(b), min(max(2*cap(b), need, 4096), limit))
	copy(nb, b)
	return nb
}

// Total returns the number of bytes written so far.
func (o *output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Since returns the text written from byte offset from to the end, with a
// marker where bytes were dropped, and the offset to continue from. Around
// the marker only whole lines are shown. When partial is true (the writer
// is still running) an incomplete UTF-8 sequence at the end is held back
// for the next call.
func (o *output) Since(from int64, partial bool) (text string, next int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	end := o.total
	if partial {
		end -= int64(incompleteSuffix(o.slice(max(end-(utf8.UTFMax-1), 0), end)))
	}
	if from >= end {
		return "", max(from, end)
	}
	ringStart := o.total - int64(len(o.ring)) // offset of the oldest byte in the ring
	headLen := int64(len(o.head))
	if from >= ringStart || ringStart == headLen {
		return cleanText(string(o.slice(from, end))), end // nothing dropped in between
	}
	before := o.slice(from, headLen)
	after := o.slice(ringStart, end)
	omitted := ringStart - max(from, headLen)
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		omitted += int64(len(before) - i - 1)
		before = before[:i+1]
	}
	if j := bytes.IndexByte(after, '\n'); j >= 0 && j < len(after)-1 {
		omitted += int64(j + 1)
		after = after[j+1:]
	}
	var b strings.Builder
	b.Write(before)
	if len(before) > 0 && before[len(before)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[… %s of output omitted …]\n", byteCount(omitted))
	b.Write(after)
	return cleanText(b.String()), end
}

// slice returns the kept bytes from stream offset i to j, skipping any that
// were dropped; callers hold o.mu.
func (o *output) slice(i, j int64) []byte {
	var out []byte
	headLen := int64(len(o.head))
	if i < headLen {
		out = append(out, o.head[i:min(headLen, j)]...)
	}
	n := int64(len(o.ring))
	ringStart := o.total - n
	i = max(i, ringStart)
	if n == 0 || i >= j {
		return out
	}
	oldest := int64(o.ringPos) % n // the ring is full whenever ringPos is not at its end
	for k := i - ringStart; k < j-ringStart; {
		p := (oldest + k) % n
		run := min(j-ringStart-k, n-p)
		out = append(out, o.ring[p:p+run]...)
		k += run
	}
	return out
}

// incompleteSuffix returns the length of an unfinished UTF-8 sequence at the
// end of p (0 when p ends on a character boundary).
func incompleteSuffix(p []byte) int {
	for i := 1; i <= len(p) && i < utf8.UTFMax; i++ {
		c := p[len(p)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[len(p)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// cleanText makes command output safe to hand to a model: valid UTF-8 and
// terminal line endings turned into plain newlines.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// byteCount formats n bytes for people: "512 bytes", "3.2 MB".
func byteCount(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
