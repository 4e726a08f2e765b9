package shell

import (
	"strings"
	"testing"
)

func TestOutputKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly full", 6, []string{"abc", "def"}, "abcdef"},
		{"one write too long", 6, []string{"abcdefghij"}, "abc\n[… 4 bytes of output omitted …]\nhij"},
		{"ring wraps", 6, []string{"ab", "cd", "ef", "gh", "ij"}, "abc\n[… 4 bytes of output omitted …]\nhij"},
		{"many small writes", 8, strings.Split("the quick brown fox", ""), "the \n[… 11 bytes of output omitted …]\n fox"},
		{"cut at lines", 8, []string{"12\n", "3456789\nxyz\n"}, "12\n[… 8 bytes of output omitted …]\nxyz\n"},
		{"partial lines dropped", 8, []string{"ab\ncd\nef\ngh\nij\n"}, "ab\n[… 9 bytes of output omitted …]\nij\n"},
		{"invalid UTF-8 replaced", 100, []string{"a\xffb"}, "a\uFFFDb"},
		{"CRLF", 100, []string{"a\r\nb\r\n"}, "a\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutput(tt.limit)
			var total int64
			for _, w := range tt.writes {
				n, err := o.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				total += int64(n)
			}
			got, next := o.Since(0, false)
			if got != tt.want {
				t.Errorf("Since(0) = %q, want %q", got, tt.want)
			}
			if next != total || o.Total() != total {
				t.Errorf("next = %d, Total = %d, want %d", next, o.Total(), total)
			}
			if len(o.head) > o.headCap || len(o.ring) > o.ringCap || cap(o.head) > o.headCap || cap(o.ring) > o.ringCap {
				t.Errorf("buffers exceed the limit: head %d/%d ring %d/%d", len(o.head), cap(o.head), len(o.ring), cap(o.ring))
			}
		})
	}
}

func TestOutputSinceCursor(t *testing.T) {
	t.Parallel()
	o := newOutput(8) // 4 head + 4 ring
	write := func(s string) { _, _ = o.Write([]byte(s)) }
	write("ab")
	got, next := o.Since(0, true)
	if got != "ab" || next != 2 {
		t.Fatalf("first read = %q, %d", got, next)
	}
	write("cdefghijkl") // "abcd" kept, "efgh" dropped, "ijkl" in the ring
	got, next = o.Since(next, true)
	if got != "cd\n[… 4 bytes of output omitted …]\nijkl" || next != 12 {
		t.Errorf("read across the gap = %q, %d", got, next)
	}
	write("mn")
	if got, next = o.Since(next, true); got != "mn" || next != 14 {
		t.Errorf("read in the ring = %q, %d", got, next)
	}
	if got, next = o.Since(next, true); got != "" || next != 14 {
		t.Errorf("nothing new = %q, %d", got, next)
	}
}

func TestOutputHoldsBackSplitCharacter(t *testing.T) {
	t.Parallel()
	o := newOutput(100)
	euro := "€" // three bytes
	_, _ = o.Write([]byte("x" + euro[:2]))
	got, next := o.Since(0, true)
	if got != "x" || next != 1 {
		t.Fatalf("while running: %q, %d; want the partial character held back", got, next)
	}
	_, _ = o.Write([]byte(euro[2:] + "y"))
	if got, _ = o.Since(next, true); got != euro+"y" {
		t.Errorf("after the rest arrived: %q", got)
	}
	_, _ = o.Write([]byte(euro[:1]))
	if got, _ = o.Since(0, false); got != "x"+euro+"y\uFFFD" {
		t.Errorf("finished with a broken character: %q", got)
	}
}
