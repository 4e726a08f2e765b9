package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/internal/importname"
	"github.com/toolbelt/toolbelt/tool"
)

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

func TestLocalNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 70)
	for _, tc := range []struct {
		name   string
		server string
		sep    string
		remote []string
		want   map[string]string
	}{
		{"valid names are kept", "gh", "__", []string{"create_issue", "get-file"},
			map[string]string{"create_issue": "gh__create_issue", "get-file": "gh__get-file"}},
		{"refused characters become _", "fs", "__", []string{"files/read", "café", "a b"},
			map[string]string{"files/read": "fs__files_read", "café": "fs__caf_", "a b": "fs__a_b"}},
		{"a valid name wins over a repaired one", "gh", "__", []string{"a.b", "a_b"},
			map[string]string{"a_b": "gh__a_b", "a.b": "gh__a_b_" + hash8("a.b")}},
		{"repaired names that collide", "gh", "__", []string{"a/b", "a.b"},
			map[string]string{"a.b": "gh__a_b", "a/b": "gh__a_b_" + hash8("a/b")}},
		{"too long", "s", "__", []string{long},
			map[string]string{long: ("s__" + long)[:55] + "_" + hash8(long)}},
		{"another separator", "gh", ".", []string{"issue"},
			map[string]string{"issue": "gh_issue"}},
		{"a long server name", long[:60], "__", []string{"x", long},
			map[string]string{"x": long[:60] + "__x", long: long[:55] + "_" + hash8(long)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for i := range 10 { // the order the server lists its tools in does not matter
				remote := append([]string(nil), tc.remote...)
				rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(remote), func(a, b int) { remote[a], remote[b] = remote[b], remote[a] })
				got := importname.Local(tc.server, tc.sep, remote)
				seen := map[string]bool{}
				for r, l := range got {
					if l != tc.want[r] {
						t.Errorf("%q → %q, want %q", r, l, tc.want[r])
					}
					if err := tool.ValidateName(l); err != nil || seen[l] {
						t.Errorf("%q → %q: invalid or taken (%v)", r, l, err)
					}
					if p := NamePrefix(tc.server, tc.sep); !strings.HasPrefix(l, p) {
						t.Errorf("%q → %q, which does not begin with NamePrefix %q", r, l, p)
					}
					seen[l] = true
				}
				if len(got) != len(tc.want) {
					t.Errorf("%d names, want %d", len(got), len(tc.want))
				}
			}
		})
	}
}

func TestProgressText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    mcp.ProgressNotificationParams
		want string
	}{
		{mcp.ProgressNotificationParams{Progress: 3, Total: 10, Message: "indexing"}, "indexing 3/10"},
		{mcp.ProgressNotificationParams{Progress: 3, Total: 10}, "progress 3/10"},
		{mcp.ProgressNotificationParams{Progress: 0.25}, "progress 0.25"},
		{mcp.ProgressNotificationParams{Progress: 1500, Message: "bytes"}, "bytes 1500"},
	} {
		if got := progress(&tc.p); got.Content[0].Text != tc.want {
			t.Errorf("%+v → %q, want %q", tc.p, got.Content[0].Text, tc.want)
		}
	}
}

func TestResultWithoutContent(t *testing.T) {
	t.Parallel()
	res := result(&mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}})
	if len(res.Content) != 1 || res.Content[0].Text != "{\n  \"n\": 1\n}" || res.Details == nil {
		t.Errorf("structured content only: %+v", res)
	}
	if b := block(&mcp.EmbeddedResource{}); b.Text != "[embedded resource without contents]" {
		t.Errorf("empty embedded resource: %q", b.Text)
	}
}

func TestParameters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input any
		want  string // the schema as JSON, or the start of the error
	}{
		{nil, "null"},
		{map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "x-hint": "kept"}}, "$schema": "http://json-schema.org/draft-07/schema#"},
			`{"type":"object","properties":{"q":{"type":"string","x-hint":"kept"}},"$schema":"http://json-schema.org/draft-07/schema#"}`},
		{map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"minimum": "zero"}}}, "input schema is not a JSON Schema: "},
		// Converted without compiling: the import checks that afterwards.
		{map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integral"}}}, `{"type":"object","properties":{"n":{"type":"integral"}}}`},
	} {
		s, lazy, err := parameters(tc.input)
		if lazy != nil {
			s = lazy.Schema()
		}
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			b, _ := json.Marshal(s)
			got = string(b)
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v → %s, want %s", tc.input, got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{"Error: ENOENT: no such file or directory, open 'config.json'", "Error: ENOENT: no such file or directory, open 'config.json'"},
		{"connecting to postgres://app:hunter2@db:5432/app failed", "connecting to postgres://app:[redacted]@db:5432/app failed"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer [redacted]"},
		{strings.Repeat("é", 300), strings.Repeat("é", 300)}, // 600 bytes, 300 characters
		{strings.Repeat("é", 400), strings.Repeat("é", 300) + "…"},
		{strings.Repeat("x", 301), strings.Repeat("x", 300) + "…"},
	} {
		if got := scrub(tc.line); got != tc.want {
			t.Errorf("scrub(%.40q…) = %.60q…, want %.60q…", tc.line, got, tc.want)
		}
	}
}
