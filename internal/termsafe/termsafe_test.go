package termsafe_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/internal/termsafe"
)

func TestTextAndLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, text, line string }{
		{"plain", "ls -la ./src", "ls -la ./src", "ls -la ./src"},
		{"unicode letters and emoji stay", "café 日本 🙂 naïve", "café 日本 🙂 naïve", "café 日本 🙂 naïve"},
		{"erase line, cursor up", "x\x1b[2K\x1b[1Ay", `x\x1b[2K\x1b[1Ay`, `x\x1b[2K\x1b[1Ay`},
		{"OSC 52 clipboard", "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`, `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`},
		{"window title, ST", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`, `\x1b]0;pwned\x1b\`},
		{"8-bit CSI byte", "a\x9b2Jb", `a\x9b2Jb`, `a\x9b2Jb`},
		{"C1 CSI character", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"C1 NEL", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"backspace, bell, DEL, NUL", "ab\b\b\a\x7f\x00", `ab\x08\x08\x07\x7f\x00`, `ab\x08\x08\x07\x7f\x00`},
		{"carriage return", "safe\roverwritten", `safe\roverwritten`, `safe\roverwritten`},
		{"line feed and tab", "a\n\tb", "a\n\tb", `a\n\tb`},
		{"bidi override", "file\u202etxt.exe", `file\u202etxt.exe`, `file\u202etxt.exe`},
		{"bidi isolates and marks", "\u2066a\u2069\u200f\u061c", `\u2066a\u2069\u200f\u061c`, `\u2066a\u2069\u200f\u061c`},
		{"zero width", "to\u200bol\ufeff", `to\u200bol\ufeff`, `to\u200bol\ufeff`},
		{"tag characters", "hi\U000e0041\U000e0042", `hi\U000e0041\U000e0042`, `hi\U000e0041\U000e0042`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := termsafe.Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
			if got := termsafe.Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
		})
	}
}

// FuzzLine: whatever the input, the output is UTF-8 with nothing a
// terminal acts on or hides, and Text differs from Line only in keeping
// line feeds and tabs.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"x\x1b[2K", "\x9b", "\u202e", "a\nb\tc", "\xff", "\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := termsafe.Line(s), termsafe.Text(s)
		if bad := visibleOnly(line, ""); bad != "" {
			t.Errorf("Line(%q) = %q holds %s", s, line, bad)
		}
		if bad := visibleOnly(text, "\n\t"); bad != "" {
			t.Errorf("Text(%q) = %q holds %s", s, text, bad)
		}
		if strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(text) != line {
			t.Errorf("Text(%q) = %q and Line = %q differ in more than line feeds and tabs", s, text, line)
		}
	})
}

// visibleOnly describes the first character of s a terminal would act on
// or not show (other than those in allowed), or returns "".
func visibleOnly(s, allowed string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for _, r := range s {
		if strings.ContainsRune(allowed, r) {
			continue
		}
		if r < 0x20 || r >= 0x7f && r <= 0x9f || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// TestJSON: the JSON value stays the same; what a terminal acts on or
// hides becomes a JSON escape.
func TestJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"a": "plain é 🙂"}`, `{"a": "plain é 🙂"}`},
		{"{\"a\": \"x\u009b2J\u202ey\x7f\U000e0041\"}", `{"a": "x\u009b2J\u202ey\u007f\udb40\udc41"}`},
		{"[\n\t\"\u2028\"\n]", "[\n\t\"\\u2028\"\n]"},
	} {
		got := string(termsafe.JSON([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("JSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var a, b any
		if err := json.Unmarshal([]byte(tc.in), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(got), &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("JSON(%q) = %q: %v, value %v, want %v", tc.in, got, err, b, a)
		}
	}
}
