package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/internal/closest"
)

// mcpClient is an MCP client whose configuration toolbelt init writes: a
// JSON file with the servers it starts under one key.
type mcpClient struct {
	name  string // as --client takes it
	label string // as people know it
	// file returns where the client reads its servers for the workspace
	// dir.
	file func(dir string) (string, error)
	// key holds the servers: mcpServers, or servers for VS Code.
	key string
	// typed says whether the client's entries say "type": "stdio".
	typed bool
}

// mcpClients are the clients init --client knows, by the name it takes.
var mcpClients = []mcpClient{
	{name: "claude-code", label: "Claude Code", file: inWorkspace(".mcp.json"), key: "mcpServers", typed: true},
	{name: "claude-desktop", label: "Claude Desktop", file: claudeDesktopFile, key: "mcpServers"},
	{name: "cursor", label: "Cursor", file: inWorkspace(".cursor", "mcp.json"), key: "mcpServers", typed: true},
	{name: "vscode", label: "VS Code", file: inWorkspace(".vscode", "mcp.json"), key: "servers", typed: true},
}

// lookupClient returns the client named name, or an error that names the
// clients (and the closest).
func lookupClient(name string) (mcpClient, error) {
	var names []string
	for _, c := range mcpClients {
		if c.name == strings.ToLower(name) {
			return c, nil
		}
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("--client %q: toolbelt writes the configuration of %s", name, strings.Join(names, ", "))
	if close := closest.Names(name, names, 1); len(close) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", close[0])
	}
	return mcpClient{}, errors.New(msg)
}

// inWorkspace returns the file at elem in the workspace.
func inWorkspace(elem ...string) func(string) (string, error) {
	return func(dir string) (string, error) {
		return filepath.Join(append([]string{dir}, elem...)...), nil
	}
}

// claudeDesktopFile is Claude Desktop's configuration, in the user's
// config directory (~/Library/Application Support/Claude on macOS,
// %APPDATA%\Claude on Windows, ~/.config/Claude elsewhere): one for every
// workspace.
func claudeDesktopFile(string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("claude-desktop: %w", err)
	}
	return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
}

// serverEntry is the client's entry that starts argv (a stdio server).
func (c mcpClient) serverEntry(argv []string) map[string]any {
	entry := map[string]any{"command": argv[0], "args": argv[1:]}
	if c.typed {
		entry["type"] = "stdio"
	}
	return entry
}

// configure returns the content of the client's file at path with a
// "toolbelt" server that runs argv: the file's other servers and keys
// are kept. A file that is not valid JSON is refused, and so is an
// existing toolbelt entry unless force.
func (c mcpClient) configure(path string, argv []string, force bool) ([]byte, error) {
	doc := map[string]any{}
	switch b, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s is not valid JSON (%v): fix it or move it away", path, err)
		}
	}
	if doc == nil { // the file says null
		doc = map[string]any{}
	}
	servers, ok := doc[c.key].(map[string]any)
	if !ok && doc[c.key] != nil {
		return nil, fmt.Errorf("%s: %s is not an object of servers: fix it or move the file away", path, c.key)
	}
	if servers == nil {
		servers = map[string]any{}
	}
	if _, has := servers["toolbelt"]; has && !force {
		return nil, fmt.Errorf("%s already has a toolbelt server: --force replaces it", path)
	}
	servers["toolbelt"] = c.serverEntry(argv)
	doc[c.key] = servers
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
