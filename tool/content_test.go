package tool_test

import (
	"encoding/json"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

func TestResourceContentJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		block tool.Content
		wire  string
		words string
	}{
		{tool.Content{Type: tool.ResourceContent, URI: "test://notes", MIMEType: "text/plain", Text: "the notes"},
			`{"type":"resource","resource":{"uri":"test://notes","mimeType":"text/plain","text":"the notes"}}`,
			"[resource: test://notes, text/plain]\nthe notes"},
		{tool.Content{Type: tool.ResourceContent, URI: "test://blob", MIMEType: "image/png", Data: "AAECAw=="},
			`{"type":"resource","resource":{"uri":"test://blob","mimeType":"image/png","blob":"AAECAw=="}}`,
			"[resource: test://blob, image/png, 4 bytes, binary, not shown]"},
	} {
		b, err := json.Marshal(tc.block)
		if err != nil || string(b) != tc.wire {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.block, b, err, tc.wire)
		}
		var back tool.Content
		if err := json.Unmarshal([]byte(tc.wire), &back); err != nil || back != tc.block {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", tc.wire, back, err, tc.block)
		}
		if got := tc.block.Describe(); got != tc.words {
			t.Errorf("Describe() = %q, want %q", got, tc.words)
		}
	}
}
