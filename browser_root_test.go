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

	"github.com/toolbelt/toolbelt/internal/chromium"
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

// msgText joins the text blocks of a result message.
func msgText(msg tool.ResultMessage) string {
	var parts []string
	for _, c := range msg.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// processesUsing returns the processes whose command line names a
// profile under dir.
func processesUsing(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.Contains(cmdline, []byte("--user-data-dir="+dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
