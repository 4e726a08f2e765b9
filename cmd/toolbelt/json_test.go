package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// printsNoData are the commands without --json, each with why: a command
// that prints data has --json (or --events).
var printsNoData = map[string]string{
	"serve":            "a server: its banner is for people, its data is MCP",
	"mcp stdio":        "a server: stdout is MCP itself",
	"chat":             "a conversation at a terminal; toolbelt run --json is its form for programs",
	"sessions delete":  "an action: prints that it was done, the exit code says so",
	"cron remove":      "an action: prints that it was done, the exit code says so",
	"approvals revoke": "an action: prints that it was done, the exit code says so",
	"tool new":         "an action: writes a folder and says what to do next",
	"init":             "an action: writes files and says what to do next",
	"mcp add":          "an action: writes toolbelt.yaml and says whether the server started; toolbelt mcp servers --json gives the servers' state",
	"schema export":    "prints a JSON Schema already",
	"completion":       "prints a shell script",
	"help":             "prints usage",
	"audit verify":     "a verdict: the exit code says it (0 intact, 1 broken); audit head --json gives the head",
	"config check":     "a verdict: the exit code says it, each problem on stderr with its line",
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

// TestJSONCarriesWhatTheTextShows: version --json and tool check --json
// carry every value their text shows.
func TestJSONCarriesWhatTheTextShows(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"version"},
		{"tool", "check", "../../examples/tools/reminder"},
		{"tool", "check", "../../examples/tools/clean_cache"},
	} {
		text := runCLI(t, "", args...).expect(t, 0).stdout
		var fields map[string]any
		if err := json.Unmarshal([]byte(runCLI(t, "", append(args, "--json")...).expect(t, 0).stdout), &fields); err != nil {
			t.Fatalf("%v --json: %v", args, err)
		}
		values := map[string]bool{}
		for _, v := range fields {
			switch v := v.(type) {
			case []any:
				words := make([]string, len(v))
				for i, w := range v {
					words[i] = fmt.Sprint(w)
				}
				values[strings.Join(words, " ")] = true
			default:
				values[fmt.Sprint(v)] = true
			}
		}
		// Every word of the text is a value, or part of one, or a label.
		for _, word := range strings.Fields(strings.NewReplacer("(", " ", ")", " ", "/", " ").Replace(text)) {
			found := fields[word] != nil
			for v := range values {
				found = found || strings.Contains(v, word)
			}
			if !found && !strings.Contains("toolbelt is a valid directory tool. handler", word) {
				t.Errorf("%v: the text shows %q, which --json lacks:\n%s\n%v", args, word, text, fields)
			}
		}
	}
}
