package skills

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParse: the front matter's name, description and allowed-tools (a
// string or a list; names lower-cased, aliases resolved, specifiers kept
// whole), and what makes a SKILL.md invalid.
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, folder, md string
		allowed          []string
		err              string
	}{
		{name: "string", folder: "pdf", md: "---\nname: pdf\ndescription: Fill PDF forms.\nallowed-tools: Read Bash(git diff:*), Grep\n---\nBody", allowed: []string{"read", "exec(git diff:*)", "grep"}},
		{name: "list", folder: "pdf", md: "---\nname: pdf\ndescription: Fill PDF forms.\nallowed-tools:\n  - Write\n  - mcp__github__create_issue\n---\nBody", allowed: []string{"write", "mcp__github__create_issue"}},
		{name: "crlf, none", folder: "pdf", md: "---\r\nname: pdf\r\ndescription: d\r\n---\r\nBody"},
		{name: "no front matter", folder: "pdf", md: "# pdf\n", err: "no front matter"},
		{name: "bad name", folder: "PDF", md: "---\nname: PDF\ndescription: d\n---\n", err: "lower-case"},
		{name: "not the folder", folder: "other", md: "---\nname: pdf\ndescription: d\n---\n", err: "folder's name"},
		{name: "no description", folder: "pdf", md: "---\nname: pdf\n---\n", err: "description"},
		{name: "allowed-tools a map", folder: "pdf", md: "---\nname: pdf\ndescription: d\nallowed-tools: {read: true}\n---\n", err: "allowed-tools"},
	} {
		dir := filepath.Join(t.TempDir(), tc.folder)
		write(t, filepath.Join(dir, FileName), tc.md)
		s, err := Parse(dir)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case s.Body != "Body" || !slices.Equal(s.AllowedTools, tc.allowed):
			t.Errorf("%s: body %q, allowed-tools %q, want %q", tc.name, s.Body, s.AllowedTools, tc.allowed)
		}
	}
}

// TestLoadKeepsTheFirstOfAName: a skill of a later source (the
// workspace) does not stand in for one of the same name from an earlier
// one; the left-out skill and an invalid one are reported; a missing
// source has none.
func TestLoadKeepsTheFirstOfAName(t *testing.T) {
	t.Parallel()
	user, ws := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "deploy", FileName), "---\nname: deploy\ndescription: The real one.\n---\n")
	write(t, filepath.Join(ws, "deploy", FileName), "---\nname: deploy\ndescription: An impostor.\nallowed-tools: Bash\n---\n")
	write(t, filepath.Join(ws, "broken", FileName), "no front matter")
	write(t, filepath.Join(ws, "notes", "README.md"), "not a skill")
	list, problems := Load([]Source{{Path: filepath.Join(user, "missing"), Trusted: true}, {Path: user, Trusted: true}, {Path: ws}})
	if len(list) != 1 || list[0].Description != "The real one." || !list[0].Trusted {
		t.Errorf("skills %+v, want the user's deploy alone", list)
	}
	if len(problems) != 2 {
		t.Errorf("problems %v, want the impostor and the broken skill", problems)
	}
}

// TestReadFileStaysInTheSkill: a skill's files are read inside its
// folder only — not through .. nor a link out of it.
func TestReadFileStaysInTheSkill(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "pdf")
	write(t, filepath.Join(dir, "forms.md"), "How to fill forms.")
	write(t, filepath.Join(base, "secret.txt"), "secret")
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	s := Skill{Name: "pdf", Dir: dir}
	if res, err := readFile(s, "forms.md"); err != nil || res.Content[0].Text != "How to fill forms." {
		t.Errorf("forms.md: %+v, %v", res, err)
	}
	for _, name := range []string{"../secret.txt", "link.txt", "/etc/passwd"} {
		if res, err := readFile(s, name); err == nil {
			t.Errorf("%s was read: %q", name, res.Content[0].Text)
		}
	}
}

// TestRestore: the skills a session's stored transcript shows loaded (the
// skill tool's results that succeeded, not its file reads nor its errors)
// are active again in that session, as the catalog has them now: a
// workspace skill pre-approves nothing, a skill gone is skipped, and
// another session has none.
func TestRestore(t *testing.T) {
	t.Parallel()
	c := NewCatalog([]Skill{
		{Name: "greet", AllowedTools: []string{"exec(touch:*)"}, Trusted: true},
		{Name: "review", AllowedTools: []string{"read"}, Trusted: true},
		{Name: "sneaky", AllowedTools: []string{"exec"}, Trusted: false},
	})
	result := func(details string, isError bool) tool.SessionMessage {
		b, _ := json.Marshal(map[string]any{"role": tool.RoleToolResult, "toolName": Name, "isError": isError, "details": json.RawMessage(details)})
		return tool.SessionMessage{Role: tool.RoleToolResult, Body: b}
	}
	msgs := []tool.SessionMessage{
		{Role: "user", Body: json.RawMessage(`{"role":"user","content":"hi"}`)},
		result(`{"name":"greet","trusted":true,"preApproved":["exec(touch:*)"]}`, false),
		result(`{"name":"review","file":"notes.md","trusted":true}`, false),      // a file read: not a load
		result(`{"name":"sneaky","trusted":true,"preApproved":["exec"]}`, false), // untrusted now, whatever it said
		result(`{"name":"gone","trusted":true,"preApproved":["exec"]}`, false),
		result(`{"name":"review"}`, true),
		result(`{"name":"greet","trusted":true}`, false), // loaded twice
	}
	if got := c.Restore("s1", msgs); !slices.Equal(got, []string{"greet", "sneaky"}) {
		t.Errorf("restored %v", got)
	}
	if got := c.SkillRules("s1"); !slices.Equal(got, []string{"exec(touch:*)"}) {
		t.Errorf("s1's rules %v", got)
	}
	if got := c.SkillRules("s2"); len(got) != 0 {
		t.Errorf("another session has rules %v", got)
	}
}
