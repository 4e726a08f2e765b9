package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func TestOverview(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"help"}, {"-v", "help"}} {
		r := runCLI(t, "", args...).expect(t, 0)
		for _, want := range []string{
			"Usage: toolbelt <command> [flags]",
			"Serve tools to agents:\n  serve ",
			"\n  call        Run one call, or a batch, through the pipeline.\n",
			"Setup:\n  init ",
			"Run 'toolbelt help <command>'",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: overview lacks %q:\n%s", args, want, r.stdout)
			}
		}
		// Short: the whole overview fits a 45-line terminal.
		if n := strings.Count(r.stdout, "\n"); n > 44 {
			t.Errorf("%v: the overview is %d lines, not short", args, n)
		}
	}
}

func TestHelpForACommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help", "call"}, {"call", "--help"}} {
		r := runCLI(t, "", args...).expect(t, 0)
		if !strings.HasPrefix(r.stdout, "Usage: toolbelt call [<tool>] [flags]") || !strings.Contains(r.stdout, "--args=JSON") {
			t.Errorf("%v:\n%s", args, r.stdout)
		}
	}
	r := runCLI(t, "", "help", "mcp", "servers").expect(t, 0)
	if !strings.HasPrefix(r.stdout, "Usage: toolbelt mcp servers") {
		t.Errorf("help mcp servers:\n%s", r.stdout)
	}
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lsit"}, `unknown command "lsit"; did you mean "list"?`},
		{[]string{"--config", "x.yaml", "serv"}, `unknown command "serv"; did you mean "serve"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "cal"}, `unknown command "cal"; did you mean "call"`},
		{[]string{"--versoin"}, `unknown flag --versoin, did you mean "--version"?`},
		{[]string{"sessions", "lst"}, `toolbelt sessions: unknown command "lst"; did you mean "list"?`},
		{[]string{"sessions", "--json", "shw", "k"}, `toolbelt sessions: unknown command "shw"; did you mean "show"?`},
		{[]string{"cron", "ad", "x"}, `toolbelt cron: unknown command "ad"; did you mean "add"?`},
		{[]string{"jobs", "cancle", "7"}, `toolbelt jobs: unknown command "cancle"; did you mean "cancel"?`},
		{[]string{"audit", "verfy"}, `toolbelt audit: unknown command "verfy"; did you mean "verify"?`},
		{[]string{"approvals", "revok"}, `toolbelt approvals: unknown command "revok"; did you mean "revoke"?`},
		{[]string{"mcp", "srvers"}, `toolbelt mcp: unknown command "srvers"; did you mean "servers"?`},
	} {
		r := runCLI(t, "", tc.args...).expect(t, 2)
		if !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: stderr %q, want %q (stdout %q)", tc.args, r.stderr, tc.want, r.stdout)
		}
	}
	r := runCLI(t, "", "call", "--frob").expect(t, 2)
	if !strings.Contains(r.stderr, "unknown flag --frob") || !strings.Contains(r.stderr, "Run 'toolbelt call --help'") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestHelpShowsEveryFlag walks the grammar: the help of every command
// names every flag the command takes, those of the subcommand it runs by
// default (toolbelt sessions is toolbelt sessions list) included.
func TestHelpShowsEveryFlag(t *testing.T) {
	t.Parallel()
	parser, err := kong.New(&cli{}, kong.Name("toolbelt"), kong.ExplicitGroups(groups))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range commandNodes(parser.Model.Node) {
		var stdout, stderr strings.Builder
		args := append(strings.Fields(n.Path()), "--help")
		if code := run(args, env{stdout: &stdout, stderr: &stderr, tools: testTools}); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		takes := n.Flags
		if n.DefaultCmd != nil {
			takes = append(slices.Clone(takes), n.DefaultCmd.Flags...)
		}
		for _, f := range takes {
			if !f.Hidden && !strings.Contains(stdout.String(), "--"+f.Name) {
				t.Errorf("%v does not show --%s:\n%s", args, f.Name, stdout.String())
			}
		}
	}
}

// commandNodes returns the visible commands under n, depth first.
func commandNodes(n *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			out = append(out, c)
			out = append(out, commandNodes(c)...)
		}
	}
	return out
}

func TestVersionFlags(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--version", "-V"} {
		r := runCLI(t, "", flag).expect(t, 0)
		if !strings.HasPrefix(r.stdout, "toolbelt ") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%s: %q", flag, r.stdout)
		}
	}
}

// TestBashCompletion loads the script into a real bash and asks it to
// complete as bash would on Tab.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	r := runCLI(t, "", "completion", "bash").expect(t, 0)
	script := filepath.Join(t.TempDir(), "toolbelt.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	complete := func(words ...string) string {
		t.Helper()
		prog := "source " + shellQuote(script) + "\nCOMP_WORDS=("
		for _, w := range words {
			prog += shellQuote(w) + " "
		}
		prog += fmt.Sprintf(")\nCOMP_CWORD=%d\n_toolbelt\necho \"${COMPREPLY[*]}\"\n", len(words)-1)
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", words, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"toolbelt", "li"}, "list"},
		{[]string{"toolbelt", "c"}, "chat cron call config completion"},
		{[]string{"toolbelt", "--config", "x.yaml", "se"}, "serve sessions"},
		{[]string{"toolbelt", "mcp", ""}, "stdio servers add login logout"},
		{[]string{"toolbelt", "call", "test_greet", "--ar"}, "--args --args-file"},
		{[]string{"toolbelt", "mcp", "servers", "--j"}, "--json"},
		{[]string{"toolbelt", "audit", "ver"}, "verify"},
		{[]string{"toolbelt", "nodes", ""}, "list approve reject remove"},
		{[]string{"toolbelt", "node", "--ins"}, "--insecure"},
	} {
		if got := complete(tc.words...); got != tc.want {
			t.Errorf("%q: completed %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestZshAndFishCompletion(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "completion", "zsh").expect(t, 0)
	for _, want := range []string{"#compdef toolbelt", "compdef _toolbelt toolbelt", `'mcp') cmds=('stdio:`, "'list:List tools by section"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("zsh script lacks %q", want)
		}
	}
	r = runCLI(t, "", "completion", "fish").expect(t, 0)
	for _, want := range []string{
		"complete -c toolbelt -n '__fish_use_subcommand' -a 'serve' -d",
		"complete -c toolbelt -n '__fish_seen_subcommand_from mcp; and not __fish_seen_subcommand_from stdio servers add login logout' -a 'servers'",
		"complete -c toolbelt -n '__fish_seen_subcommand_from call' -l args-file",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("fish script lacks %q:\n%s", want, r.stdout)
		}
	}
	runCLI(t, "", "completion", "powershell").expect(t, 2)
	for _, sh := range []string{"zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			path, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s is not installed, so its parser does not check the script (apt-get install %s; .ci/run installs it)", sh, sh)
			}
			r := runCLI(t, "", "completion", sh).expect(t, 0)
			script := filepath.Join(t.TempDir(), "completion."+sh)
			if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(path, "-n", script).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh, err, out)
			}
		})
	}
}

// TestFishCompletion loads the script into a real fish and asks it to
// complete as fish would on Tab.
func TestFishCompletion(t *testing.T) {
	t.Parallel()
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed (apt-get install fish; .ci/run installs it)")
	}
	r := runCLI(t, "", "completion", "fish").expect(t, 0)
	script := filepath.Join(t.TempDir(), "toolbelt.fish")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, want string }{
		{"toolbelt li", "list"},
		{"toolbelt mcp ", "add login logout servers stdio"},
		{"toolbelt audit ver", "verify"},
		{"toolbelt call x --ar", "--args --args-file"},
		{"toolbelt init --mc", "--mcp-json"},
		{"toolbelt nodes ", "approve list reject remove"},
	} {
		cmd := exec.Command(fish, "--no-config", "-c", "source "+shellQuote(script)+"; complete -C "+shellQuote(tc.line))
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tc.line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			word, _, _ := strings.Cut(l, "\t")
			got = append(got, word)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: completed %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestZshCompletion runs the script's completion function in a real zsh,
// with compadd and _describe (which only work inside zsh's completion
// system) replaced by functions that print the candidates.
func TestZshCompletion(t *testing.T) {
	t.Parallel()
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed (apt-get install zsh; .ci/run installs it)")
	}
	r := runCLI(t, "", "completion", "zsh").expect(t, 0)
	script := filepath.Join(t.TempDir(), "_toolbelt")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	stubs := `compadd() { shift; print -l -- "$@" }
_describe() { local a; for a in ${(P)2}; do print -- ${a%%:*}; done }
`
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"toolbelt", "mcp", ""}, "stdio servers add login logout"},
		{[]string{"toolbelt", "audit", ""}, "list verify head"},
		{[]string{"toolbelt", "--config", "x.yaml", "approvals", ""}, "list revoke"},
		{[]string{"toolbelt", "nodes", ""}, "list approve reject remove"},
		{[]string{"toolbelt", "init", "--"}, "--help --verbose --config --data --version --provider --model --base-url --no-test --yes --client --mcp-json --force"},
	} {
		prog := "source " + shellQuote(script) + "\n" + stubs + "words=("
		for _, w := range tc.words {
			prog += shellQuote(w) + " "
		}
		prog += fmt.Sprintf(")\nCURRENT=%d\n_toolbelt\n", len(tc.words))
		out, err := exec.Command(zsh, "-f", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tc.words, err, out)
		}
		if got := strings.Join(strings.Fields(string(out)), " "); got != tc.want {
			t.Errorf("%q: completed %q, want %q", tc.words, got, tc.want)
		}
	}
}

// TestPrunedGrammarGivesTheSameUsage: a run of a command builds the grammar
// of that command only (grammarOf); its usage is what the whole grammar,
// which "help CMD" builds, gives, and the global flags reach cli.
func TestPrunedGrammarGivesTheSameUsage(t *testing.T) {
	t.Parallel()
	pruned := func(args ...string) bool {
		var c cli
		root, _ := grammarOf(args, &c)
		return root != any(&c)
	}
	for f := range reflect.TypeFor[cli]().Fields() {
		if _, ok := f.Tag.Lookup("cmd"); !ok {
			continue
		}
		name := f.Tag.Get("name")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == "help" || name == "completion" {
			if pruned(name) {
				t.Errorf("%s: pruned, but it needs every command", name)
			}
			continue
		}
		if !pruned("--config", "x", name) {
			t.Errorf("%s: the grammar is not pruned", name)
		}
		pruned := runCLI(t, "", name, "--help").expect(t, 0)
		whole := runCLI(t, "", "help", name).expect(t, 0)
		if pruned.stdout != whole.stdout {
			t.Errorf("%s --help:\n%s\nhelp %s:\n%s", name, pruned.stdout, name, whole.stdout)
		}
	}
	if pruned("nosuch") || pruned() {
		t.Error("an unknown command or none pruned the grammar")
	}
	var c cli
	root, sync := grammarOf([]string{"-v", "--config", "c.yaml", "--data", "d", "list"}, &c)
	parser, err := kong.New(root, kong.Name("toolbelt"), kong.ExplicitGroups(groups))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"-v", "--config", "c.yaml", "--data", "d", "list"}); err != nil {
		t.Fatal(err)
	}
	sync()
	if !c.Verbose || c.Config != "c.yaml" || c.Data != "d" {
		t.Errorf("global flags of a pruned grammar: verbose %v, config %q, data %q", c.Verbose, c.Config, c.Data)
	}
}

// TestCompletionInstallsOnAFreshHome runs the install line each script's
// header gives, in a home where none of its folders exist yet: the script
// is where the line says.
func TestCompletionInstallsOnAFreshHome(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "toolbelt")); err != nil {
		t.Fatal(err)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script := runCLI(t, "", "completion", shell).expect(t, 0).stdout
		_, after, ok := strings.Cut(script, "# or install it for new shells")
		lines := strings.SplitN(after, "\n", 3)
		if !ok || len(lines) < 2 || !strings.HasPrefix(lines[1], "#   mkdir -p ") {
			t.Fatalf("%s: the script's header gives no install line:\n%.400s", shell, script)
		}
		line := strings.TrimPrefix(lines[1], "#   ")
		home := t.TempDir()
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = append(cliEnvironment(t), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %s: %v\n%s", shell, line, err, out)
		}
		_, target, _ := strings.Cut(line, "> ~/")
		got, err := os.ReadFile(filepath.Join(home, target))
		if err != nil || string(got) != script {
			t.Errorf("%s: %s did not install the script: %v", shell, line, err)
		}
	}
}
