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
	http       bool // the server prints its MCP endpoint's URL; stdio otherwise
	navigate   func(url string) *sdk.CallToolParams
	snapshot   *sdk.CallToolParams
	screenshot *sdk.CallToolParams
}

// playwright is Playwright MCP, the version pinned in package.json, on
// the given Chromium: headless, its profile in memory (--isolated), the
// size of Toolbelt's browser window as its viewport, its files under dir.
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

// install is a Toolbelt binary with its state, workspace and configuration
// under dir: the page server's host allowed to the browser (which refuses
// loopback addresses otherwise).
type install struct{ bin, dir, ws, config string }

func newInstall(bin, dir string) install {
	t := install{bin: bin, dir: dir, ws: filepath.Join(dir, "workspace"), config: filepath.Join(dir, "toolbelt.yaml")}
	harness.Check(os.MkdirAll(t.ws, 0o755))
	harness.Check(os.WriteFile(t.config, []byte("tools:\n  browser:\n    allowHosts: [\"127.0.0.1\"]\n"), 0o644))
	return t
}

// command is toolbelt with args, run with t's state and configuration.
func (t install) command(args ...string) *exec.Cmd {
	cmd := exec.Command(t.bin, args...)
	cmd.Env = harness.Env(t.dir, t.config)
	return cmd
}

// toolbelt is `toolbelt mcp` of t, with its browser tool.
func toolbelt(t install) *side {
	return &side{
		name:    "Toolbelt",
		command: func() *exec.Cmd { return t.command("mcp", "--workspace", t.ws) },
		navigate: func(url string) *sdk.CallToolParams {
			return &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "navigate", "url": url}}
		},
		snapshot:   &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "snapshot"}},
		screenshot: &sdk.CallToolParams{Name: "browser", Arguments: map[string]any{"action": "screenshot", "type": "png"}},
	}
}

// canvasServer is `toolbelt serve` of t on a free port of 127.0.0.1, with
// no token (loopback requests come in as the owner): `toolbelt mcp` on
// stdio serves no canvas, serve does (at /canvas/), and its MCP endpoint
// is reached over streamable HTTP.
func canvasServer(t install) *side {
	return &side{
		name:    "Toolbelt (serve)",
		http:    true,
		command: func() *exec.Cmd { return t.command("serve", "--addr", "127.0.0.1:0", "--workspace", t.ws) },
	}
}
