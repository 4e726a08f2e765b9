// Command pagetools is the handler of the landing-page example's four
// directory tools (write_html, preview_screenshot, validate_page and
// deploy_preview): each tool's folder runs it, persistent, with the tool's
// name as its argument, and it answers the directory-tool protocol's
// requests one line at a time (docs/directory-tools.md).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// request is one call of the protocol.
type request struct {
	CallID    string          `json:"callId"`
	Arguments json.RawMessage `json:"arguments"`
	Context   struct {
		Workspace string `json:"workspace"`
	} `json:"context"`
}

// response is a call's answer.
type response struct {
	CallID     string    `json:"callId"`
	Success    bool      `json:"success"`
	Result     any       `json:"result,omitempty"`
	Summary    string    `json:"summary,omitempty"`
	Content    []content `json:"content,omitempty"`
	Error      string    `json:"error,omitempty"`
	Suggestion string    `json:"suggestion,omitempty"`
}

// content is a block of what the model sees: text, or an image.
type content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// handler answers one call of a tool for the site of the call's workspace.
type handler func(ctx context.Context, s *site, args json.RawMessage) (response, error)

var handlers = map[string]handler{
	"write_html":         writeHTML,
	"preview_screenshot": previewScreenshot,
	"validate_page":      validatePage,
	"deploy_preview":     deployPreview,
}

func main() {
	h, ok := handlers[argument()]
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: pagetools write_html|preview_screenshot|validate_page|deploy_preview")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	sites := newSites()
	defer sites.Close()
	if err := serve(ctx, h, sites); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func argument() string {
	if len(os.Args) != 2 {
		return ""
	}
	return os.Args[1]
}

// serve answers the requests on standard input until it ends.
func serve(ctx context.Context, h handler, sites *sites) error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return fmt.Errorf("a request that is not JSON: %w", err)
		}
		resp, err := answer(ctx, h, sites, req)
		if err != nil {
			resp = response{Error: err.Error()}
		}
		resp.CallID, resp.Success = req.CallID, err == nil
		if err := out.Encode(resp); err != nil {
			return err
		}
	}
	return in.Err()
}

func answer(ctx context.Context, h handler, sites *sites, req request) (response, error) {
	s, err := sites.of(req.Context.Workspace)
	if err != nil {
		return response{}, err
	}
	return h(ctx, s, req.Arguments)
}
