package toolbelt_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/internal/chromium"
	"github.com/toolbelt/toolbelt/tool"
)

// TestCanvasActionOnTheFeed: a person's press of a button on a session's
// canvas is published on the root's feed, with the session, the canvas
// URL and the message its agent gets; the canvas tool, once a front door
// serves the canvas, pushes to the caller's session.
func TestCanvasActionOnTheFeed(t *testing.T) {
	t.Parallel()
	tb, _, _ := open(t, nil)
	cv := tb.Canvas()
	srv := httptest.NewServer(http.StripPrefix("/canvas", cv.Handler()))
	defer srv.Close()
	cv.SetBase(srv.URL + "/canvas/")
	m := call(t, tb, "c1", "canvas", `{"action":"a2ui_push","jsonl":"{\"surfaceUpdate\":{\"surfaceId\":\"s\",\"components\":[{\"id\":\"b\",\"component\":{\"Button\":{\"child\":\"t\",\"action\":{\"name\":\"go\"}}}}]}}"}`)
	if m.IsError || !strings.Contains(m.Content[0].Text, srv.URL+"/canvas/main/") {
		t.Fatalf("push: %+v", m.Content)
	}
	sub := tb.Feed().Subscribe(0)
	defer sub.Close()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Post(srv.URL+"/canvas/main/action", "application/json", strings.NewReader(`{"surfaceId":"s","sourceComponentId":"b","name":"go"}`))
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("pressing: %v %v", resp, err)
	}
	resp.Body.Close()
	e := <-sub.Events()
	if e.Kind != feed.UserAction || e.Tool != "canvas" || e.Caller.SessionKey != "main" || e.URL != srv.URL+"/canvas/main/" || !strings.Contains(e.Text, `triggered "go"`) {
		t.Errorf("event %+v", e)
	}
	// A press of no button of the surface is refused, and not published.
	resp, err = c.Post(srv.URL+"/canvas/main/action", "application/json", strings.NewReader(`{"surfaceId":"s","sourceComponentId":"b","name":"rm -rf"}`))
	if err != nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a made-up action: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestCanvasSnapshot: the canvas tool's snapshot is a picture of the
// rendered canvas, taken by the session's headless browser from the root's
// own loopback listener (the front door's URL may ask to log in): a PNG of
// the size asked for, showing the surface's primary button.
func TestCanvasSnapshot(t *testing.T) {
	t.Parallel()
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error() + ": the canvas's snapshot drives it")
	}
	tb, _, _ := open(t, nil)
	tb.Canvas().SetBase("http://console.invalid/canvas/") // a front door that needs a login
	push := `{"action":"a2ui_push","jsonl":"{\"version\":\"v0.9\",\"createSurface\":{\"surfaceId\":\"s\",\"catalogId\":\"c\"}}\n{\"version\":\"v0.9\",\"updateComponents\":{\"surfaceId\":\"s\",\"components\":[{\"id\":\"root\",\"component\":\"Button\",\"variant\":\"primary\",\"child\":\"t\",\"action\":{\"event\":{\"name\":\"go\"}}},{\"id\":\"t\",\"component\":\"Text\",\"text\":\"Go\"}]}}"}`
	if m := call(t, tb, "c1", "canvas", push); m.IsError {
		t.Fatalf("push: %+v", m.Content)
	}
	m := call(t, tb, "c2", "canvas", `{"action":"snapshot","width":640,"height":400}`)
	if m.IsError || len(m.Content) != 2 || m.Content[1].Type != tool.ImageContent {
		t.Fatalf("snapshot: %+v", m.Content)
	}
	b, err := base64.StdEncoding.DecodeString(m.Content[1].Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 640 || r.Dy() != 400 {
		t.Errorf("picture %v, want 640×400", r)
	}
	if !hasColor(img, 0x2f, 0x6f, 0xde) {
		t.Error("the picture does not show the primary button: the canvas was not rendered")
	}
}

// hasColor reports whether img has a pixel of the colour r, g, b.
func hasColor(img image.Image, r, g, b uint8) bool {
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R == r && c.G == g && c.B == b {
				return true
			}
		}
	}
	return false
}
