package toolbelt_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/feed"
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
