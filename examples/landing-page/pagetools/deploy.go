package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
)

// deployPreview serves the page on loopback for as long as the handler
// runs (the toolbelt process that started it), checks that it answers, and
// returns its URL.
func deployPreview(ctx context.Context, s *site, raw json.RawMessage) (response, error) {
	var args struct{ ProjectDir string }
	if err := json.Unmarshal(raw, &args); err != nil {
		return response{}, err
	}
	page := path.Join(cmp.Or(args.ProjectDir, "."), "index.html")
	url, err := s.url(page)
	if err != nil {
		return response{}, err
	}
	n, err := fetch(ctx, url)
	if err != nil {
		return response{}, err
	}
	return response{
		Result:  map[string]any{"previewUrl": url, "deployed": true, "bytes": n},
		Summary: "The preview is at " + url,
	}, nil
}

// fetch gets url and returns the size of its body.
func fetch(ctx context.Context, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the preview answered %s", resp.Status)
	}
	return io.Copy(io.Discard, resp.Body)
}
