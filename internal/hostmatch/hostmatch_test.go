package hostmatch

import "testing"

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, host string
		want          bool
	}{
		{"github.com", "github.com", true},
		{"github.com", "GitHub.COM", true},
		{"github.com", "github.com.", true},
		{"GitHub.com.", "github.com", true},
		{" github.com ", "github.com", true},
		{"github.com", "api.github.com", false},
		{"github.com", "evilgithub.com", false},
		{"github.com", "github.com.evil.com", false},
		{"github.com", "github.co", false},
		{"*.github.com", "api.github.com", true},
		{"*.github.com", "a.b.github.com", true},
		{"*.github.com", "API.GitHub.com.", true},
		{"*.github.com", "github.com", false},
		{"*.github.com", "evilgithub.com", false},
		{"*.github.com", "api.github.com.evil.com", false},
		{"*.github.com", ".github.com", false},
		{"bücher.de", "xn--bcher-kva.de", true},
		{"xn--bcher-kva.de", "BÜCHER.de", true},
		{"*.bücher.de", "www.xn--bcher-kva.de", true},
		{"github.com", "ｇｉｔｈｕｂ.ｃｏｍ", true},  // full-width: the same name once mapped (UTS 46)
		{"github.com", "gіthub.com", false}, // Cyrillic і: another name
		{"registry.npmjs.org", "registry.npmjs.org", true},
		{"localhost", "127.0.0.1", false},
		{"*.0.0.1", "127.0.0.1", false},
		{"example.com", "93.184.216.34", false},
		{"*.example.com", "[::1]", false},
		{"93.184.216.34", "93.184.216.34", true},
		{"127.0.0.1", "2130706433", true},
		{"127.0.0.1", "127.0.0.2", false},
		{"::1", "[::1]", true},
		{"*", "github.com", false},
		{"", "github.com", false},
		{"*.", "github.com", false},
		{"git*.com", "github.com", false},
		{"github.com", "", false},
		{"github.com", "github..com", false},
		{"github.com/x", "github.com", false},
		{"github.com", "github.com:443", false},
	} {
		if got := Match(tc.pattern, tc.host); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.host, got, tc.want)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"github.com", "*.github.com", "bücher.de", "10.0.0.1"} {
		if err := CheckPattern(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "*", "*.", "git*.com", "https://github.com", "github.com:443", "*.10.0.0.1"} {
		if CheckPattern(p) == nil {
			t.Errorf("%q was accepted as a domain pattern", p)
		}
	}
}

func TestParseIPHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, want string
	}{
		{"127.0.0.1", "127.0.0.1"}, {"2130706433", "127.0.0.1"}, {"0x7f000001", "127.0.0.1"}, {"0x7f.1", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"}, {"127.1", "127.0.0.1"}, {"10.1.2", "10.1.0.2"}, {"0", "0.0.0.0"}, {"0x", "0.0.0.0"},
		{"[::1]", "::1"}, {"::ffff:10.0.0.1", "::ffff:10.0.0.1"}, {"8.8.8.8.", "8.8.8.8"},
		{"256.0.0.1", ""}, {"1.2.3.4.5", ""}, {"4294967296", ""}, {"08.0.0.1", ""}, {"example.com", ""}, {"1e3", ""}, {"", ""},
	} {
		ip, ok := ParseIPHost(tc.host)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tc.want {
			t.Errorf("ParseIPHost(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}
