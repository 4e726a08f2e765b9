package shell

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDefaultTags: the `default` tags of Config, which the configuration
// reference (docs/config.md) shows, are the defaults the tools apply.
func TestDefaultTags(t *testing.T) {
	t.Parallel()
	s, err := Config{}.settings()
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]string{
		"defaultTimeout": strconv.Itoa(int(s.defaultTimeout / time.Second)),
		"maxTimeout":     strconv.Itoa(int(s.maxTimeout / time.Second)),
		"yieldMs":        strconv.Itoa(int(s.yield / time.Millisecond)),
		"maxOutputChars": strconv.Itoa(s.maxOutput),
		"killGraceMs":    strconv.Itoa(int(s.killGrace / time.Millisecond)),
		"sessionTtl":     strings.TrimSuffix(s.sessionTTL.String(), "0s"),
		"required":       strconv.FormatBool(s.sandbox.Required),
		"processLimit":   strconv.Itoa(s.sandbox.ProcessLimit),
	}
	tags := map[string]string{}
	for _, typ := range []reflect.Type{reflect.TypeFor[Config](), reflect.TypeFor[SandboxConfig]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			tags[name] = f.Tag.Get("default")
		}
	}
	for k, want := range applied {
		if tags[k] != want {
			t.Errorf("%s: the default tag says %q, the tools apply %q", k, tags[k], want)
		}
	}
}
