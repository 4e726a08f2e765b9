package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// writeSkill makes the skill name in the folder of skills dir, allowing
// allowed (a SKILL.md front matter value), with a reference file.
func writeSkill(t *testing.T, dir, name, allowed string) {
	t.Helper()
	skill := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Join(skill, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: Greets people the house way.\nallowed-tools: " + allowed + "\n---\n# Greeting\nSay hello with echo, then read references/style.md.\n"
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "references", "style.md"), []byte("Warmly."), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunSkillPreapprovesItsTools: the model sees the skills by name and
// description only; a command exec asks about (and, with nobody to ask, is blocked) until
// the model loads a skill of the user's config directory whose
// allowed-tools name it, and then runs without asking; the skill's other
// files are listed and read through the skill tool.
func TestRunSkillPreapprovesItsTools(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	env := cliEnvironment(t)
	var xdg string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			xdg = v
		}
	}
	writeSkill(t, filepath.Join(xdg, "toolbelt", "skills"), "greet", "Bash(touch:*) Read")
	touch := `{"command":"touch made.txt"}`
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "exec", Args: touch})},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c2", Name: "skill", Args: `{"name":"greet"}`})},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c3", Name: "exec", Args: touch})},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c4", Name: "skill", Args: `{"name":"greet","file":"references/style.md"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Greeted.")})
	r := runCLIWith(t, env, ws, "", "run", "--model", "openai/m", "--base-url", s.URL+"/v1", "--workspace", ws, "greet").expect(t, 0)
	reqs := s.Requests()
	first := compactJSON(t, reqs[0].Body)
	if !strings.Contains(first, "- greet: Greets people the house way.") || strings.Contains(first, "Say hello with echo") {
		t.Errorf("the system prompt does not list the skill by name and description only:\n%s", textclip.Clip(first, 2000))
	}
	if !strings.Contains(r.stderr, "✗ exec blocked") {
		t.Errorf("exec ran before the skill was loaded:\n%s", r.stderr)
	}
	loaded := compactJSON(t, reqs[2].Body)
	for _, want := range []string{"Say hello with echo", "- references/style.md", "Pre-approved while this skill is active in this session", "exec(touch:*), read"} {
		if !strings.Contains(loaded, want) {
			t.Errorf("the loaded skill lacks %q:\n%s", want, textclip.Clip(loaded, 2000))
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err != nil || strings.Count(r.stderr, "✓ exec ran") != 1 {
		t.Errorf("exec did not run once the skill pre-approved it (%v):\n%s", err, r.stderr)
	}
	if read := compactJSON(t, reqs[4].Body); !strings.Contains(read, "Warmly.") {
		t.Errorf("the skill's file was not read:\n%s", textclip.Clip(read, 2000))
	}
}

// TestRunWorkspaceSkillCannotPreapprove: a skill in the workspace's
// .toolbelt/skills loads, but its allowed-tools pre-approve nothing — the
// result says so, and exec still asks (blocked with nobody to ask) — and
// its files are listed for read.
func TestRunWorkspaceSkillCannotPreapprove(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeSkill(t, filepath.Join(ws, ".toolbelt", "skills"), "greet", "Bash")
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "skill", Args: `{"name":"greet"}`})},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c2", Name: "exec", Args: `{"command":"touch sneaked.txt"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Could not.")})
	r := runCLIWith(t, cliEnvironment(t), ws, "", "run", "--model", "openai/m", "--base-url", s.URL+"/v1", "--workspace", ws, "greet").expect(t, 0)
	if first := compactJSON(t, s.Requests()[0].Body); !strings.Contains(first, "- greet (from the workspace: untrusted): Greets people the house way.") {
		t.Errorf("the system prompt does not mark the workspace skill untrusted:\n%s", textclip.Clip(first, 2000))
	}
	loaded := compactJSON(t, s.Requests()[1].Body)
	for _, want := range []string{"untrusted: its allowed-tools (exec) pre-approve nothing", "folder .toolbelt/skills/greet of the workspace"} {
		if !strings.Contains(loaded, want) {
			t.Errorf("the loaded skill lacks %q:\n%s", want, textclip.Clip(loaded, 2000))
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "sneaked.txt")); err == nil || !strings.Contains(r.stderr, "✗ exec blocked") {
		t.Errorf("a workspace skill pre-approved exec:\n%s", r.stderr)
	}
}

// TestResumedSessionKeepsItsSkill: a skill loaded in a session stays
// active when the session is resumed in another process (run --session):
// its allowed-tools still pre-approve exec there, without loading the
// skill again; a new session starts with no skill active (exec blocked,
// with nobody to ask).
func TestResumedSessionKeepsItsSkill(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	env := cliEnvironment(t)
	var xdg string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			xdg = v
		}
	}
	writeSkill(t, filepath.Join(xdg, "toolbelt", "skills"), "greet", "Bash(touch:*)")
	run := func(session string, calls ...llmtest.Call) cliResult {
		var responses []llmtest.Response
		for _, c := range calls {
			responses = append(responses, llmtest.Response{Body: llmtest.Chat("", "", c)})
		}
		s := llmtest.New(t, append(responses, llmtest.Response{Body: llmtest.Chat("", "Done.")})...)
		return runCLIWith(t, env, ws, "", "run", "--model", "openai/m", "--base-url", s.URL+"/v1", "--workspace", ws, "--session", session, "go on")
	}
	touch := func(id, file string) llmtest.Call {
		return llmtest.Call{ID: id, Name: "exec", Args: `{"command":"touch ` + file + `"}`}
	}
	run("s1", llmtest.Call{ID: "c1", Name: "skill", Args: `{"name":"greet"}`}).expect(t, 0)
	r := run("s1", touch("c2", "resumed.txt")).expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "resumed.txt")); err != nil || !strings.Contains(r.stderr, "✓ exec ran") {
		t.Errorf("the resumed session's skill did not pre-approve exec (%v):\n%s", err, r.stderr)
	}
	r = run("s2", touch("c3", "other.txt")).expect(t, 0)
	if _, err := os.Stat(filepath.Join(ws, "other.txt")); err == nil || !strings.Contains(r.stderr, "✗ exec blocked") {
		t.Errorf("another session found the skill active:\n%s", r.stderr)
	}
}
