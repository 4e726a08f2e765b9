package policy

import (
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/tool"
)

// meta returns the metadata a registry gives a tool of this id.
func meta(id string, opts ...func(*tool.Meta)) tool.Meta {
	m := tool.Meta{ID: id, Source: tool.SourceCore}
	if e, _, ok := catalog.Lookup(id); ok {
		m.Section, m.Profiles, m.OwnerOnly = e.Section, e.Profiles, e.OwnerOnly
	}
	for _, o := range opts {
		o(&m)
	}
	return m.WithDefaults()
}

func mcpTool(server, name string) tool.Meta {
	return meta(server+"__"+name, func(m *tool.Meta) {
		m.Section, m.Source, m.Groups = "mcp", tool.SourceMCP, []string{"mcp:" + server}
	})
}

func TestDecisionMatrix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy *Policy
		req    Request
		want   Decision
		reason string // part of Result.Reason
	}{
		{"no rules allow", &Policy{}, Request{Meta: meta("exec"), Caller: tool.Identity{Owner: true}}, Allow, ""},
		{"deny by name", &Policy{Tools: Rules{Deny: []string{"exec"}}}, Request{Meta: meta("exec")}, Deny, "global: deny exec"},
		{"bash means exec", &Policy{Tools: Rules{Deny: []string{"bash"}}}, Request{Meta: meta("exec")}, Deny, "deny bash"},
		{"deny wins within a layer", &Policy{Tools: Rules{Allow: []string{"exec"}, Deny: []string{"exec"}}}, Request{Meta: meta("exec")}, Deny, ""},
		{"empty allow allows all", &Policy{Tools: Rules{Allow: nil}}, Request{Meta: meta("read")}, Allow, ""},
		{"allow list excludes others", &Policy{Tools: Rules{Allow: []string{"read"}}}, Request{Meta: meta("write")}, Deny, "not in the allow list"},
		{"allow list includes", &Policy{Tools: Rules{Allow: []string{"read", "write"}}}, Request{Meta: meta("write")}, Allow, ""},
		{"write covers apply_patch (allow)", &Policy{Tools: Rules{Allow: []string{"write"}}}, Request{Meta: meta("apply_patch")}, Allow, ""},
		{"write covers apply_patch (deny)", &Policy{Tools: Rules{Deny: []string{"write"}}}, Request{Meta: meta("apply_patch")}, Deny, ""},
		{"edit does not cover apply_patch", &Policy{Tools: Rules{Deny: []string{"edit"}}}, Request{Meta: meta("apply_patch")}, Allow, ""},
		{"write covers edit (deny)", &Policy{Tools: Rules{Deny: []string{"write"}}}, Request{Meta: meta("edit")}, Deny, "deny write"},
		{"write covers edit (ask)", &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"write"}}}}}, Request{Meta: meta("edit"), Args: map[string]any{}}, Ask, "global: ask write"},
		{"write does not cover exec", &Policy{Tools: Rules{Deny: []string{"write"}}}, Request{Meta: meta("exec")}, Allow, ""},
		{"write does not cover a plugin's tool", &Policy{Tools: Rules{Deny: []string{"write"}}}, Request{Meta: meta("write_notes")}, Allow, ""},
		{"edit does not cover write", &Policy{Tools: Rules{Deny: []string{"edit"}}}, Request{Meta: meta("write")}, Allow, ""},
		{"group", &Policy{Tools: Rules{Deny: []string{"group:runtime"}}}, Request{Meta: meta("process")}, Deny, "deny group:runtime"},
		{"group mcp server", &Policy{Tools: Rules{Deny: []string{"group:mcp:github"}}}, Request{Meta: mcpTool("github", "create_issue")}, Deny, ""},
		{"other mcp server", &Policy{Tools: Rules{Deny: []string{"group:mcp:github"}}}, Request{Meta: mcpTool("gitlab", "create_issue")}, Allow, ""},
		{"glob", &Policy{Tools: Rules{Deny: []string{"github__*"}}}, Request{Meta: mcpTool("github", "delete_repo")}, Deny, ""},
		{"glob middle", &Policy{Tools: Rules{Deny: []string{"*__delete_*"}}}, Request{Meta: mcpTool("gitlab", "delete_branch")}, Deny, ""},
		{"glob no match", &Policy{Tools: Rules{Deny: []string{"web_*"}}}, Request{Meta: meta("read")}, Allow, ""},
		{"profile", &Policy{Tools: Rules{Profile: "minimal"}}, Request{Meta: meta("read")}, Deny, "not in profile minimal"},
		{"profile alsoAllow", &Policy{Tools: Rules{Profile: "minimal", AlsoAllow: []string{"read"}}}, Request{Meta: meta("read")}, Allow, ""},
		{"profile full", &Policy{Tools: Rules{Profile: "full"}}, Request{Meta: meta("browser")}, Allow, ""},
		{"ask", &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"write"}}}}}, Request{Meta: meta("write"), Args: map[string]any{"path": "a"}}, Ask, "global: ask write"},
		{"deny beats ask across layers", &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"exec"}}}}, Agents: map[string]Rules{"bot": {Deny: []string{"exec"}}}},
			Request{Meta: meta("exec"), Caller: tool.Identity{AgentID: "bot"}, Args: map[string]any{}}, Deny, "agent bot: deny exec"},
		{"ask beats allow across layers", &Policy{Tools: Rules{Allow: []string{"exec"}}, Channels: map[string]Rules{"slack": {Ask: []AskRule{{Tools: []string{"exec"}}}}}},
			Request{Meta: meta("exec"), Caller: tool.Identity{Channel: "slack"}, Args: map[string]any{}}, Ask, "channel slack: ask exec"},
		{"every layer must pass", &Policy{Tools: Rules{Allow: []string{"exec", "read"}}, Agents: map[string]Rules{"bot": {Allow: []string{"read"}}}},
			Request{Meta: meta("exec"), Caller: tool.Identity{AgentID: "bot"}}, Deny, "agent bot: not in the allow list"},
		{"other agent unaffected", &Policy{Agents: map[string]Rules{"bot": {Deny: []string{"exec"}}}}, Request{Meta: meta("exec"), Caller: tool.Identity{AgentID: "other"}}, Allow, ""},
		{"provider", &Policy{Tools: Rules{ByProvider: map[string]Rules{"openai": {Deny: []string{"exec"}}}}}, Request{Meta: meta("exec"), Provider: "OpenAI"}, Deny, "provider openai"},
		{"provider/model", &Policy{Tools: Rules{ByProvider: map[string]Rules{"openai/gpt-5": {Deny: []string{"exec"}}}}}, Request{Meta: meta("exec"), Provider: "openai", Model: "gpt-5"}, Deny, "provider openai/gpt-5"},
		{"provider/model other model", &Policy{Tools: Rules{ByProvider: map[string]Rules{"openai/gpt-5": {Deny: []string{"exec"}}}}}, Request{Meta: meta("exec"), Provider: "openai", Model: "gpt-4o"}, Allow, ""},
		{"agent and provider", &Policy{Agents: map[string]Rules{"bot": {ByProvider: map[string]Rules{"xai": {Deny: []string{"group:web"}}}}}},
			Request{Meta: meta("web_fetch"), Caller: tool.Identity{AgentID: "bot"}, Provider: "xai"}, Deny, "agent bot provider xai"},
		{"sandbox layer", &Policy{Sandbox: Rules{Deny: []string{"exec"}}}, Request{Meta: meta("exec"), Caller: tool.Identity{Sandboxed: true}}, Deny, "sandbox"},
		{"sandbox layer only when sandboxed", &Policy{Sandbox: Rules{Deny: []string{"exec"}}}, Request{Meta: meta("exec")}, Allow, ""},
		{"subagent layer", &Policy{Subagents: Rules{Allow: []string{"read"}}}, Request{Meta: meta("exec"), Caller: tool.Identity{Subagent: true}}, Deny, "subagent"},
		{"owner-only for non-owner", &Policy{}, Request{Meta: meta("cron")}, Deny, OwnerOnlyReason},
		{"owner-only for owner", &Policy{}, Request{Meta: meta("cron"), Caller: tool.Identity{Owner: true}}, Allow, ""},
		{"owner-only by policy", &Policy{OwnerOnly: []string{"group:runtime"}}, Request{Meta: meta("exec")}, Deny, OwnerOnlyReason},
		{"owner-only by metadata", &Policy{}, Request{Meta: meta("mine", func(m *tool.Meta) { m.OwnerOnly = true })}, Deny, OwnerOnlyReason},
	} {
		got := tc.policy.Decide(tc.req)
		if got.Decision != tc.want || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: %v %q, want %v %q (verdicts %+v)", tc.name, got.Decision, got.Reason, tc.want, tc.reason, got.Verdicts)
		}
	}
}

func TestAskConditions(t *testing.T) {
	t.Parallel()
	p := &Policy{Tools: Rules{Ask: []AskRule{
		{Tools: []string{"exec"}, When: map[string][]string{"command": {"rm -rf *", "git push*"}}},
		{Tools: []string{"write", "edit"}, When: map[string][]string{"path": {"**/.env*"}}},
	}}}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want Decision
		rule string
	}{
		{"exec", map[string]any{"command": "rm -rf /tmp/x"}, Ask, `ask exec when command matches "rm -rf *"`},
		{"exec", map[string]any{"command": "RM -RF build"}, Ask, ""},
		{"exec", map[string]any{"command": "cd repo && git push origin main"}, Ask, `"git push*"`},
		{"exec", map[string]any{"command": "make; rm -rf dist | tee log"}, Ask, ""},
		{"exec", map[string]any{"command": "ls -la"}, Allow, ""},
		{"exec", map[string]any{"command": "echo 'git push'"}, Allow, ""},
		{"exec", map[string]any{}, Allow, ""},
		{"write", map[string]any{"path": ".env"}, Ask, `path matches "**/.env*"`},
		{"write", map[string]any{"path": "config/.env.local"}, Ask, ""},
		{"edit", map[string]any{"path": "a/b/.envrc"}, Ask, ""},
		{"apply_patch", map[string]any{"path": ".env"}, Ask, ""}, // write covers apply_patch
		{"write", map[string]any{"path": "src/env.go"}, Allow, ""},
		{"read", map[string]any{"path": ".env"}, Allow, ""},
	} {
		got := p.Decide(Request{Meta: meta(tc.tool), Args: tc.args, FilesListed: true})
		if got.Decision != tc.want || !strings.Contains(got.Reason, tc.rule) {
			t.Errorf("%s %v: %v %q, want %v %q", tc.tool, tc.args, got.Decision, got.Reason, tc.want, tc.rule)
		}
	}
	// A layer whose ask rule names the tool, with conditions that do not
	// hold, says so rather than that no rule names it.
	got := p.Decide(Request{Meta: meta("exec"), Args: map[string]any{"command": "ls -la"}, FilesListed: true})
	if want := `ask exec only when command matches "rm -rf *" or "git push*", which does not hold`; len(got.Verdicts) == 0 || got.Verdicts[len(got.Verdicts)-1].Rule != want {
		t.Errorf("verdicts %+v, want the global layer's rule %q", got.Verdicts, want)
	}
	got = p.Decide(Request{Meta: meta("exec")})
	if want := `ask exec when command matches "rm -rf *" or "git push*": depends on the call's arguments`; len(got.Verdicts) == 0 || got.Verdicts[len(got.Verdicts)-1].Rule != want {
		t.Errorf("verdicts without arguments %+v, want %q", got.Verdicts, want)
	}
	// Offering ignores argument conditions: exec is still offered.
	if !p.Offers(Request{Meta: meta("exec")}) {
		t.Error("exec not offered")
	}
	deny := &Policy{Tools: Rules{Deny: []string{"exec"}}}
	if deny.Offers(Request{Meta: meta("exec")}) || !deny.Offers(Request{Meta: meta("read")}) {
		t.Error("Offers")
	}
}

// TestFileConditions: a condition on files is about the files a call
// touches — the paths it names under any file key, as given or cleaned,
// and the files it would change — and holds, failing closed, when they
// are not all known.
func TestFileConditions(t *testing.T) {
	t.Parallel()
	goFiles := &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"write"}, When: map[string][]string{"path": {"*.go"}}}}}}
	secrets := &Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"exec", "mine", "read"}, When: map[string][]string{"file_path": {"secrets/**", "*.key"}}}}}}
	patch := map[string]any{"patch": "*** Begin Patch\n…"}
	for _, tc := range []struct {
		name   string
		policy *Policy
		tool   string
		args   map[string]any
		files  []string
		listed bool
		want   Decision
		rule   string
	}{
		{"write a Go file", goFiles, "write", map[string]any{"path": "main.go"}, []string{"main.go"}, true, Ask, `ask write when path matches "*.go"`},
		{"write another file", goFiles, "write", map[string]any{"path": "notes.txt"}, []string{"notes.txt"}, true, Allow, ""},
		{"edit a Go file", goFiles, "edit", map[string]any{"path": "cmd/x.go"}, []string{"cmd/x.go"}, true, Ask, `ask write when path matches "*.go"`},
		{"a path cleaned", goFiles, "edit", map[string]any{"path": "./a/../b.go"}, nil, true, Ask, ""},
		{"a link to a Go file", goFiles, "write", map[string]any{"path": "link.txt"}, []string{"real.go"}, true, Ask, ""},
		{"another case", goFiles, "write", map[string]any{"path": "MAIN.GO"}, []string{"MAIN.GO"}, true, Ask, ""},
		{"a patch moving a Go file", goFiles, "apply_patch", patch, []string{"cmd/app/main.txt", "main.go"}, true, Ask, `ask write when path matches "*.go"`},
		{"a patch adding a Go file", goFiles, "apply_patch", patch, []string{"new.go"}, true, Ask, ""},
		{"a patch of text files", goFiles, "apply_patch", patch, []string{"a.txt", "b.md"}, true, Allow, ""},
		{"a preview that failed", goFiles, "edit", map[string]any{"path": "a.txt"}, nil, false, Ask, `path may match "*.go" (the files the call would change are not known)`},
		{"exec is not a write", goFiles, "exec", map[string]any{"command": "sed -i s/a/b/ main.go"}, nil, false, Allow, ""},
		{"exec named: its files are not known", secrets, "exec", map[string]any{"command": "ls"}, nil, false, Ask, `file_path may match "secrets/**" or "*.key"`},
		{"a file key spelled file", secrets, "mine", map[string]any{"file": "secrets/db"}, nil, true, Ask, `file_path matches "secrets/**"`},
		{"a file key spelled filePath", secrets, "mine", map[string]any{"filePath": "id.KEY"}, nil, true, Ask, `file_path matches "*.key"`},
		{"a list of paths", secrets, "mine", map[string]any{"paths": []any{"a", "secrets/db"}}, nil, true, Ask, ""},
		{"a list of other paths", secrets, "mine", map[string]any{"paths": []any{"a", "b"}}, nil, true, Allow, ""},
		{"a read the bridge resolves", secrets, "read", map[string]any{"path": "public/link"}, []string{"secrets/db"}, true, Ask, ""},
		{"a read elsewhere", secrets, "read", map[string]any{"path": "public/a"}, []string{"public/a"}, true, Allow, ""},
	} {
		req := Request{Meta: meta(tc.tool), Args: tc.args, Files: tc.files, FilesListed: tc.listed}
		got := tc.policy.Decide(req)
		if got.Decision != tc.want || !strings.Contains(got.Reason, tc.rule) {
			t.Errorf("%s: %v %q, want %v %q", tc.name, got.Decision, got.Reason, tc.want, tc.rule)
		}
		req.Args = nil // offering the tool: no condition applies
		if got := tc.policy.Decide(req); got.Decision != Allow {
			t.Errorf("%s, offered: %v %q", tc.name, got.Decision, got.Reason)
		}
	}
	for _, key := range []string{"path", "Paths", "file", "files", "file_path", "filePath", "FILE_PATH", "file-paths", "filename", "file_name"} {
		if !IsFileKey(key) {
			t.Errorf("%s is not a file key", key)
		}
	}
	for _, key := range []string{"command", "content", "patch", "pathological", "url", "dir"} {
		if IsFileKey(key) {
			t.Errorf("%s is a file key", key)
		}
	}
	if !goFiles.UsesFiles() || !secrets.UsesFiles() {
		t.Error("conditions on files, UsesFiles false")
	}
	if (&Policy{Tools: Rules{Ask: []AskRule{{Tools: []string{"exec"}, When: map[string][]string{"command": {"rm *"}}}}}}).UsesFiles() {
		t.Error("a condition on a command, UsesFiles true")
	}
}

func TestVerdictsPerLayer(t *testing.T) {
	t.Parallel()
	p := &Policy{
		Tools:    Rules{Profile: "coding", AlsoAllow: []string{"web_fetch"}, Allow: []string{"group:fs", "web_fetch"}, ByProvider: map[string]Rules{"openai": {Ask: []AskRule{{Tools: []string{"web_fetch"}}}}}},
		Agents:   map[string]Rules{"main": {Allow: []string{"*"}}},
		Channels: map[string]Rules{"discord": {Deny: []string{"exec"}}},
	}
	got := p.Decide(Request{Meta: meta("web_fetch"), Args: map[string]any{}, Caller: tool.Identity{AgentID: "main", Channel: "discord"}, Provider: "openai"})
	var layers []string
	for _, v := range got.Verdicts {
		layers = append(layers, v.Layer+"="+v.Decision.String()+"("+v.Rule+")")
	}
	want := "profile=allow(alsoAllow web_fetch) global=allow(allow web_fetch) provider openai=ask(ask web_fetch) agent main=allow(allow *) channel discord=none(no rule names it)"
	if strings.Join(layers, " ") != want || got.Decision != Ask {
		t.Errorf("verdicts %s\nwant     %s", strings.Join(layers, " "), want)
	}
}

// TestUsesArgs: a policy says it looks at arguments when an ask rule of any
// layer has conditions; when none has, deciding with the arguments and
// without them gives the same result (the pipeline then does not decode
// them).
func TestUsesArgs(t *testing.T) {
	t.Parallel()
	when := []AskRule{{Tools: []string{"exec"}, When: map[string][]string{"command": {"rm *"}}}}
	plain := []AskRule{{Tools: []string{"exec", "write"}}}
	for name, p := range map[string]*Policy{
		"global":          {Tools: Rules{Ask: when}},
		"global provider": {Tools: Rules{ByProvider: map[string]Rules{"openai": {Ask: when}}}},
		"agent":           {Agents: map[string]Rules{"main": {Ask: when}}},
		"agent provider":  {Agents: map[string]Rules{"main": {ByProvider: map[string]Rules{"xai/grok": {Ask: when}}}}},
		"channel":         {Channels: map[string]Rules{"mcp": {Ask: when}}},
		"sandbox":         {Sandbox: Rules{Ask: when}},
		"subagents":       {Subagents: Rules{Ask: when}},
	} {
		if !p.UsesArgs() {
			t.Errorf("%s: a condition on arguments, UsesArgs false", name)
		}
	}
	policies := []*Policy{
		{},
		{Tools: Rules{Profile: "coding", Ask: plain, Deny: []string{"process"}}},
		{Tools: Rules{Allow: []string{"group:fs"}, ByProvider: map[string]Rules{"openai": {Ask: plain}}}, OwnerOnly: []string{"write"}},
		{Agents: map[string]Rules{"main": {Ask: plain}}, Channels: map[string]Rules{"mcp": {Deny: []string{"exec"}}}, Sandbox: Rules{Ask: plain}, Subagents: Rules{Deny: []string{"write"}}},
	}
	for i, p := range policies {
		if p.UsesArgs() {
			t.Errorf("policy %d has no conditions, UsesArgs true", i)
		}
		for _, id := range []string{"exec", "write", "read", "process"} {
			for _, req := range []Request{
				{Meta: meta(id), Caller: tool.Identity{AgentID: "main", Channel: "mcp", Sandboxed: true, Subagent: true}, Provider: "openai"},
				{Meta: meta(id), Caller: tool.Identity{Owner: true}, Provider: "xai", Model: "grok"},
			} {
				without := p.Decide(req)
				req.Args = map[string]any{"command": "rm -rf /", "path": ".env"}
				with := p.Decide(req)
				if with.Decision != without.Decision || with.Reason != without.Reason || len(with.Verdicts) != len(without.Verdicts) {
					t.Errorf("policy %d, %s: with arguments %+v, without %+v", i, id, with, without)
				}
			}
		}
	}
}

// TestReplace: a policy replaced decides, offers and reports its rules as
// the new one, for whoever holds it; replaced by itself (or nil), it
// decides by its own rules again.
func TestReplace(t *testing.T) {
	t.Parallel()
	p := &Policy{}
	if d := p.Decide(Request{Meta: meta("read")}).Decision; d != Allow {
		t.Fatalf("before: %s", d)
	}
	p.Replace(&Policy{Tools: Rules{Deny: []string{"read"}, Ask: []AskRule{{Tools: []string{"exec"}, When: map[string][]string{"command": {"rm *"}}}}}})
	if d := p.Decide(Request{Meta: meta("read")}).Decision; d != Deny || p.Offers(Request{Meta: meta("read")}) {
		t.Errorf("after the replacement read is %s, offered %v; want denied", d, p.Offers(Request{Meta: meta("read")}))
	}
	if !p.UsesArgs() {
		t.Error("UsesArgs does not see the replacement's ask rule on arguments")
	}
	p.Replace(p)
	if d := p.Decide(Request{Meta: meta("read")}).Decision; d != Allow || p.UsesArgs() {
		t.Errorf("replaced by itself: read is %s, UsesArgs %v", d, p.UsesArgs())
	}
}

// TestModeSwitchConfigure: configured modes change for the next call; a
// mode Set chose stays in force.
func TestModeSwitchConfigure(t *testing.T) {
	t.Parallel()
	s := NewModeSwitch(ModeDefault, nil)
	s.Configure(ModePlan, map[string]Mode{"coder": ModeAcceptEdits})
	if s.For("") != ModePlan || s.For("coder") != ModeAcceptEdits {
		t.Errorf("configured: %s, coder %s", s.For(""), s.For("coder"))
	}
	s.Set(ModeDontAsk)
	s.Configure("", nil)
	if s.For("coder") != ModeDontAsk {
		t.Errorf("a mode set is overridden by the configuration: %s", s.For("coder"))
	}
}
