package docs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/doctest"
	"github.com/toolbelt/toolbelt/internal/storetest"
)

var update = flag.Bool("update", false, "rewrite the expected output of console blocks that do not match")

// root is the repository, seen from this package's directory.
const root = ".."

// documents returns the Markdown files whose examples are tested.
func documents(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "examples", "README.md")}, files...)
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// toolbelt builds the CLI once for all documents and returns the directory
// that holds it.
func toolbelt(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "toolbelt-docs-bin-")
		if buildErr != nil {
			return
		}
		// The version a build gets depends on where it is built (a git
		// clone stamps a pseudo-version, a worktree or a tarball "dev"):
		// this one is set, so a page that shows one fails everywhere,
		// not only in a fresh clone. Pages show versions as "…".
		cmd := exec.Command("go", "build", "-ldflags=-X main.version=v0.0.0-doctest", "-o", filepath.Join(binDir, "toolbelt"), "./cmd/toolbelt")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/toolbelt: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestExamples runs every console block of the README and of docs/*.md:
// each document as a new user (a fresh home directory) in a copy of the
// repository outside it, where its first block starts, with the CLI just
// built on PATH. An example whose output drifts from what the document
// shows fails; `go test ./docs -update` rewrites the expected output.
func TestExamples(t *testing.T) {
	bin := toolbelt(t)
	for _, file := range documents(t) {
		name := strings.TrimPrefix(file, root+string(filepath.Separator))
		if file == "README.md" {
			name = "docs/README.md" // not the repository's
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := doctest.Parse(string(raw))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(blocks) == 0 {
				// Nothing to run is not a skip: skips are kept for
				// examples that need what this machine lacks.
				t.Logf("%s has no console examples", name)
				return
			}
			u := newScratch(t)
			s := &doctest.Session{
				Dir:     u.checkout,
				Env:     u.env(t, bin+string(os.PathListSeparator)+os.Getenv("PATH")),
				Replace: []string{u.tmp, "$TMPDIR", u.home, "~", u.work, "$WORK"},
				State:   filepath.Join(u.work, "exported.sh"),
			}
			outputs := make([][][]string, len(blocks))
			changed := false
			for bi, b := range blocks {
				t.Run(fmt.Sprintf("line%d", b.Line), func(t *testing.T) {
					if reason := b.Skip(); reason != "" {
						t.Skipf("%s:%d: %s", name, b.Line, reason)
					}
					if b.Postgres() {
						demoPostgres(t)
					}
					if b.Model() {
						demoModel(t)
					}
					for _, need := range b.Needs() {
						if _, err := exec.LookPath(need); err != nil {
							t.Skipf("%s:%d needs %s, which is not installed (.ci/run installs it)", name, b.Line, need)
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					results, err := s.Run(ctx, b)
					if err != nil {
						t.Fatalf("%s:%d: %v", name, b.Line, err)
					}
					outputs[bi] = make([][]string, len(b.Commands))
					for ci, r := range results {
						c := b.Commands[ci]
						if doctest.Match(c.Want, r.Got) {
							continue
						}
						outputs[bi][ci] = r.Got
						changed = true
						if !*update {
							t.Errorf("%s:%d: %s\nthe document shows:\n%s\nit prints:\n%s", name, b.Line,
								strings.Join(c.Display, "\n"), indent(c.Want), indent(r.Got))
						}
					}
				})
			}
			if *update && changed {
				if err := os.WriteFile(file, []byte(doctest.Rewrite(string(raw), blocks, outputs)), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("rewrote the expected output in %s", name)
			}
		})
	}
}

func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    | " + l + "\n")
	}
	return b.String()
}

// goFence finds a Go code block.
var goFence = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// TestGoSnippets checks that each Go code block of the documents is an
// excerpt of a Go file in the repository (an example program, an Example
// function), which the build and the tests check; a snippet that drifts
// from the code fails here.
func TestGoSnippets(t *testing.T) {
	var sources []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources = append(sources, squash(string(b)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range documents(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goFence.FindAllStringSubmatchIndex(string(raw), -1) {
			snippet := squash(string(raw)[m[2]:m[3]])
			line := strings.Count(string(raw)[:m[0]], "\n") + 1
			if !slices.ContainsFunc(sources, func(src string) bool { return strings.Contains(src, snippet) }) {
				t.Errorf("%s:%d: this Go snippet is not an excerpt of any Go file in the repository; copy it from the example it shows:\n%s", file, line, string(raw)[m[2]:m[3]])
			}
		}
	}
}

// squash trims every line and drops empty ones, so an excerpt matches
// whatever its indentation in the file.
func squash(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return "\n" + strings.Join(out, "\n") + "\n"
}

// link finds a Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headings returns the GitHub anchors of a Markdown document's headings.
func headings(doc string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("—–…×→’“”", r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

// TestLinks checks that every relative link of the documents leads to a
// file that exists and, for a heading, to one the file has.
func TestLinks(t *testing.T) {
	for _, file := range documents(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: the link %s leads nowhere: %v", file, target, err)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: the link %s: %v", file, target, err)
				continue
			}
			if !headings(string(b))[anchor] {
				t.Errorf("%s: the link %s names a heading %s does not have", file, target, dest)
			}
		}
	}
}

// TestTranscriptsAreExamples checks that every block that looks like a
// terminal session (its first line a "$ " command) is a console example,
// run by TestExamples or skipped with a reason, never an untested text.
func TestTranscriptsAreExamples(t *testing.T) {
	fence := regexp.MustCompile("(?m)^(```+)([^\n`]*)\n((?:.*\n)*?)^```+\\s*$")
	for _, file := range documents(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllStringSubmatchIndex(string(raw), -1) {
			info := string(raw)[m[4]:m[5]]
			body := string(raw)[m[6]:m[7]]
			if strings.HasPrefix(info, "console") || strings.HasPrefix(info, "markdown") || !strings.HasPrefix(body, "$ ") {
				continue
			}
			line := strings.Count(string(raw)[:m[0]], "\n") + 1
			t.Errorf("%s:%d: a terminal session in a %q block is not tested: make it a console block (see docs/development.md)", file, line, info)
		}
	}
}

// yamlFence finds a YAML code block and its info string.
var yamlFence = regexp.MustCompile("(?ms)^```yaml([^\n]*)\n(.*?)^```")

// TestYAMLExamples checks every YAML block of the documents as a
// toolbelt.yaml: config.Parse must accept it (syntax, keys, types, where
// each key belongs), and `toolbelt config check` must pass it (tool
// settings, tool references) unless it imports MCP servers, which the check
// would start. A block whose info string says "continues" is checked
// together with the document's previous YAML block, as one file.
func TestYAMLExamples(t *testing.T) {
	bin := filepath.Join(toolbelt(t), "toolbelt")
	for _, file := range documents(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		prev := ""
		for _, m := range yamlFence.FindAllStringSubmatchIndex(string(raw), -1) {
			info, text := strings.TrimSpace(string(raw)[m[2]:m[3]]), string(raw)[m[4]:m[5]]
			if slices.Contains(strings.Fields(info), "continues") {
				text = prev + text
			}
			prev = text
			name := fmt.Sprintf("%s:%d", strings.TrimPrefix(file, root+string(filepath.Separator)), strings.Count(string(raw)[:m[0]], "\n")+1)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cfg, err := config.Parse(name, []byte(text))
				if err != nil {
					t.Fatalf("%s: this toolbelt.yaml example does not load: %v\n%s", name, err, text)
				}
				if len(cfg.MCPServers) > 0 {
					return
				}
				home := t.TempDir()
				dir := filepath.Join(home, "project")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "toolbelt.yaml"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin, "config", "check")
				cmd.Dir = dir
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "NO_COLOR=1"}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: toolbelt config check refuses this example: %v\n%s\n%s", name, err, out, text)
				}
			})
		}
	}
}

// machinePaths returns the absolute paths of this machine that must not
// appear in the repository: the repository's own directory, the top
// directory it lies in when that is not a shared one (/tmp, /home, …),
// and the home directory of the user running the test.
func machinePaths(t *testing.T) []string {
	t.Helper()
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{repo + "/"}
	top := "/" + strings.SplitN(strings.TrimPrefix(filepath.ToSlash(repo), "/"), "/", 2)[0] + "/"
	if !slices.Contains([]string{"/tmp/", "/var/", "/home/", "/Users/", "/private/", "/usr/", "/opt/", "/srv/", "/mnt/"}, top) {
		paths = append(paths, top)
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		paths = append(paths, filepath.ToSlash(home)+"/")
	}
	return paths
}

// TestNoMachinePaths checks that no file of the repository names a path of
// the machine it was written on: examples use neutral paths (/home/you,
// ~, $TMPDIR) instead.
func TestNoMachinePaths(t *testing.T) {
	paths := machinePaths(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Name() == ".git" || d.Name() == "node_modules":
			// .git is a file in a worktree, naming the main repository.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if slices.Contains(b, 0) {
			return nil // binary
		}
		for i, l := range strings.Split(string(b), "\n") {
			for _, p := range paths {
				if strings.Contains(l, p) {
					t.Errorf("%s:%d names %s, a path of this machine: use a neutral one (/home/you, ~, $TMPDIR)", path, i+1, p)
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNamedCommandsExist checks that every toolbelt command the documents,
// the configuration template and the CLI's own messages name (`toolbelt
// config check` in Markdown and YAML comments, 'toolbelt undo ID' in Go
// strings) is one the CLI has: `toolbelt WORDS --help` succeeds.
func TestNamedCommandsExist(t *testing.T) {
	bin := filepath.Join(toolbelt(t), "toolbelt")
	// Named on purpose as a mistake: cli.md shows the suggestion it gets.
	mistakes := map[string]bool{"lsit": true}
	quoted := map[string]*regexp.Regexp{
		".md":   regexp.MustCompile("`toolbelt((?: [a-z][a-z0-9_-]*)+)"),
		".yaml": regexp.MustCompile("`toolbelt((?: [a-z][a-z0-9_-]*)+)"),
		".go":   regexp.MustCompile(`'toolbelt((?: [a-z][a-z0-9_-]*)+)`),
	}
	files := documents(t)
	files = append(files, filepath.Join(root, "config", "template.yaml"))
	sources, err := filepath.Glob(filepath.Join(root, "cmd", "toolbelt", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sources {
		if !strings.HasSuffix(s, "_test.go") {
			files = append(files, s)
		}
	}
	seen := map[string]string{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quoted[filepath.Ext(file)].FindAllStringSubmatchIndex(string(raw), -1) {
			words := strings.Fields(string(raw)[m[2]:m[3]])
			if _, done := seen[strings.Join(words, " ")]; done || mistakes[words[0]] {
				continue
			}
			seen[strings.Join(words, " ")] = fmt.Sprintf("%s:%d", file, strings.Count(string(raw)[:m[0]], "\n")+1)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d command names: is the pattern still right?", len(seen))
	}
	for cmdline, where := range seen {
		cmd := exec.Command(bin, append(strings.Fields(cmdline), "--help")...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s names `toolbelt %s`, which the CLI does not have: %v\n%s", where, cmdline, err, out)
		}
	}
}

// jsonFence finds a JSON code block.
var jsonFence = regexp.MustCompile("(?ms)^```json\n(.*?)^```")

// TestJSONExamples checks that every JSON block of the documents (client
// configurations, protocol messages) is valid JSON: one value, or several
// one after another (JSON lines).
func TestJSONExamples(t *testing.T) {
	for _, file := range documents(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range jsonFence.FindAllStringSubmatchIndex(string(raw), -1) {
			dec := json.NewDecoder(strings.NewReader(string(raw)[m[2]:m[3]]))
			for n := 0; ; n++ {
				var v any
				err := dec.Decode(&v)
				if err == io.EOF && n > 0 {
					break
				}
				if err != nil {
					t.Errorf("%s:%d: this JSON example is not valid JSON: %v", file, strings.Count(string(raw)[:m[0]], "\n")+1, err)
					break
				}
			}
		}
	}
}

// TestEverySubjectHasItsPage checks that each subject of the manual has its
// page in docs/, linked from the README's table of pages.
func TestEverySubjectHasItsPage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for subject, page := range map[string]string{
		"getting started":        "getting-started.md",
		"tools":                  "tools.md",
		"the CLI":                "cli.md",
		"the pipeline":           "pipeline.md",
		"schemas":                "schemas.md",
		"file and shell tools":   "files-and-shell.md",
		"governance":             "governance.md",
		"the security model":     "security.md",
		"importing MCP servers":  "importing.md",
		"compact mode":           "compact.md",
		"the configuration keys": "config.md",
		"benchmarks":             "benchmarks.md",
		"development":            "development.md",
		"serving over MCP":       "serving.md",
		"embedding in Go":        "embedding.md",
	} {
		if _, err := os.Stat(page); err != nil {
			t.Errorf("%s: docs/%s is missing: %v", subject, page, err)
		}
		if !strings.Contains(string(readme), "](docs/"+page+")") {
			t.Errorf("%s: README.md does not link docs/%s", subject, page)
		}
	}
}

// demoServer is where the examples marked "postgres" find PostgreSQL, and
// demoDatabase the database they use.
const (
	demoServer   = "127.0.0.1:35432"
	demoDatabase = "toolbelt_demo"
)

var demoPG struct {
	once       sync.Once
	skip, fail string
}

// demoPostgres gives the examples marked "postgres" the server they name:
// a fresh toolbelt_demo database on the server of TOOLBELT_TEST_POSTGRES_URL
// (.ci/run starts one), reached through a forwarder listening on
// demoServer. Without a server the example is skipped, saying how to get
// one.
func demoPostgres(t *testing.T) {
	t.Helper()
	demoPG.once.Do(func() { demoPG.skip, demoPG.fail = startDemoPostgres() })
	if demoPG.fail != "" {
		t.Fatal(demoPG.fail)
	}
	if demoPG.skip != "" {
		t.Skip(demoPG.skip)
	}
}

func startDemoPostgres() (skip, fail string) {
	base := os.Getenv(storetest.PostgresEnv)
	if base == "" {
		return "needs a PostgreSQL server: set " + storetest.PostgresEnv + " to a postgres:// URL of a server the tests may create a database on (.ci/run starts one)", ""
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Sprintf("%s: %v", storetest.PostgresEnv, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", fmt.Sprintf("%s: %v", storetest.PostgresEnv, err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{"DROP DATABASE IF EXISTS " + demoDatabase + " WITH (FORCE)", "CREATE DATABASE " + demoDatabase} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			return "", fmt.Sprintf("%s: %v", q, err)
		}
	}
	if u.Host == demoServer {
		return "", ""
	}
	ln, err := net.Listen("tcp", demoServer)
	if err != nil {
		return fmt.Sprintf("the examples name PostgreSQL at %s, where this machine cannot listen: %v", demoServer, err), ""
	}
	go forwardAll(ln, u.Host)
	return "", ""
}

// forwardAll joins each connection ln accepts to target, until ln is
// closed.
func forwardAll(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go forward(c, target)
	}
}

// forward joins c to a new connection to target until either side ends.
func forward(c net.Conn, target string) {
	defer c.Close()
	d, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer d.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(d, c); done <- struct{}{} }()
	go func() { io.Copy(c, d); done <- struct{}{} }()
	<-done
}
