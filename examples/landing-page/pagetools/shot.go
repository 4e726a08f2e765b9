package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/toolbelt/toolbelt/tools/browser"
)

// previewScreenshot pictures a page of the workspace at a viewport, saves
// the PNG under screenshots/ and returns it with the seeds' MEDIA:<path>
// line.
func previewScreenshot(ctx context.Context, s *site, raw json.RawMessage) (response, error) {
	var args struct{ Viewport, Page string }
	if err := json.Unmarshal(raw, &args); err != nil {
		return response{}, err
	}
	args.Viewport, args.Page = cmp.Or(args.Viewport, "desktop"), cmp.Or(args.Page, "index.html")
	vp, ok := viewports[args.Viewport]
	if !ok {
		return response{}, fmt.Errorf("viewport %q: use desktop, tablet or mobile", args.Viewport)
	}
	url, err := s.url(args.Page)
	if err != nil {
		return response{}, err
	}
	png, err := s.browser.Capture(ctx, "preview", url, browser.CaptureOptions{Width: vp.Width, Height: vp.Height})
	if err != nil {
		return response{}, err
	}
	file := path.Join("screenshots", strings.TrimSuffix(path.Base(args.Page), path.Ext(args.Page))+"-"+args.Viewport+".png")
	if err := s.root.MkdirAll("screenshots", 0o755); err != nil {
		return response{}, err
	}
	if err := s.root.WriteFile(file, png, 0o644); err != nil {
		return response{}, err
	}
	return response{
		Result: map[string]any{"path": file, "viewport": args.Viewport, "width": vp.Width, "height": vp.Height, "bytes": len(png)},
		Content: []content{
			{Type: "text", Text: fmt.Sprintf("Screenshot taken (%s viewport, %d×%d)\nMEDIA:%s", args.Viewport, vp.Width, vp.Height, file)},
			{Type: "image", Data: png, MimeType: "image/png"},
		},
	}, nil
}
