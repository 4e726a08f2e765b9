package policy

import (
	"cmp"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// TestPropose: the rule offered to save when a call is approved — a
// command's prefix up to its first variable word, the directory of the
// files, the host of the URLs — and none where one rule would not cover
// the call exactly.
func TestPropose(t *testing.T) {
	t.Parallel()
	prog := func(name string, exact bool, args ...string) tool.Program {
		return tool.Program{Name: name, Args: args, Exact: exact}
	}
	for _, tc := range []struct {
		name     string
		tool     string
		args     map[string]any
		programs []tool.Program
		files    []string
		want     string
	}{
		{name: "npm script with flags", tool: "exec", programs: []tool.Program{prog("npm", true, "run", "test", "--", "--watch")}, want: "exec(npm run test:*)"},
		{name: "subcommand then path", tool: "exec", programs: []tool.Program{prog("go", true, "test", "./policy")}, want: "exec(go test:*)"},
		{name: "script name with colon", tool: "exec", programs: []tool.Program{prog("npm", true, "run", "test:unit")}, want: "exec(npm run test:unit:*)"},
		{name: "at most three words", tool: "exec", programs: []tool.Program{prog("docker", true, "compose", "up", "web")}, want: "exec(docker compose up:*)"},
		{name: "program alone", tool: "exec", programs: []tool.Program{prog("make", true)}, want: "exec(make:*)"},
		{name: "same prefix twice", tool: "exec", programs: []tool.Program{prog("git", true, "add", "-A"), prog("git", true, "add", "x.go")}, want: "exec(git add:*)"},
		{name: "two programs", tool: "exec", programs: []tool.Program{prog("npm", true, "test"), prog("curl", true, "evil.sh")}},
		{name: "an expansion", tool: "exec", programs: []tool.Program{prog("npm", false, "run")}},
		{name: "programs not known", tool: "exec"},
		{name: "a file in a directory", tool: "write", files: []string{"src/app/main.go"}, want: "write(src/app/**)"},
		{name: "files share a directory", tool: "apply_patch", files: []string{"src/app/a.go", "src/lib/b.go"}, want: "apply_patch(src/**)"},
		{name: "a file at the top", tool: "edit", files: []string{"README.md"}, want: "edit(/README.md)"},
		{name: "files at the top and below", tool: "edit", files: []string{"README.md", "src/a.go"}},
		{name: "a file outside", tool: "write", files: []string{"../etc/passwd"}},
		{name: "a glob character", tool: "write", files: []string{"src/[x]/a.go"}},
		{name: "a URL", tool: "web_fetch", args: map[string]any{"url": "https://GitHub.com./x"}, want: "web_fetch(domain:github.com)"},
		{name: "an IP address", tool: "web_fetch", args: map[string]any{"url": "http://93.184.216.34/"}, want: "web_fetch(domain:93.184.216.34)"},
		{name: "two hosts", tool: "browser", args: map[string]any{"url": "https://a.example", "targetUrl": "https://b.example"}},
		{name: "no URL", tool: "web_fetch", args: map[string]any{"url": "about:blank"}},
		{name: "other tools", tool: "message", args: map[string]any{"channel": "slack"}},
	} {
		args := tc.args
		if args == nil {
			args = map[string]any{"x": "y"}
		}
		req := Request{Meta: tool.Meta{ID: tc.tool}, Args: args, Programs: tc.programs, ProgramsListed: tc.programs != nil, Files: tc.files, FilesListed: tc.files != nil}
		p := &Policy{}
		got := p.Propose(req)
		if got != tc.want {
			t.Errorf("%s: Propose = %q, want %q", tc.name, got, tc.want)
		}
		if got != "" {
			req.Saved = []string{got}
			if d := p.Decide(req); !d.Preapproved || d.DecidedBy.Layer != "workspace" {
				t.Errorf("%s: the proposed %s does not approve the call itself: %+v", tc.name, got, d)
			}
		}
	}
}

// TestSavedRulesLayer: rules saved for the workspace allow, in advance,
// the calls they match, as the "workspace" layer; a deny or an ask of the
// configuration still wins, and a saved rule without a specifier counts
// for nothing.
func TestSavedRulesLayer(t *testing.T) {
	t.Parallel()
	npm := []tool.Program{{Name: "npm", Args: []string{"run", "test"}, Exact: true}}
	for _, tc := range []struct {
		name  string
		tool  string
		p     *Policy
		saved []string
		want  Decision
		pre   bool
	}{
		{name: "allows", saved: []string{"exec(npm run test:*)"}, want: Allow, pre: true},
		{name: "does not match", saved: []string{"exec(npm run lint:*)"}, want: Allow},
		{name: "a deny wins", p: &Policy{Tools: Rules{Deny: []string{"exec(npm *)"}}}, saved: []string{"exec(npm run test:*)"}, want: Deny},
		{name: "a deny of an agent wins", p: &Policy{Agents: map[string]Rules{"a": {Deny: []string{"exec"}}}}, saved: []string{"exec(npm run test:*)"}, want: Deny},
		{name: "an ask wins", p: &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"exec(npm:*)"}}}}}, saved: []string{"exec(npm run test:*)"}, want: Ask},
		{name: "a whole tool is not saved", saved: []string{"exec"}, want: Allow},
		{name: "another tool", tool: "read", saved: []string{"exec", "exec(npm run test:*)"}, want: Allow},
		{name: "an allow list elsewhere", p: &Policy{Tools: Rules{Allow: []string{"read"}}}, saved: []string{"exec(npm run test:*)"}, want: Deny},
	} {
		req := Request{Meta: tool.Meta{ID: cmp.Or(tc.tool, "exec")}, Args: map[string]any{"command": "npm run test"}, Programs: npm, ProgramsListed: true,
			Caller: tool.Identity{AgentID: "a"}, Saved: tc.saved}
		p := tc.p
		if p == nil {
			p = &Policy{}
		}
		d := p.Decide(req)
		if d.Decision != tc.want || d.Preapproved != tc.pre {
			t.Errorf("%s: %s (preapproved %v), want %s (%v): %+v", tc.name, d.Decision, d.Preapproved, tc.want, tc.pre, d.Verdicts)
		}
	}
}

// TestSkillLayer: the allowed-tools of a session's active skills
// pre-approve the tools they name, whole or with a specifier that holds,
// and never override a deny or an ask; they allow only, so a tool they do
// not name is decided as without them.
func TestSkillLayer(t *testing.T) {
	t.Parallel()
	npm := []tool.Program{{Name: "npm", Args: []string{"run", "test"}, Exact: true}}
	for _, tc := range []struct {
		name   string
		tool   string
		p      *Policy
		skills []string
		want   Decision
		pre    bool
	}{
		{name: "a whole tool", skills: []string{"exec"}, want: Allow, pre: true},
		{name: "an alias", skills: []string{"bash"}, want: Allow, pre: true},
		{name: "a specifier that holds", skills: []string{"exec(npm run test:*)"}, want: Allow, pre: true},
		{name: "one that does not", skills: []string{"exec(npm run lint:*)"}, want: Allow},
		{name: "over a plain allow", p: &Policy{Tools: Rules{Allow: []string{"exec", "read"}}}, skills: []string{"exec"}, want: Allow, pre: true},
		{name: "a deny wins", p: &Policy{Tools: Rules{Deny: []string{"exec"}}}, skills: []string{"exec"}, want: Deny},
		{name: "an ask wins", p: &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"exec"}}}}}, skills: []string{"exec"}, want: Ask},
		{name: "another tool is not denied", tool: "read", skills: []string{"exec"}, want: Allow},
	} {
		req := Request{Meta: tool.Meta{ID: cmp.Or(tc.tool, "exec")}, Args: map[string]any{"command": "npm run test"}, Programs: npm, ProgramsListed: true, Skills: tc.skills}
		p := tc.p
		if p == nil {
			p = &Policy{}
		}
		d := p.Decide(req)
		if d.Decision != tc.want || d.Preapproved != tc.pre || tc.pre && d.DecidedBy.Layer != "skill" {
			t.Errorf("%s: %s (preapproved %v, by %+v), want %s (%v): %+v", tc.name, d.Decision, d.Preapproved, d.DecidedBy, tc.want, tc.pre, d.Verdicts)
		}
	}
}
