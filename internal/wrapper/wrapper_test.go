package wrapper

import (
	"strings"
	"testing"
)

// TestSplit: where a wrapper's own arguments end and the command it starts
// begins, as the tools read them; an option not known (or one that makes
// the wrapper run something else, env -S) is said to be unknown.
func TestSplit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		line              string
		operands, command int
		known             bool
	}{
		{"env FOO=1 BAR=2 sh x", 2, 2, true},
		{"env -i --unset HOME -u PATH - sh", 6, 6, true},
		{"env --chdir=/tmp sh", 1, 1, true},
		{"env -S 'sh x'", 1, 1, false},
		{"env --split-string=sh ls", 1, 1, false},
		{"timeout --signal KILL -k 1 5 sh", 4, 5, true},
		{"timeout 5", 0, 1, true},
		{"nice -5 sh", 1, 1, true},
		{"nice -n 5 sh", 2, 2, true},
		{"xargs -0rn1 sh", 1, 1, true},
		{"xargs -i sh {}", 1, 1, true},
		{"xargs -I {} sh {}", 2, 2, true},
		{"xargs --arg-file list ./evil", 2, 2, true},
		{"xargs --max-args=3 sh", 1, 1, true},
		{"xargs --frobnicate sh", 1, 1, false},
		{"xargs -Z sh", 1, 1, false},
		{"sudo -u root -E sh", 3, 3, true},
		{"sudo --preserve-env=PATH sh", 1, 1, true},
		{"flock /tmp/l sh", 0, 1, true},
		{"flock -c 'sh x' /tmp/l", 1, 2, false},
		{"exec -a name sh", 2, 2, true},
		{"command -- sh", 1, 1, true},
		{"chroot /srv sh", 0, 1, true},
		{"stdbuf -oL sh", 1, 1, true},
		{"nohup", 0, 0, true},
	} {
		words := strings.Fields(strings.ReplaceAll(tt.line, "'", ""))
		if strings.Contains(tt.line, "'") { // a quoted word is one word
			q := strings.SplitN(tt.line, "'", 3)
			words = append(strings.Fields(q[0]), q[1])
			words = append(words, strings.Fields(q[2])...)
		}
		s, ok := Lookup(words[0])
		if !ok {
			t.Fatalf("%s: not a wrapper", words[0])
		}
		ops, cmd, known := s.Split(words[1:])
		if ops != tt.operands || cmd != tt.command || known != tt.known {
			t.Errorf("%q: Split = %d, %d, %v; want %d, %d, %v", tt.line, ops, cmd, known, tt.operands, tt.command, tt.known)
		}
	}
	if _, ok := Lookup("/usr/bin/env"); !ok {
		t.Error("a wrapper named by its path is not found")
	}
	if _, ok := Lookup("grep"); ok {
		t.Error("grep is taken for a wrapper")
	}
}
