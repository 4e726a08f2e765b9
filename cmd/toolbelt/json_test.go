package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/alecthomas/kong"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// printsNoData are the commands without --json, each with why: a command
// that prints data has --json (or --events).
var printsNoData = map[string]string{
	"serve":            "a server: its banner is for people, its data is MCP",
	"node":             "a node serving its gateway: it prints what happens for the person at the machine; toolbelt nodes --json gives the nodes' state",
	"mcp stdio":        "a server: stdout is MCP itself",
	"chat":             "a conversation at a terminal; toolbelt run --json is its form for programs",
	"sessions delete":  "an action: prints that it was done, the exit code says so",
	"cron remove":      "an action: prints that it was done, the exit code says so",
	"approvals revoke": "an action: prints that it was done, the exit code says so",
	"tool new":         "an action: writes a folder and says what to do next",
	"init":             "an action: writes files and says what to do next",
	"mcp add":          "an action: writes toolbelt.yaml and says whether the server started; toolbelt mcp servers --json gives the servers' state",
	"mcp login":        "an interactive sign-in: it prints the URL to open; toolbelt mcp servers --json gives the auth state",
	"mcp logout":       "an action: forgets the grant; toolbelt mcp servers --json gives the auth state",
	"schema export":    "prints a JSON Schema already",
	"completion":       "prints a shell script",
	"help":             "prints usage",
}

// TestEveryDataCommandHasJSON walks the grammar: every command that runs
// has --json (or --events), or is in printsNoData with the reason; every
// entry of printsNoData is still a command without it.
func TestEveryDataCommandHasJSON(t *testing.T) {
	t.Parallel()
	parser, err := kong.New(&cli{}, kong.Name("toolbelt"), kong.ExplicitGroups(groups))
	if err != nil {
		t.Fatal(err)
	}
	without := map[string]bool{}
	for _, n := range commandNodes(parser.Model.Node) {
		if len(commandNames(n)) > 0 {
			continue // runs one of its subcommands
		}
		has := false
		for _, f := range n.Flags {
			has = has || f.Name == "json" || f.Name == "events"
		}
		if !has {
			without[n.Path()] = true
			if printsNoData[n.Path()] == "" {
				t.Errorf("toolbelt %s has no --json: add it, or say in printsNoData why it prints no data", n.Path())
			}
		}
	}
	for path := range printsNoData {
		if !without[path] {
			t.Errorf("printsNoData names %q, which is not a command without --json: remove it", path)
		}
	}
}

// TestJSONCarriesWhatTheTextShows: the --json form of a command carries
// every value its text form shows (exit codes the same): version, tool
// check, config check, audit verify, approvals list, sessions and cron
// list, with data to show.
func TestJSONCarriesWhatTheTextShows(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	ws := t.TempDir()
	data := strings.TrimPrefix(env[slices.IndexFunc(env, func(v string) bool { return strings.HasPrefix(v, "TOOLBELT_DATA=") })], "TOOLBELT_DATA=")
	st, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Approvals(ws).Approve(ctx, strings.Repeat("ab12", 16), "exec", "cli (alice)"))
	must(st.Approvals(ws).SaveRule(ctx, "exec(npm run test:*)", "exec", "terminal (bob)"))
	must(st.Sessions().Start(ctx, store.SessionStart{ID: "agent:writer:main", Workspace: ws, Model: "openai/m1", As: tool.Identity{AgentID: "writer"}}))
	must(st.Sessions().Append(ctx, "agent:writer:main", ws, "openai/m1", []store.SessionMessage{{Role: "user", Body: json.RawMessage(`{"role":"user"}`)}}))
	must(st.Close())
	runCLIWith(t, env, "", "", "cron", "add", "--name", "greeter", "--every", "1h", "--tool", "test_greet", "--args", `{"name":"Ada"}`, "--workspace", ws).expect(t, 0)

	edited := auditData(t, sampleRecords()...)
	tamper(t, edited, "UPDATE audit_log SET body = REPLACE(body, 'rm -rf build', 'ls') WHERE seq = 2")
	twice := audit.Record{Time: time.Now(), CallID: "c9", Tool: "read"}
	intact := auditData(t, append(sampleRecords(), twice, twice)...)
	head := strings.TrimSpace(runCLI(t, "", "audit", "head", "--data", intact).expect(t, 0).stdout)
	keyed := t.TempDir()
	kst, err := store.Open(ctx, filepath.Join(keyed, store.DefaultFile))
	must(err)
	must(auditlog.New(kst, auditlog.WithKey([]byte("0123456789abcdef0123"))).Append(ctx, sampleRecords()[0]))
	must(kst.Close())

	warned := writeConfig(t, "tools:\n  profile: coding\n  deny: [exec]\n  exec: {shell: /nonexistent/zsh}\n")
	broken := writeConfig(t, "limits:\n  timout: 5m\nagents:\n  a: {workspace: nowhere}\n")
	for _, c := range []struct {
		args   []string
		dir    string
		code   int
		labels string // the words of the text that are not values
	}{
		{args: []string{"version"}, labels: "toolbelt"},
		{args: []string{"tool", "check", "../../examples/tools/reminder"}, labels: "is a valid directory tool name handler risk section timeout async"},
		{args: []string{"tool", "check", "../../examples/tools/clean_cache"}, labels: "is a valid directory tool name handler risk section confirm"},
		{args: []string{"config", "check", warned}, labels: "Checking warning ok, warning"},
		{args: []string{"config", "check", broken}, code: 2, labels: "Checking toolbelt"},
		{args: []string{"config", "check"}, dir: t.TempDir(), labels: "No configuration file looked for toolbelt uses its defaults 'toolbelt init' writes one"},
		{args: []string{"audit", "verify", "--data", intact, "--head", head}, code: 1, labels: "records chain intact head and it holds the saved head's record unchanged But repeats an earlier one a recorded twice the same"},
		{args: []string{"audit", "verify", "--data", edited}, code: 1, labels: "Chain broken at record"},
		{args: []string{"audit", "verify", "--data", keyed}, code: 1, labels: "Cannot"},
		{args: []string{"approvals", "list", "--workspace", ws}, labels: "Allowed in until revoked toolbelt approvals revoke [TOOL] TOOL BY AT FINGERPRINT Rules saved for allowing the calls they match RULE"},
		{args: []string{"sessions", "--workspace", ws}, labels: "KEY AGENT STATUS MODEL MESSAGES TOKENS UPDATED PARENT -"},
		{args: []string{"cron", "list", "--workspace", ws}, labels: "ID NAME WHEN NEXT LAST DOES -"},
	} {
		text := runCLIWith(t, env, c.dir, "", c.args...).expect(t, c.code)
		out := runCLIWith(t, env, c.dir, "", append(c.args, "--json")...).expect(t, c.code).stdout
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v --json: %v\n%s", c.args, err, out)
		}
		shown := text.stdout
		if c.code == 2 {
			shown += text.stderr // the problems
		}
		carried := map[string]bool{}
		jsonWords(v, carried)
		labels := strings.Fields(c.labels)
		for _, word := range textWords(shown) {
			if !slices.Contains(labels, word) && !carriedWord(carried, word) {
				t.Errorf("%v: the text shows %q, which --json lacks:\n%s\n%s", c.args, word, shown, out)
			}
		}
	}
}

// textWords splits text into the words that may be values: at white
// space and the punctuation that joins values (file:line:column, 12/34,
// (…), {"name":"x"}), without a sentence's last full stop.
func textWords(text string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`():/,{}"→`, r) }) {
		if w = strings.TrimRight(w, "."); w != "" {
			words = append(words, w)
		}
	}
	return words
}

// jsonWords adds the words of every key and value in v to words: a
// string's words (a time's as the text shows it too), a number or boolean
// as written, a list's length.
func jsonWords(v any, words map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			words[k] = true
			jsonWords(e, words)
		}
	case []any:
		words[strconv.Itoa(len(v))] = true
		for _, e := range v {
			jsonWords(e, words)
		}
	case string:
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			v += " " + at.Local().Format(time.DateTime)
		}
		for _, w := range textWords(v) {
			words[w] = true
		}
	case nil:
	default:
		words[fmt.Sprint(v)] = true
	}
}

// carriedWord says whether word is one of the JSON's words, or the start
// of one (a hash or id the text shortens).
func carriedWord(carried map[string]bool, word string) bool {
	if carried[word] {
		return true
	}
	for w := range carried {
		if strings.HasPrefix(w, word) {
			return true
		}
	}
	return false
}
