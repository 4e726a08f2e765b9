package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/config"
)

type initCmd struct {
	Dir      string   `arg:"" optional:"" help:"The workspace directory to write into (default: the current directory)." placeholder:"DIR"`
	Provider string   `help:"The model provider 'toolbelt run' uses: ollama, llamacpp, vllm, lmstudio (local servers), anthropic, openai, google, …" placeholder:"NAME"`
	Model    string   `help:"The model, as the provider names it (or PROVIDER/MODEL)." placeholder:"NAME"`
	BaseURL  string   `name:"base-url" help:"Where the provider is reached (default: its usual address, http://localhost:11434/v1 for Ollama)." placeholder:"URL"`
	NoTest   bool     `name:"no-test" help:"Write the model without testing the connection to it."`
	Yes      bool     `short:"y" help:"Ask nothing, even at a terminal: what the flags leave out is left out."`
	Client   []string `name:"client" sep:"," help:"Also write the MCP configuration of a client, which then starts toolbelt mcp for this workspace: claude-code (.mcp.json), claude-desktop (its claude_desktop_config.json), cursor (.cursor/mcp.json), vscode (.vscode/mcp.json). Repeatable." placeholder:"NAME"`
	MCPJSON  bool     `name:"mcp-json" help:"The same as --client claude-code."`
	Force    bool     `help:"Overwrite an existing toolbelt.yaml (and the toolbelt entry of a client's configuration)."`
}

// clientFile is a client's configuration file and what init writes there.
type clientFile struct {
	client mcpClient
	path   string
	data   []byte
}

func (c *initCmd) Run(e *env) error {
	dir, err := filepath.Abs(cmp.Or(c.Dir, "."))
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory: give an existing workspace directory", dir)
	}
	given, err := c.chooseFromFlags()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, config.FileName)
	keep := false // an existing toolbelt.yaml, kept when only a client's configuration is asked for
	if _, err := os.Stat(path); err == nil && !c.Force {
		if given != nil || len(c.Client) == 0 && !c.MCPJSON {
			return fmt.Errorf("%s already exists: 'toolbelt config check' checks it, 'toolbelt init --force' overwrites it", path)
		}
		keep = true
	}
	files, note, err := c.clientFiles(dir)
	if err != nil {
		return err
	}
	choice := given
	if !keep && !c.Yes && personAt(e.stdin) {
		if choice, err = c.askModel(asker{bufio.NewReader(e.stdin), e.stdout}, given); err != nil {
			return err
		}
	}
	if choice != nil {
		if err := choice.complete(); err != nil {
			return err
		}
	}
	if choice != nil && !c.NoTest {
		if err := c.test(e, *choice); err != nil {
			return err
		}
	}
	if keep {
		fmt.Fprintf(e.stdout, "Kept %s as it is ('toolbelt init --force' overwrites it).\n", path)
	} else if err := writeInitConfig(e, path, choice); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return err
		}
		if err := writeFileAtomic(f.path, f.data); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Wrote %s: %s starts toolbelt for this workspace from it.\n", f.path, f.client.label)
	}
	if note != "" {
		fmt.Fprintf(e.stderr, "Note: %s\n", note)
	}
	next := "Next: 'toolbelt config check' checks it, 'toolbelt serve' (HTTP) or 'toolbelt mcp' (stdio) serves the tools."
	if choice != nil {
		next = "Next: 'toolbelt run \"What is in this folder?\"' asks " + choice.spec() + ", with the tools; 'toolbelt mcp' (stdio) or 'toolbelt serve' (HTTP) serves them to MCP clients."
	}
	_, err = fmt.Fprintln(e.stdout, next)
	return err
}

// writeInitConfig writes the annotated template, with the model when one was
// chosen.
func writeInitConfig(e *env, path string, choice *modelChoice) error {
	data, what := config.Template, "an annotated configuration with the defaults"
	if choice != nil {
		data = append(slices.Clip(data), modelSection(*choice)...)
		what = "an annotated configuration with the model " + choice.spec() + " and an example agent"
		if _, err := config.Parse(path, data); err != nil { // a model name YAML cannot hold as written
			return fmt.Errorf("the configuration for %s does not load: %v", choice.spec(), err)
		}
	}
	if err := writeFileAtomic(path, data); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "Wrote %s: %s.\n", path, what)
	return err
}

// test tests the connection to the chosen model. At a terminal a failure
// asks whether to write the model all the same; otherwise it is an error.
func (c *initCmd) test(e *env, m modelChoice) error {
	fmt.Fprintf(e.stdout, "Testing %s: a one-line request…\n", m.spec())
	err := testModel(context.Background(), m)
	if err == nil {
		_, err := fmt.Fprintf(e.stdout, "%s answered.\n", m.spec())
		return err
	}
	fmt.Fprintf(e.stdout, "%s did not answer: %v\n", m.spec(), err)
	if !c.Yes && personAt(e.stdin) {
		ok, err := asker{bufio.NewReader(e.stdin), e.stdout}.yes("Write it all the same?")
		if err != nil || ok {
			return err
		}
	}
	return errors.New("the connection test failed, nothing written: fix what it says, or write the model untested with --no-test")
}

// clientFiles returns the client configurations init is asked to write,
// and a note about the command they start (stdioCommand).
func (c *initCmd) clientFiles(dir string) ([]clientFile, string, error) {
	names := c.Client
	if c.MCPJSON {
		names = append(names, "claude-code")
	}
	var files []clientFile
	var argv []string
	var note string
	for _, name := range names {
		client, err := lookupClient(name)
		if err != nil {
			return nil, "", err
		}
		if slices.ContainsFunc(files, func(f clientFile) bool { return f.client.name == client.name }) {
			continue
		}
		if argv == nil {
			argv, note = stdioCommand()
			argv = append(argv, "mcp", "--workspace", dir)
		}
		path, err := client.file(dir)
		if err != nil {
			return nil, "", err
		}
		data, err := client.configure(path, argv, c.Force)
		if err != nil {
			return nil, "", err
		}
		files = append(files, clientFile{client, path, data})
	}
	return files, note, nil
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
// directory, so that nothing half-written is left; a file it replaces keeps
// its permissions, a new one is 0644.
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm() // a file kept private stays so
	}
	return writeFileMode(path, data, mode)
}

// writeFileMode writes data to path atomically, as writeFileAtomic does,
// with permissions mode.
func writeFileMode(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
