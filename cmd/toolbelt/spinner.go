package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/internal/termsafe"
)

// spinnerDelay is how long work runs before a spinner shows: quick work
// shows nothing.
const spinnerDelay = 300 * time.Millisecond

// spinner shows, on a terminal's line, that something is under way: a frame,
// what is going on and for how long. It writes only to a terminal (stderr),
// never to stdout, and nothing at all when stderr is not a terminal.
type spinner struct {
	w     io.Writer
	start time.Time

	mu     sync.Mutex
	msg    string
	shown  bool // a line is on the screen
	paused bool
	done   bool
	stop   chan struct{}
	ended  chan struct{}
}

// startSpinner shows msg with a spinner on stderr after spinnerDelay, if
// stderr is a terminal; it returns nil otherwise. A nil spinner's methods do
// nothing.
func (e *env) startSpinner(msg string) *spinner {
	if !isTerminalWriter(e.stderr) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	s := &spinner{w: e.stderr, start: time.Now(), msg: termsafe.Line(msg), stop: make(chan struct{}), ended: make(chan struct{})}
	go s.run()
	return s
}

func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (s *spinner) run() {
	defer close(s.ended)
	select {
	case <-time.After(spinnerDelay):
	case <-s.stop:
		return
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		s.mu.Lock()
		if !s.paused {
			secs := int(time.Since(s.start).Seconds())
			fmt.Fprintf(s.w, "\r\x1b[K%s %s %ds", frames[i%len(frames)], s.msg, secs)
			s.shown = true
		}
		s.mu.Unlock()
		select {
		case <-tick.C:
		case <-s.stop:
			return
		}
	}
}

// Set changes what the spinner says, such as a tool's latest progress.
func (s *spinner) Set(msg string) {
	if s == nil {
		return
	}
	msg = strings.TrimSpace(msg)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if utf8.RuneCountInString(msg) > 60 {
		msg = string([]rune(msg)[:59]) + "…"
	}
	s.mu.Lock()
	s.msg = termsafe.Line(msg)
	s.mu.Unlock()
}

// Pause clears the line and stops drawing until Resume, so that a question
// can use the terminal.
func (s *spinner) Pause() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = true
	s.clear()
}

// Resume draws again after Pause.
func (s *spinner) Resume() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// Stop removes the spinner's line; the terminal is as it was.
func (s *spinner) Stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	close(s.stop)
	s.mu.Unlock()
	<-s.ended
	s.mu.Lock()
	s.clear()
	s.mu.Unlock()
}

// clear erases the spinner's line; s.mu is held.
func (s *spinner) clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}
