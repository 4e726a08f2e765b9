package browser_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// eventually waits until cond holds, failing the test with what when it
// does not within two minutes: what it waits for happens at once or after a
// timeout of a second, on a machine however slow.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after two minutes: %s", what)
		}
	}
}

// profiles lists the profile directories under dir.
func profiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestBrowserStopsWhenUnused: with tools.browser.idleTimeout, a browser
// no call uses is stopped (no process left, its profile removed); the
// next call starts it again and says why the tabs are gone.
func TestBrowserStopsWhenUnused(t *testing.T) {
	h := newHarnessWith(t, invoke.Config{}, map[string]any{"idleTimeout": "1s"})
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	if len(chromiumLeft(h.profiles)) == 0 || len(profiles(t, h.profiles)) != 1 {
		t.Fatalf("the browser does not run with one profile: %v", profiles(t, h.profiles))
	}
	eventually(t, "the unused browser is stopped and its profile removed", func() bool {
		return len(chromiumLeft(h.profiles)) == 0 && len(profiles(t, h.profiles)) == 0
	})
	text := h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	if !strings.Contains(text, "was stopped after 1s unused (tools.browser.idleTimeout)") {
		t.Errorf("the call after the idle stop does not say why the browser started again: %s", text)
	}
}

// TestBrowserKeepsItsProfileWhenAsked: with tools.browser.keepProfile the
// end of the session kills the browser but keeps its profile, which the
// session's next browser starts with; without it the profile goes (see
// the root's TestMCPSessionEndStopsItsBrowser).
func TestBrowserKeepsItsProfileWhenAsked(t *testing.T) {
	h := newHarnessWith(t, invoke.Config{}, map[string]any{"keepProfile": true})
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	names := profiles(t, h.profiles)
	if len(names) != 1 || !strings.HasPrefix(names[0], "kept-") {
		t.Fatalf("the session's profile: %v", names)
	}
	kept := filepath.Join(h.profiles, names[0])
	marker := filepath.Join(kept, "left by the test")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Stop("s-" + t.Name()); err != nil {
		t.Fatal(err)
	}
	if left := chromiumLeft(h.profiles); len(left) > 0 {
		t.Fatalf("Chromium left after the session ended: %q", left)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the kept profile is gone: %v", err)
	}
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	if got := profiles(t, h.profiles); len(got) != 1 || got[0] != names[0] || len(chromiumLeft(h.profiles)) == 0 {
		t.Errorf("the next browser of the session does not run with its kept profile: %v", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the kept profile lost what it had: %v", err)
	}
	if text := h.ok(map[string]any{"action": "stop"}); !strings.Contains(text, "kept") {
		t.Errorf("stop does not say the profile is kept: %s", text)
	}
}

// renderers returns the renderer processes of the browsers whose profiles
// lie under dir: the processes that draw the pages.
func renderers(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte("--user-data-dir="+dir+"/")) && bytes.Contains(cmdline, []byte("--type=renderer")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestBrowserReportsACrashedTab: when the renderer of a tab dies (the
// browser itself running on), the next action on the tab says the page
// crashed and how to go on; navigating the tab again brings it back.
func TestBrowserReportsACrashedTab(t *testing.T) {
	// A call on a crashed page that waited for it would end by this timeout.
	h := newHarnessWith(t, invoke.Config{DefaultTimeout: 45 * time.Second}, nil)
	h.ok(map[string]any{"action": "open", "url": h.site.URL + "/"})
	pids := renderers(h.profiles)
	if len(pids) == 0 {
		t.Fatal("no renderer process found for the page")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	var text string
	eventually(t, "the tab is seen as crashed", func() bool {
		var msg tool.ResultMessage
		text, msg = h.call(map[string]any{"action": "snapshot"})
		return msg.IsError && strings.Contains(text, "crashed")
	})
	if !strings.Contains(text, "navigate") || !strings.Contains(text, "close") {
		t.Errorf("the crash is reported without the way forward: %s", text)
	}
	if status := h.ok(map[string]any{"action": "status"}); !strings.Contains(status, "crashed") {
		t.Errorf("status does not show the crashed tab: %s", status)
	}
	h.ok(map[string]any{"action": "navigate", "url": h.site.URL + "/"})
	if snap := h.ok(map[string]any{"action": "snapshot"}); !strings.Contains(snap, "Sign up") {
		t.Errorf("the tab navigated again does not show the page:\n%s", snap)
	}
}
