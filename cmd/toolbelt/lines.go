package main

import (
	"bufio"
	"context"
	"io"
	"slices"
	"sync"
)

// promptLine is a line read from standard input, or the end of the input
// (end, with the error that ended it, if any).
type promptLine struct {
	text string
	end  bool
	err  error
}

// lineSource reads standard input one line at a time, only while someone
// waits for a line, and hands each line to the last question waiting (an
// approval, ask_user), else to whoever asked last: a question asked during
// a chat's turn gets its answer before the chat's steering does, as it
// would at the prompt, even when the steering asked again after it.
type lineSource struct {
	in *bufio.Scanner

	mu      sync.Mutex
	waiting []waiter     // who gets the next line: the last question, else the last
	held    []promptLine // lines read for a waiter that left
	reading bool
}

// waiter is one who waits for a line.
type waiter struct {
	ch       chan promptLine
	question bool
}

// newLineSource reads lines from r.
func newLineSource(r io.Reader) *lineSource {
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 64<<10), 4<<20)
	return &lineSource{in: in}
}

// ask returns the channel the next line arrives on, and the function that
// gives up waiting for it; a line that came meanwhile goes to the next to
// ask.
func (s *lineSource) ask() (<-chan promptLine, func()) { return s.enqueue(false) }

// askQuestion is ask for a question that must be answered by a line typed
// after it is shown: the lines held for those who left are dropped first
// (a "y" typed for a question that timed out must not answer an approval
// no one saw), and it gets the next line before other waiters.
func (s *lineSource) askQuestion() (<-chan promptLine, func()) { return s.enqueue(true) }

// enqueue is ask and askQuestion.
func (s *lineSource) enqueue(question bool) (<-chan promptLine, func()) {
	ch := make(chan promptLine, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if question {
		s.held = slices.DeleteFunc(s.held, func(l promptLine) bool { return !l.end })
	}
	if len(s.held) > 0 {
		ch <- s.held[0]
		s.held = s.held[1:]
		return ch, func() {}
	}
	s.waiting = append(s.waiting, waiter{ch: ch, question: question})
	if !s.reading {
		s.reading = true
		go s.read()
	}
	return ch, func() { s.leave(ch) }
}

// leave stops ch waiting; a line already sent to it is held for the next.
func (s *lineSource) leave(ch chan promptLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting = slices.DeleteFunc(s.waiting, func(w waiter) bool { return w.ch == ch })
	select {
	case l := <-ch:
		s.held = append([]promptLine{l}, s.held...)
	default:
	}
}

// read reads lines while someone waits, each to the last to ask.
func (s *lineSource) read() {
	for {
		l := promptLine{end: true}
		if s.in.Scan() {
			l = promptLine{text: s.in.Text()}
		} else {
			l.err = s.in.Err()
		}
		s.mu.Lock()
		if n := len(s.waiting); n > 0 {
			i := n - 1 // the last question, else the last
			for j := n - 1; j >= 0; j-- {
				if s.waiting[j].question {
					i = j
					break
				}
			}
			s.waiting[i].ch <- l
			s.waiting = slices.Delete(s.waiting, i, i+1)
		} else {
			s.held = append(s.held, l)
		}
		if len(s.waiting) == 0 || l.end {
			s.reading = false
			for _, w := range s.waiting { // the end, for everyone
				w.ch <- l
			}
			s.waiting = nil
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// putBack makes lines, in order, the next lines given out.
func (s *lineSource) putBack(lines ...promptLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = append(slices.Clip(lines), s.held...)
}

// wait waits for the line ask promised on ch until ctx ends, then gives up
// the claim with leave.
func (s *lineSource) wait(ctx context.Context, ch <-chan promptLine, leave func()) (promptLine, error) {
	select {
	case l := <-ch:
		return l, nil
	case <-ctx.Done():
		leave()
		return promptLine{}, ctx.Err()
	}
}
