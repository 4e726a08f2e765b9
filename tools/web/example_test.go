package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/web"
)

// Register the web tools and fetch a page from an internal server that
// toolbelt.yaml's tools.web_fetch.allowHosts lets through.
func ExampleRegister() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Runbook</title></head><body><nav>Menu</nav>
<main><h1>Runbook</h1><p>Restart the <em>queue</em> with <code>make restart</code>.</p></main></body></html>`)
	}))
	defer srv.Close()

	reg := registry.New()
	if err := web.Register(reg, web.Options{}); err != nil {
		panic(err)
	}
	tc := &tool.Context{Config: tool.Config{
		web.FetchConfigKey: map[string]any{"allowHosts": []string{strings.TrimPrefix(srv.URL, "http://")}},
	}}
	runner := invoke.New(reg, tc)
	args, _ := json.Marshal(map[string]any{"url": srv.URL + "/runbook"})
	msg := runner.Run(context.Background(), tool.Call{ID: "call_1", Name: "web_fetch", Arguments: args})

	// The page comes back wrapped as untrusted content; print its Markdown.
	text := msg.Content[0].Text
	body := text[strings.Index(text, "Title:"):strings.LastIndex(text, "\n<<<END_EXTERNAL")]
	for line := range strings.Lines(body) {
		if !strings.HasPrefix(line, "URL:") && !strings.HasPrefix(line, "Content-Type:") {
			fmt.Print(line)
		}
	}
	// Output:
	// Title: Runbook
	//
	// # Runbook
	//
	// Restart the *queue* with `make restart`.
}
