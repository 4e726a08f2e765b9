package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/tool"
)

// TestNodesPageApprovesAPairing: a node asking to pair shows on the Nodes
// page with its code; a viewer's approval is refused; the owner approves
// it from the page, the node connects, and the page lists it paired,
// approved by the console's owner.
func TestNodesPageApprovesAPairing(t *testing.T) {
	t.Parallel()
	s := serveRoot(t, openRoot(t, pageYAML), true)
	reg, err := s.tb.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	hub := nodes.NewHub(reg, nodes.HubOptions{ID: "gw1"})
	if err := hub.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(hub)
	defer func() { gw.Close(); hub.Stop(context.Background()) }()
	said := make(chan string, 100)
	node := &nodes.Client{Gateways: []string{gw.URL}, StateDir: t.TempDir(), Name: "lab", Capabilities: []string{"status"},
		Say: func(f string, a ...any) {
			select {
			case said <- strings.TrimSpace(fmt.Sprintf(f, a...)):
			default:
			}
		},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Handle: func(context.Context, string, json.RawMessage, func(string)) tool.Result { return tool.Text("ok") },
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- node.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	await := func(want string) string {
		t.Helper()
		guard := time.After(30 * time.Second) // a guard against hanging, not a timing assertion
		for {
			select {
			case s := <-said:
				if strings.Contains(s, want) {
					return s
				}
			case err := <-ran:
				t.Fatalf("the node stopped (%v) before saying %q", err, want)
			case <-guard:
				t.Fatalf("the node did not say %q", want)
			}
		}
	}
	code := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(await("pairing code "), "pairing code "))[0], ":")

	viewer := client(t)
	logIn(t, s, viewer, viewerToken)
	_, page := get(t, viewer, s.srv.URL+"/nodes")
	if !strings.Contains(page, "<code>"+code+"</code>") || strings.Contains(page, "/approve\"") {
		t.Fatalf("the viewer's Nodes page lacks the code %s, or offers an approval:\n%s", code, page)
	}
	if status, _ := post(t, viewer, s.srv.URL+"/nodes/pairings/"+code+"/approve", url.Values{"csrf": {csrfOf(t, page)}}); status != http.StatusForbidden {
		t.Errorf("the viewer's approval: %d, want 403", status)
	}

	owner := client(t)
	logIn(t, s, owner, ownerToken)
	_, page = get(t, owner, s.srv.URL+"/nodes")
	if !strings.Contains(page, `action="/nodes/pairings/`+code+`/approve"`) {
		t.Fatalf("the owner's Nodes page offers no approval of %s:\n%s", code, page)
	}
	res, err := owner.PostForm(s.srv.URL+"/nodes/pairings/"+code+"/approve", url.Values{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if to, _ := url.Parse(res.Header.Get("Location")); res.StatusCode != http.StatusSeeOther || !strings.Contains(to.Query().Get("flash"), "Approved the pairing of node lab") {
		t.Errorf("the approval: %d, to %s", res.StatusCode, res.Header.Get("Location"))
	}
	await("connected to ")
	_, page = get(t, owner, s.srv.URL+"/nodes")
	page = html.UnescapeString(page)
	if !strings.Contains(page, "No node is waiting") || !strings.Contains(page, "console:owner") || !strings.Contains(page, "<code>status</code>") {
		t.Errorf("the Nodes page after the approval:\n%s", page)
	}
	res, err = owner.PostForm(s.srv.URL+"/nodes/pairings/"+code+"/reject", url.Values{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if to, _ := url.Parse(res.Header.Get("Location")); !strings.Contains(to.Query().Get("flash"), "Nothing was done") {
		t.Errorf("rejecting an answered request: %d, to %s", res.StatusCode, res.Header.Get("Location"))
	}
	n, err := reg.Nodes(context.Background())
	if err != nil || len(n) != 1 || n[0].ApprovedBy != "console:owner" {
		t.Fatalf("the paired nodes: %+v, %v", n, err)
	}

	// The owner removes the node: it is refused and stops; a viewer has no
	// Remove.
	remove := `action="/nodes/` + n[0].ID + `/remove"`
	if _, page := get(t, viewer, s.srv.URL+"/nodes"); strings.Contains(page, remove) {
		t.Errorf("the viewer's Nodes page offers a removal")
	} else if status, _ := post(t, viewer, s.srv.URL+"/nodes/"+n[0].ID+"/remove", url.Values{"csrf": {csrfOf(t, page)}}); status != http.StatusForbidden {
		t.Errorf("the viewer's removal: %d, want 403", status)
	}
	_, page = get(t, owner, s.srv.URL+"/nodes")
	if !strings.Contains(page, remove) {
		t.Fatalf("the owner's Nodes page offers no removal of %s:\n%s", n[0].ID, page)
	}
	res, err = owner.PostForm(s.srv.URL+"/nodes/"+n[0].ID+"/remove", url.Values{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if to, _ := url.Parse(res.Header.Get("Location")); res.StatusCode != http.StatusSeeOther || !strings.Contains(to.Query().Get("flash"), "Removed node lab") {
		t.Errorf("the removal: %d, to %s", res.StatusCode, res.Header.Get("Location"))
	}
	var refused *nodes.RefusedError
	if err := <-ran; !errors.As(err, &refused) || !strings.Contains(err.Error(), "the owner removed this node") {
		t.Errorf("the removed node: %v", err)
	}
	ran <- nil // for the deferred wait
	if n, err := reg.Nodes(context.Background()); err != nil || len(n) != 0 {
		t.Errorf("the paired nodes after the removal: %+v, %v", n, err)
	}
}
