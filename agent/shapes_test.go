package agent

import (
	"encoding/json"
	"testing"
)

func TestReshape(t *testing.T) {
	for _, c := range []struct{ name, args, wantName, want, shape string }{
		{"Edit", `{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}`, "edit", `{"edits":[{"newText":"y","oldText":"x","replaceAll":true}],"path":"a"}`, "Claude Code edit (file_path, old_string, new_string, replace_all)"},
		{"MultiEdit", `{"file_path":"a","edits":[{"old_string":"x","new_string":"y"},{"old_string":"p","new_string":"q","replace_all":true}]}`, "edit", `{"edits":[{"newText":"y","oldText":"x"},{"newText":"q","oldText":"p","replaceAll":true}],"path":"a"}`, "Claude Code MultiEdit (file_path, edits of old_string, new_string, replace_all)"},
		{"str_replace_based_edit_tool", `{"command":"str_replace","path":"a","old_str":"x","new_str":"y"}`, "edit", `{"edits":[{"newText":"y","oldText":"x"}],"path":"a"}`, "str_replace edit (path, old_str, new_str)"},
		{"edit", `{"path":"a","oldText":"x","newText":"y"}`, "edit", `{"edits":[{"newText":"y","oldText":"x"}],"path":"a"}`, "single edit (path, oldText, newText)"},
		// The tool's own shape, other tools and broken arguments pass unchanged.
		{"edit", `{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`, "edit", `{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`, ""},
		{"read", `{"file_path":"a"}`, "read", `{"file_path":"a"}`, ""},
		{"Edit", `{"file_path":"a"`, "Edit", `{"file_path":"a"`, ""},
		{"Edit", `{"file_path":"a","old_string":"x"}`, "Edit", `{"file_path":"a","old_string":"x"}`, ""},
	} {
		name, args, shape := reshape(c.name, json.RawMessage(c.args))
		if name != c.wantName || string(args) != c.want || shape != c.shape {
			t.Errorf("reshape(%s, %s) = %s, %s, %q; want %s, %s, %q", c.name, c.args, name, args, shape, c.wantName, c.want, c.shape)
		}
	}
}
