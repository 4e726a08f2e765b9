package sessions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

func TestResultReadPagesThroughACutResult(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := sessions.Register(reg); err != nil {
		t.Fatal(err)
	}
	full := strings.Repeat("0123456789é", 10000) // 110,000 characters
	if err := reg.Register(tool.Tool{Name: "big", Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
		return tool.Text(full), nil
	}}); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, nil)
	ctx := context.Background()
	first := r.Run(ctx, tool.Call{ID: "call_big", Name: "big"})
	text := first.Content[0].Text
	i := strings.Index(text, "result_read with ")
	if i < 0 {
		t.Fatalf("no hint in %q", text[len(text)-300:])
	}
	args := text[i+len("result_read with ") : strings.Index(text[i:], " to read them.]")+i]
	var got strings.Builder
	got.WriteString(strings.TrimSuffix(text[:strings.Index(text, "\n[... ")], ""))
	for range 10 {
		msg := r.Run(ctx, tool.Call{ID: "read", Name: "result_read", Arguments: json.RawMessage(args)})
		if msg.IsError {
			t.Fatal(msg.Content[0].Text)
		}
		body := msg.Content[0].Text
		cut := strings.LastIndex(body, "\n[Characters ")
		got.WriteString(body[:cut])
		footer := body[cut+1:]
		if strings.HasSuffix(footer, "This is the end.]") {
			break
		}
		var next int
		if _, err := fmtSscan(footer, &next); err != nil {
			t.Fatalf("footer %q: %v", footer, err)
		}
		args = `{"callId":"call_big","offset":` + itoa(next) + `,"limit":39800}`
	}
	if got.String() != full {
		t.Errorf("reassembled %d characters, want the full %d", len([]rune(got.String())), len([]rune(full)))
	}
}

func TestResultReadErrors(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := sessions.Register(reg); err != nil {
		t.Fatal(err)
	}
	outputs := invoke.NewMemoryOutputs(1 << 20)
	_ = outputs.Put(context.Background(), "c1", "short")
	r := invoke.New(reg, nil, invoke.WithOutputs(outputs))
	for args, want := range map[string]string{
		`{"callId":"nope"}`:           `No full result is kept for call \"nope\"`,
		`{"callId":"c1","offset":99}`: `Offset 99 is past the end: the result of call \"c1\" has 5 characters.`,
		`{"callId":"c1","limit":0}`:   "limit: minimum: got 0, want at least 1",
	} {
		msg := r.Run(context.Background(), tool.Call{ID: "x", Name: "result_read", Arguments: json.RawMessage(args)})
		if !msg.IsError || !strings.Contains(msg.Content[0].Text, want) {
			t.Errorf("%s: %q", args, msg.Content[0].Text)
		}
	}
	msg := r.Run(context.Background(), tool.Call{ID: "x", Name: "result_read", Arguments: json.RawMessage(`{"callId":"c1","offset":2}`)})
	if msg.Content[0].Text != "ort\n[Characters 2-5 of 5. This is the end.]" {
		t.Errorf("%q", msg.Content[0].Text)
	}
	// Without an output store the tool is unavailable, with the reason.
	var reason string
	if _, ok := reg.Resolve("result_read", &tool.Context{}, func(_ string, err error) { reason = err.Error() }); ok || !strings.Contains(reason, "no output store") {
		t.Errorf("resolved without a store: %q", reason)
	}
}
