package console_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestCanvasBehindLogin: the console serves the sessions' canvases at
// /canvas/ to those logged in only, and a session's page links to its
// canvas.
func TestCanvasBehindLogin(t *testing.T) {
	t.Parallel()
	s := serve(t, true)
	cv := s.tb.Canvas()
	cv.SetBase(s.srv.URL + "/canvas/")
	if _, err := cv.Push("agent:main:main", `{"version":"v0.9","createSurface":{"surfaceId":"a","catalogId":"c"}}`); err != nil {
		t.Fatal(err)
	}
	page := cv.URL("agent:main:main")
	anon := client(t)
	if code, _ := get(t, anon, page); code != http.StatusSeeOther {
		t.Errorf("the canvas without logging in: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, page+"action", strings.NewReader(`{"surfaceId":"a","sourceComponentId":"b","name":"n"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := anon.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an action without logging in: %v %v", resp.Status, err)
	}
	c := client(t)
	logIn(t, s, c, ownerToken)
	if code, body := get(t, c, page); code != http.StatusOK || !strings.Contains(body, `src="canvas.js"`) {
		t.Errorf("the canvas logged in: %d\n%s", code, body)
	}
	keepSessions(t, s.tb.Store().Sessions())
	if code, body := get(t, c, s.srv.URL+"/sessions/agent:main:main"); code != http.StatusOK || !strings.Contains(body, `href="/canvas/agent:main:main/"`) {
		t.Errorf("the session's page does not link to its canvas: %d\n%s", code, body)
	}
}
