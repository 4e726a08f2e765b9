package toolbelt_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/internal/chromium"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/browser"
)

// TestRootRunsTheBrowserInItsDataDirAndKillsItOnClose: the root offers
// the browser tool; a page on loopback that no setting allows is refused,
// one the program vouches for (Capture, as the canvas does) is pictured;
// the session's profile lies in the data directory's browser folder, and
// after Close no process uses it.
func TestRootRunsTheBrowserInItsDataDirAndKillsItOnClose(t *testing.T) {
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error())
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<!doctype html><title>Preview</title><h1>Preview</h1>")
	}))
	defer site.Close()
	tb, _, data := open(t, nil)
	msg := call(t, tb, "b-1", "browser", `{"action":"open","url":"`+site.URL+`/"}`)
	if !msg.IsError || !strings.Contains(msgText(msg), "refused") {
		t.Errorf("a loopback page no setting allows: %+v", msg.Content)
	}
	png, err := tb.Browser().Capture(context.Background(), "", site.URL+"/", browser.CaptureOptions{Width: 640, Height: 480})
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("capturing the preview: %v", err)
	}
	profiles := filepath.Join(data, "browser")
	if entries, err := os.ReadDir(profiles); err != nil || len(entries) != 1 {
		t.Fatalf("the data directory's browser folder: %v, %v", entries, err)
	}
	if len(processesUsing(profiles)) == 0 {
		t.Fatal("no Chromium runs with a profile in the data directory: the check after Close would prove nothing")
	}
	if err := tb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := processesUsing(profiles); len(left) > 0 {
		t.Errorf("processes left after Close: %v", left)
	}
}

// TestMCPSessionEndStopsItsBrowser: the browser of a real MCP client's
// session over HTTP is stopped once the client closes the session: no
// process uses its profile any more, and the profile is removed; the
// other session's browser runs on.
func TestMCPSessionEndStopsItsBrowser(t *testing.T) {
	if _, err := chromium.Path(); err != nil {
		t.Skip(err.Error())
	}
	data := t.TempDir()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Workspace: t.TempDir(), DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	srv, err := tb.MCPServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.Handler(mcp.HTTPOptions{}))
	t.Cleanup(ts.Close)
	profiles := filepath.Join(data, "browser")
	var sessions []*sdk.ClientSession
	for range 2 {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "browsing", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "start"}})
		if err != nil || res.IsError {
			t.Fatalf("starting the browser: %v %+v", err, res)
		}
		sessions = append(sessions, cs)
	}
	before, _ := os.ReadDir(profiles)
	if len(before) != 2 {
		t.Fatalf("the two sessions' profiles: %v", before)
	}
	if err := sessions[0].Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		after, _ := os.ReadDir(profiles)
		if len(after) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two minutes after its session closed, the profiles are %v", after)
		}
	}
	after, _ := os.ReadDir(profiles)
	gone := before[0]
	if after[0].Name() == gone.Name() {
		gone = before[1]
	}
	if left := processesUsing(filepath.Join(profiles, gone.Name())); len(left) > 0 {
		t.Errorf("processes of the closed session's browser left: %v", left)
	}
	if len(processesUsing(filepath.Join(profiles, after[0].Name()))) == 0 {
		t.Error("the open session's browser was stopped too")
	}
}

// msgText joins the text blocks of a result message.
func msgText(msg tool.ResultMessage) string {
	var parts []string
	for _, c := range msg.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// processesUsing returns the processes whose command line names dir or a
// profile under it.
func processesUsing(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.Contains(cmdline, []byte("--user-data-dir="+dir+"/")) || bytes.Contains(cmdline, []byte("--user-data-dir="+dir+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
