package schema

import "testing"

// TestDefaultNotRepeated: a default the description already states is not
// added to it again; one it does not state is.
func TestDefaultNotRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		desc string
		def  string
		want bool
	}{
		{`How deep to list (default 1).`, `1`, true},
		{`Type of format. Default is "png"`, `"png"`, true},
		{`Type of format. Default is png.`, `"png"`, true},
		{`Defaults to 30 seconds.`, `30`, true},
		{`Default: true`, `true`, true},
		{`How deep to list (default 10).`, `1`, false},
		{`Default 1.5 seconds`, `1`, false},
		{`The default name.`, `"name"`, false},
		{``, `1`, false},
	} {
		if got := saysAlready(c.desc, "default: "+c.def); got != c.want {
			t.Errorf("saysAlready(%q, default %s) = %v, want %v", c.desc, c.def, got, c.want)
		}
	}
	if saysAlready("default 1", "at most 1 items") {
		t.Error("a hint other than a default is never dropped")
	}
}
