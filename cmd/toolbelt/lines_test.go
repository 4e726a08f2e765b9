package main

import (
	"io"
	"testing"
	"time"
)

// TestLineSourceQuestionsFirst: a line goes to the question waiting (an
// approval) even when the chat's steering asked after it, and a line held
// for a waiter that left never answers a question asked later.
func TestLineSourceQuestionsFirst(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	src := newLineSource(r)
	next := func(ch <-chan promptLine) string {
		t.Helper()
		select {
		case l := <-ch:
			return l.text
		case <-time.After(10 * time.Second):
			t.Fatal("no line came")
			return ""
		}
	}
	typeLine := func(s string) {
		t.Helper()
		if _, err := io.WriteString(w, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	steering, leaveSteering := src.ask()
	question, _ := src.askQuestion()
	again, leaveAgain := src.ask() // the steering, asking again
	typeLine("y")
	if got := next(question); got != "y" {
		t.Fatalf("the approval got %q", got)
	}
	typeLine("stop that")
	if got := next(again); got != "stop that" {
		t.Fatalf("the steering got %q", got)
	}
	leaveAgain()

	// A line sent to a waiter that then left is held for the next to ask,
	// unless that is a question.
	typeLine("yes, for the question that timed out")
	for len(steering) == 0 {
		time.Sleep(time.Millisecond)
	}
	leaveSteering()
	question, _ = src.askQuestion()
	typeLine("n")
	if got := next(question); got != "n" {
		t.Fatalf("a later approval got %q", got)
	}
}
