// Package chromium finds the distribution's Chromium and gives the flags
// Toolbelt starts it with, headless: the browser tool's sessions and the
// tests that drive the console in a browser start it the same way.
package chromium

import (
	"errors"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// Install is the command that installs Chromium on Debian (.ci/run runs it).
const Install = "apt-get install chromium"

// ErrMissing is the error of a machine without Chromium; it says how to
// install it.
var ErrMissing = errors.New("chromium is not installed (Debian: " + Install + ")")

// Path returns the path of the chromium program on PATH, or ErrMissing.
func Path() (string, error) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		return "", ErrMissing
	}
	return path, nil
}

// Options are the allocator options of a headless Chromium at path with
// the profile directory profile: no first-run pages, no background
// traffic (component updates, sync, QUIC probes), a 1280×900 window.
func Options(path, profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900),
	}
}
