package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// hostile is text from outside that would drive a terminal: erase the
// line and move up (a row of a table gone), set the clipboard (OSC 52), an
// 8-bit CSI (U+009B) that sets a colour, and a bidi override.
const hostile = "\x1b[2K\x1b[1A\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\u009b8m\u202eexe.txt"

// hostileServerEnv, when set, makes the test binary an MCP server whose
// tool has a hostile title and descriptions (serveHostile).
const hostileServerEnv = "TOOLBELT_TEST_HOSTILE_MCP"

// serveHostile serves, on stdio, one tool whose title, description and
// parameter description are hostile, and whose result is too.
func serveHostile() int {
	srv := sdk.NewServer(&sdk.Implementation{Name: "hostile", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{
		Name: "lookup", Title: "Look" + hostile, Description: "Looks up." + hostile + "\nSecond line.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"the query` + jsonEscaped(hostile) + `"}}}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found" + hostile}}}, nil
	})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "hostile server:", err)
		return 1
	}
	return 0
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// ownColors are the escape sequences Toolbelt itself writes on a terminal.
var ownColors = regexp.MustCompile(`\x1b\[(?:0|1|2|31|32|33)m`)

// rawControls lists what in out a terminal would act on or hide, other
// than Toolbelt's own colours: control characters but line feed and tab,
// DEL, C1 characters, invisible format characters, bytes that are not
// UTF-8.
func rawControls(out string) []string {
	var bad []string
	out = ownColors.ReplaceAllString(out, "")
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			bad = append(bad, fmt.Sprintf("byte %#x at %d", out[i], i))
		case r == '\n' || r == '\t':
		case r < 0x20 || r >= 0x7f && r <= 0x9f || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			bad = append(bad, fmt.Sprintf("%U at %d", r, i))
		}
		i += n
	}
	return bad
}

// visibleSafe fails the test when what a command printed holds anything
// a terminal would act on, and when it does not show the hostile text's
// escapes (so that the check is about text that was printed).
func visibleSafe(t *testing.T, what, out string) {
	t.Helper()
	if bad := rawControls(out); len(bad) > 0 {
		t.Errorf("%s printed raw control characters %v:\n%q", what, bad, out)
	}
	if !strings.Contains(out, `\x1b[2K\x1b[1A\x1b]52;c;`) || !strings.Contains(out, `\u202e`) {
		t.Errorf("%s does not show the escapes of the text it was given:\n%q", what, out)
	}
}

// TestTerminalSafeOutput: text from outside — a tool name an MCP caller
// sends, a schedule a model adds, an imported server's tool title,
// description and result, a tool's result, an error that echoes a name —
// reaches the terminal with its escapes visible, in every command that
// prints it for people (issue 25, class 9).
func TestTerminalSafeOutput(t *testing.T) {
	t.Parallel()
	env, ws := cliEnvironment(t), workspaceWith(t)
	// The MCP caller is the owner, as a model's own client is: it may add
	// schedules.
	cfg := writeConfig(t, fmt.Sprintf("mcp:\n  owner: true\nmcpServers:\n  hostile:\n    command: %q\n    env: {%s: \"1\", GORACE: atexit_sleep_ms=0}\n", os.Args[0], hostileServerEnv))
	run := configuredCLI(t, env, cfg)
	cli := func(code int, args ...string) string {
		t.Helper()
		r := run(code, args...)
		return r.stdout + r.stderr
	}

	// An MCP caller calls a tool by a hostile name and has a schedule
	// added with a hostile name and message.
	cs := connectMCP(t, nil, overStdio(env, "--config", cfg, "mcp", "--workspace", ws))
	caller := mcpAttacker{cs}
	if out, isErr := caller.call(t, "evil"+hostile, map[string]any{}); !isErr {
		t.Fatalf("a tool of a hostile name ran: %s", out)
	}
	if out, isErr := caller.call(t, "cron", map[string]any{"action": "add", "every": "1h", "name": "n" + hostile, "message": "m" + hostile}); isErr {
		t.Fatalf("cron add: %s", out)
	}
	cs.Close()

	visibleSafe(t, "toolbelt audit", cli(0, "audit"))
	visibleSafe(t, "toolbelt cron list", cli(0, "cron", "list", "--workspace", ws))
	visibleSafe(t, "toolbelt list", cli(0, "list", "--section", "mcp"))
	visibleSafe(t, "toolbelt describe", cli(0, "describe", "hostile__lookup"))
	visibleSafe(t, "toolbelt call (an imported tool's result)", cli(0, "call", "hostile__lookup", "--workspace", ws, "--args", "{}"))
	visibleSafe(t, "toolbelt call (a tool's result)", cli(0, "call", "test_greet", "--workspace", ws, "--args", `{"name":"`+jsonEscaped(hostile)+`"}`))
	visibleSafe(t, "toolbelt call (an unknown tool)", cli(1, "call", "evil"+hostile, "--workspace", ws, "--args", "{}"))
	// JSON for programs carries the same text as JSON escapes.
	if out := cli(0, "audit", "--json"); len(rawControls(out)) > 0 || !strings.Contains(out, `\u001b[2K\u001b[1A\u001b]52;c;`) || !strings.Contains(out, `\u009b8m\u202eexe`) {
		t.Errorf("toolbelt audit --json: %v\n%q", rawControls(out), out)
	}
}

// TestApprovalPromptShowsEscapes: the approval prompt, on a terminal with
// colours on, shows a command's escapes instead of letting them redraw the
// question; its own colours stay.
func TestApprovalPromptShowsEscapes(t *testing.T) {
	t.Parallel()
	ws := workspaceWith(t)
	cmd := exec.Command(os.Args[0], "call", "test_danger", "--workspace", ws, "--args", `{"target":"build`+jsonEscaped(hostile)+`"}`)
	for _, kv := range cliEnvironment(t) {
		if !strings.HasPrefix(kv, "NO_COLOR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	_, screen := atTerminal(t, cmd, [2]string{"[n] no: \x1b[0m", "n"}, [2]string{"(optional): ", ""})
	if !ownColors.MatchString(screen) {
		t.Errorf("the prompt lost its colours:\n%q", screen)
	}
	// What the person typed is echoed; the prompt is what comes before.
	prompt, _, _ := strings.Cut(screen, "[n] no: ")
	// On a slow machine the spinner draws (and clears) its line before the
	// prompt: its own \r and erase are not the command's.
	if i := strings.Index(prompt, "Approval needed"); i > 0 {
		prompt = prompt[i:]
	}
	visibleSafe(t, "the approval prompt", prompt)
	for _, field := range []string{"effect:", "command:"} {
		if !strings.Contains(prompt, field) {
			t.Errorf("the prompt has no %s line:\n%s", field, prompt)
		}
	}
}

// TestRunShowsModelEscapes: what a model writes (its answer, the name of a
// tool it calls) is printed with its escapes visible, by toolbelt run and
// by toolbelt sessions show.
func TestRunShowsModelEscapes(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "evil" + hostile, Args: "{}"})},
		llmtest.Response{Body: llmtest.Chat("", "Done."+hostile)})
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "run", "--model", "vllm/m", "--base-url", s.URL+"/v1", "--session", "s1", "hi").expect(t, 0)
	visibleSafe(t, "toolbelt run's answer", r.stdout)
	visibleSafe(t, "toolbelt run's tool lines", r.stderr)
	r = runCLIWith(t, env, "", "", "sessions", "show", "s1").expect(t, 0)
	visibleSafe(t, "toolbelt sessions show", r.stdout)
	r = runCLIWith(t, env, "", "", "sessions").expect(t, 0)
	if bad := rawControls(r.stdout); len(bad) > 0 {
		t.Errorf("toolbelt sessions: %v\n%q", bad, r.stdout)
	}
}
