package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
)

type mcpAddCmd struct {
	Name    string   `arg:"" help:"The server's name: its tools are offered as NAME__TOOL." placeholder:"NAME"`
	Command []string `arg:"" optional:"" help:"After --: the command that starts a stdio server, and its arguments." placeholder:"COMMAND"`
	URL     string   `name:"url" help:"The endpoint of an HTTP server (streamable HTTP) instead of a command." placeholder:"URL"`
	Header  []string `name:"header" sep:"none" help:"A header sent to an HTTP server, K=V; a value may read environment variables as in toolbelt.yaml. Repeatable." placeholder:"K=V"`
	Env     []string `name:"env" sep:"none" help:"An environment variable of a stdio server, K=V; a value may read Toolbelt's environment variables as in toolbelt.yaml. Repeatable." placeholder:"K=V"`
	NoCheck bool     `name:"no-check" help:"Do not start the server to check it."`
}

// serverEntry is an imported server as mcp add writes it, keys in the
// order people read them.
type serverEntry struct {
	Command string            `yaml:"command,omitempty"`
	Args    []string          `yaml:"args,omitempty"`
	Env     map[string]string `yaml:"env,omitempty"`
	URL     string            `yaml:"url,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
}

func (c *mcpAddCmd) Run(e *env) error {
	entry, err := c.entry()
	if err != nil {
		return err
	}
	path, err := config.Find(e.configPath)
	if err != nil {
		return err
	}
	data := config.Template // no file yet: a new one, annotated
	if path == "" {
		path = config.FileName
	} else if data, err = os.ReadFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := addServer(path, data, c.Name, entry)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Added the MCP server %s to %s.\n", c.Name, path)
	if c.NoCheck {
		return nil
	}
	return c.check(e, path)
}

// entry is the server the flags describe.
func (c *mcpAddCmd) entry() (serverEntry, error) {
	env, err := keyValues("--env", c.Env)
	if err != nil {
		return serverEntry{}, err
	}
	headers, err := keyValues("--header", c.Header)
	if err != nil {
		return serverEntry{}, err
	}
	switch {
	case c.URL != "" && len(c.Command) > 0:
		return serverEntry{}, errors.New("give either a command (after --) or --url, not both")
	case c.URL != "":
		if len(env) > 0 {
			return serverEntry{}, errors.New("--env is for a stdio server (a command); an HTTP server takes --header")
		}
		return serverEntry{URL: c.URL, Headers: headers}, nil
	case len(c.Command) > 0:
		if len(headers) > 0 {
			return serverEntry{}, errors.New("--header is for an HTTP server (--url); a stdio server takes --env")
		}
		return serverEntry{Command: c.Command[0], Args: c.Command[1:], Env: env}, nil
	}
	return serverEntry{}, fmt.Errorf("say how to reach %s: 'toolbelt mcp add %s -- COMMAND ARGS…' (stdio) or 'toolbelt mcp add %s --url URL' (HTTP)", c.Name, c.Name, c.Name)
}

// keyValues reads K=V flags.
func keyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s %q: write it as NAME=VALUE", flag, kv)
		}
		m[strings.TrimSpace(k)] = v
	}
	return m, nil
}

// addServer returns the configuration data (of the file at path) with the
// server name added under mcpServers: the rest of the file, comments and
// order, stays as it was. A name in use is refused, and so is a result
// that would not load.
func addServer(path string, data []byte, name string, entry serverEntry) ([]byte, error) {
	file, err := parser.ParseBytes(data, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: fix it first ('toolbelt config check')", path, err)
	}
	top := topLevel(file)
	i := slices.IndexFunc(top, func(mv *ast.MappingValueNode) bool { return mv.Key.GetToken().Value == "mcpServers" })
	lines := strings.SplitAfter(string(data), "\n")
	var at, indent int // where the entry goes (a line index) and its indentation
	switch {
	case i < 0:
		if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines, "\nmcpServers:\n")
		at, indent = len(lines), 2
	default:
		servers := top[i]
		switch v := servers.Value.(type) {
		case *ast.NullNode:
			at, indent = servers.Key.GetToken().Position.Line, 2
		case *ast.MappingNode:
			if v.IsFlowStyle {
				return nil, fmt.Errorf("%s:%d: mcpServers is written on one line ({…}): write it as a block to add a server", path, servers.Key.GetToken().Position.Line)
			}
			for _, s := range v.Values {
				if s.Key.GetToken().Value == name {
					return nil, fmt.Errorf("%s:%d: there is an MCP server %s already: remove it first, or choose another name", path, s.Key.GetToken().Position.Line, name)
				}
			}
			indent = v.Values[0].Key.GetToken().Position.Column - 1
			at = len(lines)
			if i+1 < len(top) {
				at = top[i+1].Key.GetToken().Position.Line - 1
			}
			at = endOfBlock(lines, at)
		case *ast.MappingValueNode: // one server
			if v.Key.GetToken().Value == name {
				return nil, fmt.Errorf("%s:%d: there is an MCP server %s already: remove it first, or choose another name", path, v.Key.GetToken().Position.Line, name)
			}
			indent = v.Key.GetToken().Position.Column - 1
			at = len(lines)
			if i+1 < len(top) {
				at = top[i+1].Key.GetToken().Position.Line - 1
			}
			at = endOfBlock(lines, at)
		default:
			return nil, fmt.Errorf("%s:%d: mcpServers is not a mapping of servers: fix it first ('toolbelt config check')", path, servers.Key.GetToken().Position.Line)
		}
	}
	text, err := entryText(name, entry, indent)
	if err != nil {
		return nil, err
	}
	out := []byte(strings.Join(slices.Insert(lines, at, text), ""))
	cfg, err := config.Parse(path, out)
	if err != nil {
		return nil, fmt.Errorf("with %s added, the configuration would not load: %v", name, err)
	}
	if _, ok := cfg.MCPServers[name]; !ok {
		return nil, fmt.Errorf("%s: the server %s did not land under mcpServers", path, name)
	}
	return out, nil
}

// topLevel returns the keys of the file's first document.
func topLevel(file *ast.File) []*ast.MappingValueNode {
	if len(file.Docs) == 0 {
		return nil
	}
	switch body := file.Docs[0].Body.(type) {
	case *ast.MappingNode:
		return body.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{body}
	}
	return nil
}

// endOfBlock returns where a block that ends before line at (an index)
// really ends: before the blank lines and unindented comments that lead
// to what follows.
func endOfBlock(lines []string, at int) int {
	for at > 0 {
		l := strings.TrimRight(lines[at-1], "\r\n")
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			break
		}
		at--
	}
	return at
}

// entryText is the server's YAML, indented by indent spaces.
func entryText(name string, entry serverEntry, indent int) (string, error) {
	b, err := yaml.MarshalWithOptions(yaml.MapSlice{{Key: name, Value: entry}}, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return "", err
	}
	pad := strings.Repeat(" ", indent)
	var out strings.Builder
	for line := range strings.Lines(string(b)) {
		out.WriteString(pad + line)
	}
	return out.String(), nil
}

// check starts the configured servers, as toolbelt mcp servers does, and
// says how the new one fared; one that did not start is exit code 1.
func (c *mcpAddCmd) check(e *env, path string) error {
	e.configPath, e.cfg = path, nil
	if _, err := e.registry(); err != nil {
		return err
	}
	for _, s := range e.tb.ImportStatus() {
		if s.Name != c.Name {
			continue
		}
		if s.State == client.StateReady {
			sep := cmp.Or(e.cfg.MCP.Separator, config.DefaultMCPSeparator)
			_, err := fmt.Fprintf(e.stdout, "%s started: %d tools, offered as %s%sTOOL.\n", c.Name, s.Tools, c.Name, sep)
			return err
		}
		fmt.Fprintf(e.stderr, "%s did not start (%s): %s\nIt stays in %s: fix it there, or remove it; 'toolbelt mcp servers' shows the state of every server.\n", c.Name, s.State, s.LastError, path)
		return exitCode(exitToolError)
	}
	return fmt.Errorf("%s is not among the servers toolbelt started from %s", c.Name, path)
}
