package main

import (
	"os"
	"os/exec"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// side is one MCP server that drives a browser, and the calls that make it
// do each measured action.
type side struct {
	name       string
	command    func() *exec.Cmd
	navigate   func(url string) *sdk.CallToolParams
	snapshot   *sdk.CallToolParams
	screenshot *sdk.CallToolParams
}

// playwright is Playwright MCP, the version pinned in package.json, on
// the given Chromium: headless, its profile in memory (--isolated), the
// viewport Toolbelt's browser uses, its files under dir.
func playwright(chromium, dir string) *side {
	out := filepath.Join(dir, "playwright")
	harness.Check(os.MkdirAll(out, 0o755))
	cli, err := filepath.Abs(filepath.Join(modules, "@playwright/mcp/cli.js"))
	harness.Check(err)
	return &side{
		name: "Playwright MCP",
		command: func() *exec.Cmd {
			cmd := exec.Command("node", cli,
				"--headless", "--isolated", "--browser", "chromium", "--executable-path", chromium,
				"--viewport-size", viewport, "--output-dir", out)
			cmd.Dir = out
			return cmd
		},
		navigate: func(url string) *sdk.CallToolParams {
			return &sdk.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": url}}
		},
		snapshot:   &sdk.CallToolParams{Name: "browser_snapshot", Arguments: map[string]any{}},
		screenshot: &sdk.CallToolParams{Name: "browser_take_screenshot", Arguments: map[string]any{"type": "png"}},
	}
}

// toolbelt is `toolbelt mcp` with its browser tool, its state under dir,
// the page server's host allowed (the browser refuses loopback
// addresses otherwise).
func toolbelt(bin, dir string) *side {
	ws := filepath.Join(dir, "workspace")
	harness.Check(os.MkdirAll(ws, 0o755))
	config := filepath.Join(dir, "toolbelt.yaml")
	harness.Check(os.WriteFile(config, []byte("tools:\n  browser:\n    allowHosts: [\"127.0.0.1\"]\n"), 0o644))
	return &side{
		name: "Toolbelt",
		command: func() *exec.Cmd {
			cmd := exec.Command(bin, "mcp", "--workspace", ws)
			cmd.Env = append(os.Environ(), "TOOLBELT_CONFIG="+config, "TOOLBELT_DATA="+filepath.Join(dir, "data"),
				"XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
			return cmd
		},
		navigate: func(url string) *sdk.CallToolParams {
			return &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "navigate", "url": url}}
		},
		snapshot:   &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "snapshot"}},
		screenshot: &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "screenshot", "type": "png"}},
	}
}
