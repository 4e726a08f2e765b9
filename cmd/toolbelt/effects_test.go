package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/policy"
)

// Issue 25, class 7: a rule or a hook about a change applies to every tool
// that makes it. The manual's rule asks before writing Go files; every
// call below changes a Go file without a "path" argument that names it as
// such — by edit, by a patch (update, add, delete, move from and to), by a
// path to clean, through a link, in another case — and must wait for a
// person, who is not there: nothing changes.

// goRuleConfig is docs/governance.md's rule.
const goRuleConfig = "tools:\n  ask:\n    - tool: write\n      when: {path: \"*.go\"}\n"

func patchArgs(body string) map[string]any {
	return map[string]any{"patch": "*** Begin Patch\n" + body + "*** End Patch"}
}

// goFileChanges are calls that change main.go or make a Go file, each by
// another way.
var goFileChanges = []struct {
	name, tool string
	args       map[string]any
}{
	{"write", "write", map[string]any{"path": "main.go", "content": "package main\n"}},
	{"write a path to clean", "write", map[string]any{"path": "./docs/../main.go", "content": "package main\n"}},
	{"write through a link", "write", map[string]any{"path": "link.txt", "content": "package main\n"}},
	{"write in another case", "write", map[string]any{"path": "MAIN.GO", "content": "package main\n"}},
	{"edit", "edit", map[string]any{"path": "main.go", "edits": []any{map[string]any{"oldText": "hi", "newText": "hello"}}}},
	{"edit through a link", "edit", map[string]any{"path": "link.txt", "edits": []any{map[string]any{"oldText": "hi", "newText": "hello"}}}},
	{"edit in Claude Code's shape", "edit", map[string]any{"file_path": "main.go", "old_string": "hi", "new_string": "hello"}},
	{"patch an update", "apply_patch", patchArgs("*** Update File: main.go\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
	{"patch an added file", "apply_patch", patchArgs("*** Add File: docs/new.go\n+package docs\n")},
	{"patch a deletion", "apply_patch", patchArgs("*** Delete File: main.go\n")},
	{"patch a move from a Go file", "apply_patch", patchArgs("*** Update File: main.go\n*** Move to: main.txt\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
	{"patch a move to a Go file", "apply_patch", patchArgs("*** Update File: notes.txt\n*** Move to: notes.go\n@@\n-hi\n+// hi\n")},
	{"patch through a link", "apply_patch", patchArgs("*** Update File: link.txt\n@@\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n")},
}

// goWorkspace holds main.go, notes.txt, link.txt (a link to main.go) and
// an empty docs/.
func goWorkspace(t *testing.T, ws string) {
	t.Helper()
	for name, body := range map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", "notes.txt": "hi\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("main.go", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// workspaceFiles returns every file of the workspace and its content
// (a link as "-> target").
func workspaceFiles(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, ws+"/")
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// configuredDoors runs f through `toolbelt call`, `toolbelt mcp` (stdio)
// and `toolbelt serve` (streamable HTTP), configured by config, with
// nobody to approve anything, each in a fresh workspace prepared by setup.
func configuredDoors(t *testing.T, config string, setup func(t *testing.T, ws string), f func(t *testing.T, ws string, a attacker)) {
	cfg := writeConfig(t, config)
	t.Run("cli", func(t *testing.T) {
		t.Parallel()
		ws := attackWorkspace(t, setup)
		f(t, ws, cliAttacker{ws: ws, config: cfg})
	})
	mcpDoors(t, nil, config, setup, f)
}

// TestAttackFileRuleCoversEveryFileTool: through the CLI and MCP, every
// way of changing a Go file waits for a person, and nothing changes; a
// change to another file runs.
func TestAttackFileRuleCoversEveryFileTool(t *testing.T) {
	t.Parallel()
	configuredDoors(t, goRuleConfig, goWorkspace, func(t *testing.T, ws string, a attacker) {
		before := workspaceFiles(t, ws)
		for _, c := range goFileChanges {
			out, isErr := a.call(t, c.tool, c.args)
			if !isErr || !strings.Contains(out, `needs a person's approval (requested by policy (global: ask write when path matches \"*.go\"))`) &&
				!strings.Contains(out, `needs a person's approval (requested by policy (global: ask write when path matches "*.go"))`) {
				t.Errorf("%s: not held for approval by the rule on Go files:\n%s", c.name, out)
			}
			if after := workspaceFiles(t, ws); !maps.Equal(before, after) {
				t.Fatalf("%s changed the workspace without approval: %v", c.name, after)
			}
		}
		if out, isErr := a.call(t, "apply_patch", patchArgs("*** Update File: notes.txt\n*** Move to: notes.md\n@@\n-hi\n+bye\n")); isErr {
			t.Errorf("a patch of text files did not run: %s", out)
		}
	})
}

// TestAttackFileRuleInTheAgentLoop: a model in `toolbelt run` that makes
// the same changes in one turn has every one held for approval.
func TestAttackFileRuleInTheAgentLoop(t *testing.T) {
	t.Parallel()
	ws := attackWorkspace(t, goWorkspace)
	before := workspaceFiles(t, ws)
	// The model reads the files first: the agent loop refuses a change
	// of a file the session has not read (read before edit) before any
	// rule is consulted, and it is the rule this test is about.
	var reads, calls []llmtest.Call
	for i, p := range []string{"main.go", "link.txt", "notes.txt"} {
		reads = append(reads, llmtest.Call{ID: fmt.Sprintf("read_%02d", i), Name: "read", Args: mustJSON(t, map[string]any{"path": p})})
	}
	for i, c := range goFileChanges {
		name := c.tool
		if c.name == "edit in Claude Code's shape" {
			name = "Edit"
		}
		calls = append(calls, llmtest.Call{ID: fmt.Sprintf("toolu_%02d", i), Name: name, Args: mustJSON(t, c.args)})
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Reading the Go files.", reads...)},
		llmtest.Response{Body: llmtest.Anthropic("", "Changing the Go files.", calls...)},
		llmtest.Response{Body: llmtest.Anthropic("", "Done.")})
	// apply_patch is offered to an Anthropic model only when configured.
	cfg := goRuleConfig + "  apply_patch:\n    providers: [anthropic]\n"
	r := runCLI(t, "", "--config", writeConfig(t, cfg), "run", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--json", "change the Go files").expect(t, 0)
	var transcript []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	results := 0
	for _, m := range transcript {
		if id, _ := m["toolCallId"].(string); m["role"] != "toolResult" || strings.HasPrefix(id, "read_") {
			continue
		}
		results++
		text, _ := json.Marshal(m["content"])
		if m["isError"] != true || !strings.Contains(string(text), `ask write when path matches`) {
			t.Errorf("%v: not held for approval: %s", m["toolCallId"], text)
		}
	}
	if results != len(goFileChanges) {
		t.Errorf("%d results for %d calls:\n%s", results, len(goFileChanges), r.stdout)
	}
	if after := workspaceFiles(t, ws); !maps.Equal(before, after) {
		t.Errorf("the workspace changed without approval: %v", after)
	}
}

// TestAttackWriteHookCoversEveryFileTool: a before hook configured for
// write runs for edit and apply_patch too, and reads the files each call
// would change, so a hook that refuses Go files refuses them all.
func TestAttackWriteHookCoversEveryFileTool(t *testing.T) {
	t.Parallel()
	hook := filepath.Join(t.TempDir(), "no-go.sh")
	script := "#!/bin/sh\nif grep -qi '\"files\":\\[[^]]*\\.go\"'; then echo 'no changes to Go files' >&2; exit 2; fi\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	config := "hooks:\n  before:\n    - name: no-go\n      tools: [write]\n      command: " + hook + "\n"
	configuredDoors(t, config, goWorkspace, func(t *testing.T, ws string, a attacker) {
		before := workspaceFiles(t, ws)
		for _, c := range goFileChanges {
			if out, isErr := a.call(t, c.tool, c.args); !isErr || !strings.Contains(out, "no changes to Go files") {
				t.Errorf("%s: the hook for write did not refuse it:\n%s", c.name, out)
			}
		}
		if after := workspaceFiles(t, ws); !maps.Equal(before, after) {
			t.Errorf("the workspace changed past the hook: %v", after)
		}
		if out, isErr := a.call(t, "edit", map[string]any{"path": "notes.txt", "edits": []any{map[string]any{"oldText": "hi", "newText": "bye"}}}); isErr {
			t.Errorf("an edit of a text file did not run: %s", out)
		}
	})
}

// TestPolicyExplainFileRule: policy explain shows the manual's rule for
// each tool that would change a Go file, and the files it saw; it changes
// nothing.
func TestPolicyExplainFileRule(t *testing.T) {
	t.Parallel()
	ws := attackWorkspace(t, goWorkspace)
	before := workspaceFiles(t, ws)
	cfg := writeConfig(t, goRuleConfig)
	explain := func(tool string, args map[string]any) (policy.Result, string) {
		raw := mustJSON(t, args)
		text := runCLI(t, "", "--config", cfg, "policy", "explain", tool, "--workspace", ws, "--args", raw).expect(t, 0).stdout
		var res policy.Result
		if err := json.Unmarshal([]byte(runCLI(t, "", "--config", cfg, "policy", "explain", tool, "--workspace", ws, "--args", raw, "--json").expect(t, 0).stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res, text
	}
	for _, c := range goFileChanges {
		res, text := explain(c.tool, c.args)
		if res.Decision != policy.Ask || !strings.Contains(text, "global  ask    ask write when path matches \"*.go\"\n") || !strings.Contains(text, "Files it touches: ") {
			t.Errorf("%s: explain says %v:\n%s", c.name, res.Decision, text)
		}
	}
	if _, text := explain("apply_patch", goFileChanges[10].args); !strings.Contains(text, "Files it touches: main.go, main.txt\n") {
		t.Errorf("a move: %s", text)
	}
	if res, text := explain("write", map[string]any{"path": "notes.txt", "content": "x"}); res.Decision != policy.Allow || !strings.Contains(text, "Files it touches: notes.txt\n") {
		t.Errorf("a text file: %v\n%s", res.Decision, text)
	}
	if _, text := explain("exec", map[string]any{"command": "ls"}); !strings.Contains(text, "Files it touches: not known (exec does not list the files it would change") {
		t.Errorf("exec: %s", text)
	}
	if after := workspaceFiles(t, ws); !maps.Equal(before, after) {
		t.Errorf("explain changed the workspace: %v", after)
	}
}
