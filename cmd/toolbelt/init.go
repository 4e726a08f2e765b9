package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/config"
)

type initCmd struct {
	Dir     string `arg:"" optional:"" help:"The workspace directory to write into (default: the current directory)." placeholder:"DIR"`
	Force   bool   `help:"Overwrite an existing toolbelt.yaml (and the toolbelt entry of .mcp.json)."`
	MCPJSON bool   `name:"mcp-json" help:"Also write .mcp.json, which makes Claude Code (and other clients that read it) start toolbelt mcp for this workspace."`
}

func (c *initCmd) Run(e *env) error {
	dir, err := filepath.Abs(cmp.Or(c.Dir, "."))
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory: give an existing workspace directory", dir)
	}
	path := filepath.Join(dir, config.FileName)
	keep := false // an existing toolbelt.yaml, kept when only .mcp.json is asked for
	if _, err := os.Stat(path); err == nil && !c.Force {
		if !c.MCPJSON {
			return fmt.Errorf("%s already exists: 'toolbelt config check' checks it, 'toolbelt init --force' overwrites it", path)
		}
		keep = true
	}
	var mcpJSON []byte
	var note string
	if c.MCPJSON {
		if mcpJSON, note, err = c.mcpJSON(dir); err != nil {
			return err
		}
	}
	if keep {
		fmt.Fprintf(e.stdout, "Kept %s as it is ('toolbelt init --force' overwrites it).\n", path)
	} else {
		if err := writeFileAtomic(path, config.Template); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Wrote %s: an annotated configuration with the defaults.\n", path)
	}
	if mcpJSON != nil {
		mcpPath := filepath.Join(dir, ".mcp.json")
		if err := writeFileAtomic(mcpPath, mcpJSON); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Wrote %s: Claude Code starts toolbelt for this workspace from it.\n", mcpPath)
		if note != "" {
			fmt.Fprintf(e.stderr, "Note: %s\n", note)
		}
	}
	_, err = fmt.Fprintf(e.stdout, "Next: 'toolbelt config check' checks it, 'toolbelt serve' (HTTP) or 'toolbelt mcp' (stdio) serves the tools.\n")
	return err
}

// mcpJSON returns dir's .mcp.json with a "toolbelt" server that starts
// toolbelt mcp for dir; the other servers of an existing file are kept.
func (c *initCmd) mcpJSON(dir string) ([]byte, string, error) {
	path := filepath.Join(dir, ".mcp.json")
	doc := map[string]any{}
	switch b, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, "", err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, "", fmt.Errorf("%s is not valid JSON (%v): fix it or move it away", path, err)
		}
	}
	servers, _ := doc["mcpServers"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	if _, has := servers["toolbelt"]; has && !c.Force {
		return nil, "", fmt.Errorf("%s already has a toolbelt server: --force replaces it", path)
	}
	argv, note := stdioCommand()
	servers["toolbelt"] = map[string]any{"command": argv[0], "args": append(argv[1:], "mcp", "--workspace", dir)}
	doc["mcpServers"] = servers
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, "", err
	}
	return append(b, '\n'), note, nil
}

// installCommand installs the toolbelt command from the module proxy.
// TestGoInstall runs it against a proxy that holds this checkout.
const installCommand = "go install github.com/toolbelt/toolbelt/cmd/toolbelt@latest"

// stdioCommand returns the command line (a program and its first
// arguments) a client should run to start this toolbelt: the absolute path
// of the running executable. Under `go run` (a temporary binary, gone after
// the run) it is the toolbelt installed in PATH; without one, `go run` of
// this module's source by absolute paths (when the current directory is in
// the module), which compiles on each start, with a note saying how to
// install it; else "toolbelt" with that note.
func stdioCommand() (argv []string, note string) {
	exe, err := os.Executable()
	if err == nil && !isGoRunBinary(exe) {
		return []string{exe}, ""
	}
	if p, err := exec.LookPath("toolbelt"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return []string{abs}, ""
		}
	}
	install := "'" + installCommand + "' (or 'go install ./cmd/toolbelt' in the repository)"
	if root := moduleRoot(); root != "" {
		if goBin, err := exec.LookPath("go"); err == nil {
			if abs, err := filepath.Abs(goBin); err == nil {
				return []string{abs, "run", "-C", root, "./cmd/toolbelt"}, "this toolbelt runs from a temporary 'go run' build and none is installed in PATH, so clients start it with go run, which compiles it first; " + install + " makes it start at once"
			}
		}
	}
	return []string{"toolbelt"}, "this toolbelt runs from a temporary 'go run' build, and no toolbelt is installed in PATH: run " + install + " so that clients can start it"
}

// moduleRoot returns the directory of Toolbelt's go.mod that holds the
// current directory, or "".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			if modfile := string(b); strings.HasPrefix(modfile, "module github.com/toolbelt/toolbelt\n") || strings.Contains(modfile, "\nmodule github.com/toolbelt/toolbelt\n") {
				if _, err := os.Stat(filepath.Join(dir, "cmd", "toolbelt")); err == nil {
					return dir
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so that nothing half-written is left.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
