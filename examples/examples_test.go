// Package examples_test builds every example program and runs it, checking
// what it prints, so the examples the docs point to keep working.
package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// programs are the example programs, and the CLI the client example
// starts.
var programs = []string{"./examples/typed-tool", "./examples/embed", "./examples/hook", "./examples/mcp-server", "./examples/import", "./examples/client", "./examples/audit-tamper", "./examples/async-video/api", "./examples/landing-page/pagetools", "./cmd/toolbelt"}

// bin builds every program once and returns the path of the named one.
func bin(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "toolbelt-examples-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", append([]string{"build", "-o", binDir + string(filepath.Separator)}, programs...)...)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// workspace copies the demo workspace to a temp dir.
func workspace(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	files, err := filepath.Glob(filepath.Join("workspace", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// run runs a program with a timeout, in a scratch home, and returns its
// standard output; a failure or a non-zero exit fails the test.
func run(t *testing.T, path string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(path), args, err, out, stderr.String())
	}
	return string(out)
}

func contains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}

func TestTypedTool(t *testing.T) {
	t.Parallel()
	out := run(t, bin(t, "typed-tool"))
	want := `call_1 (error: false)
Lisbon: sunny for 1 day(s), 21 degrees celsius

call_2 (error: false)
Oslo: sunny for 3 day(s), 21 degrees celsius

call_3 (error: true)
{"status":"error","tool":"get_weather","error":"Validation failed for tool \"get_weather\":\n  - (root): unknown property \"unit\" is not allowed; did you mean \"units\"?\n  - days: maximum: got 30, want at most 7\nReceived arguments:\n{\n  \"city\": \"Paris\",\n  \"days\": 30,\n  \"unit\": \"kelvin\"\n}"}

call_4 (error: true)
{"status":"error","tool":"get_wether","error":"Tool \"get_wether\" not found. Did you mean \"get_weather\"? Call one of the tools you were given, spelled exactly."}

`
	if out != want {
		t.Errorf("typed-tool printed:\n%s\nwant:\n%s", out, want)
	}
}

func TestHook(t *testing.T) {
	t.Parallel()
	out := run(t, bin(t, "hook"))
	contains(t, out,
		// small-pages rewrote the parameters: one line at a time.
		"call_1 (error: false)\nbuy milk\n\n[Showing lines 1-1 of 2. Use offset=2 to continue.]\n",
		// no-env-files blocked the call; the after hook never saw it.
		`call_2 (error: true)
{"status":"blocked","tool":"read","reason":"Environment files hold secrets; ask the user for the value you need."}`,
		`after_tool_call: read map[limit:1 path:notes.txt] error=""`)
	if strings.Count(out, "after_tool_call") != 1 {
		t.Errorf("the after hook should see only the call that ran:\n%s", out)
	}
}

// TestImport runs the import example against the MCP server example, so
// both are exercised: the server over stdio, the import through the
// pipeline.
func TestImport(t *testing.T) {
	t.Parallel()
	out := run(t, bin(t, "import"), bin(t, "mcp-server"), workspace(t))
	contains(t, out,
		"words__read          mcp  low\n",
		"words__word_count    mcp  low\n",
		"words__write         mcp  medium\n",
		"call_1 words__word_count (error: false)\n3 words\n",
		"call_2 words__grep (error: false)\ngreet.go:3:func greeting(name string) string {\nmain.go:5:func main() {\n",
		"call_3 words__word_count (error: true)\n{\"status\":\"error\",\"tool\":\"words__word_count\",",
		`unknown property \"txt\" is not allowed; did you mean \"text\"?`)
}

func TestClient(t *testing.T) {
	t.Parallel()
	bin(t, "toolbelt")
	out := run(t, bin(t, "client"), workspace(t))
	contains(t, out,
		"tools: apply_patch ask_user browser edit exec find grep ls memory_get memory_search process read result_read todo_write tts web_fetch write\n",
		"grep (error: false)\ngreet.go:3:func greeting(name string) string {\nmain.go:6:\tfmt.Println(greeting(\"world\"))\n",
		"read (error: true)\n",
		`the path climbs above the workspace root`)
}

// TestAuditTamper records a call with the CLI, edits its audit record with
// the example, and checks that `toolbelt audit verify` finds the edit.
func TestAuditTamper(t *testing.T) {
	t.Parallel()
	tb := bin(t, "toolbelt")
	ws, data := workspace(t), t.TempDir()
	cli := func(args ...string) (string, error) {
		cmd := exec.Command(tb, args...)
		cmd.Env = append(os.Environ(), "TOOLBELT_DATA="+data, "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli("call", "--workspace", ws, "read", "--args", `{"path":"greet.go"}`); err != nil {
		t.Fatalf("call: %v\n%s", err, out)
	}
	if out, err := cli("audit", "verify"); err != nil || !strings.Contains(out, "1 records, chain intact") && !strings.Contains(out, "1 record, chain intact") {
		t.Fatalf("verify before: %v\n%s", err, out)
	}
	run(t, bin(t, "audit-tamper"), filepath.Join(data, "toolbelt.db"), "1", "greet.go", "main.go")
	out, err := cli("audit", "verify")
	if err == nil || !strings.Contains(out, "Chain broken at record 1: edited") {
		t.Fatalf("verify after the edit: %v\n%s", err, out)
	}
}

// TestEveryExampleIsBuilt: each example program under examples/ is in
// programs, so it is built (and the tests above run it); the demo
// workspace, a module of its own, builds and runs too.
func TestEveryExampleIsBuilt(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
			return filepath.SkipDir // another module: the demo workspace, below
		}
		mains, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range mains {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if strings.HasPrefix(string(b), "package main\n") || strings.Contains(string(b), "\npackage main\n") {
				if want := "./examples/" + filepath.ToSlash(path); !slices.Contains(programs, want) {
					t.Errorf("%s is an example program that is not in programs: add it there and run it in a test", want)
				}
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".")
	cmd.Dir = workspace(t)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "Hello, world!\n" {
		t.Errorf("the demo workspace: go run .: %v\n%s", err, out)
	}
}
