package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestIDStyles(t *testing.T) {
	t.Parallel()
	styles := map[IDStyle]*regexp.Regexp{
		IDStrict:    regexp.MustCompile(`^[A-Za-z0-9]{1,40}$`),
		IDStrict9:   regexp.MustCompile(`^[A-Za-z0-9]{9}$`),
		IDAnthropic: regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`),
	}
	originals := []string{
		"call_abc123", "toolu_01A2B3C4D5E6F7G8H9", "abcdefghi", "abc-def-ghi", "call|fc_1|a.b", "",
		"x", "functions.read:0", "call_" + string(make([]byte, 0)) + "0123456789012345678901234567890123456789012345678901234567890123456789",
		"ééé", "call_abc123 ", "call-abc123",
	}
	for style, valid := range styles {
		m := NewIDMap(style)
		seen := map[string]string{}
		for _, o := range originals {
			id := m.ID(o)
			if !valid.MatchString(id) {
				t.Errorf("style %d: %q → %q does not fit", style, o, id)
			}
			if prev, ok := seen[id]; ok && prev != o {
				t.Errorf("style %d: %q and %q both became %q", style, prev, o, id)
			}
			seen[id] = o
			if back, ok := m.Original(id); !ok || back != o {
				t.Errorf("style %d: %q maps back to %q", style, id, back)
			}
			if again := m.ID(o); again != id {
				t.Errorf("style %d: %q mapped to %q, then %q", style, o, id, again)
			}
		}
		// The same transcript maps the same way in another map.
		other := NewIDMap(style)
		for _, o := range originals {
			if other.ID(o) != m.ID(o) {
				t.Errorf("style %d: not deterministic for %q", style, o)
			}
		}
	}
	// Ids that already fit are kept.
	if id := NewIDMap(IDAnthropic).ID("toolu_01A2B3"); id != "toolu_01A2B3" {
		t.Error(id)
	}
	if id := NewIDMap(IDStrict9).ID("abcdefghi"); id != "abcdefghi" {
		t.Error(id)
	}
	if id := NewIDMap(IDStrict).ID("call_abc123"); id != "callabc123" {
		t.Error(id)
	}
}

func TestIDCollisionsAcrossATranscript(t *testing.T) {
	t.Parallel()
	// call_1 and call-1 clean to the same strict id; the second gets another.
	m := NewIDMap(IDStrict)
	a, b := m.ID("call_1"), m.ID("call-1")
	if a == b || a != "call1" {
		t.Errorf("%q %q", a, b)
	}
	// Thousands of ids in 9 characters stay distinct.
	m9 := NewIDMap(IDStrict9)
	seen := map[string]bool{}
	for i := range 5000 {
		id := m9.ID(fmt.Sprintf("toolu_%06d", i))
		if seen[id] {
			t.Fatalf("collision at %d", i)
		}
		seen[id] = true
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	registered := map[string]bool{"read": true, "exec": true, "web_fetch": true, "apply_patch": true, "grep": true, "grep_1": true}
	lookup := func(n string) (string, bool) {
		n = strings.ToLower(n)
		if registered[n] {
			return n, true
		}
		if n == "bash" {
			return "exec", true
		}
		return "", false
	}
	for in, want := range map[string]string{
		"read":                  "read",
		" read ":                "read",
		"functions.read":        "read",
		"Functions.read":        "read",
		"tools/exec":            "exec",
		"functions.bash":        "exec",
		"functions.read:0":      "read",
		"read:3":                "read",
		"web_fetch_2":           "web_fetch",
		"default_api.grep":      "grep",
		"default_api:grep":      "grep",
		"functions.grep_1":      "grep_1", // registered as written
		"functions.grep_2":      "grep",   // a counter on grep
		"functions.unknown":     "functions.unknown",
		"functions.grep_1:0":    "grep_1",
		"functions.Read":        "read",
		"functions.READ_9":      "read",
		"functions.apply_patch": "apply_patch",
	} {
		if got := ToolName(in, lookup); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}
