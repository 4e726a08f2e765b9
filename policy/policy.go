// Package policy decides which tools a caller may use: layers of allow,
// deny and ask rules — profile, global, provider, agent, agent and provider,
// channel, principal, sandbox, sub-agent, and the rules saved for the
// workspace — and owner-only tools. A tool must pass every
// layer; across layers a deny wins over an ask, and an ask over an allow.
// The same decision filters the tools offered to a model (a denied tool is
// never even described) and is checked again when a call arrives.
package policy

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Decision is what a layer, or the whole policy, says about a call.
type Decision uint8

// The decisions, weakest first.
const (
	// None: the layer has no rule about the tool.
	None Decision = iota
	Allow
	Ask
	Deny
)

var decisionNames = [...]string{"none", "allow", "ask", "deny"}

func (d Decision) String() string { return decisionNames[d] }

// MarshalText writes the decision's name.
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a decision's name.
func (d *Decision) UnmarshalText(b []byte) error {
	for i, n := range decisionNames {
		if n == string(b) {
			*d = Decision(i)
			return nil
		}
	}
	return fmt.Errorf("unknown decision %q: use none, allow, ask or deny", b)
}

// Rules is one layer of policy.
type Rules struct {
	// Profile limits the layer to a profile's tools (plus AlsoAllow).
	Profile string
	// Allow, when not empty, allows only the tools it names.
	Allow     []string
	AlsoAllow []string
	// Deny removes tools; within a layer it wins.
	Deny []string
	// Ask requires confirmation for matching calls.
	Ask []AskRule
	// ByProvider holds rules for a provider ("openai") or a model
	// ("openai/gpt-5"); they form their own layer.
	ByProvider map[string]Rules
}

// AskRule requires confirmation for calls of Tools, when every condition of
// When holds: the argument it names matches one of its patterns (a *
// matches anything, **/ any directories; case is ignored). A command
// argument matches when the whole command or any command chained in it
// (&&, ||, ;, |, newlines) matches.
//
// A condition on files — keyed path, file, file_path, paths, … (see
// [IsFileKey]) — is about the files the call touches, not about one
// argument: it holds when any path the call names (under any of those
// keys) or would change ([Request.Files]) matches, and, failing closed,
// whenever the files the call would change are not known
// ([Request.FilesListed]).
type AskRule struct {
	Tools []string
	When  map[string][]string
}

// Policy is the whole tool policy.
type Policy struct {
	// Tools is the global layer; its profile and alsoAllow form the profile
	// layer.
	Tools Rules
	// Agents, Channels, Principals: per agent id, per channel or group,
	// and per principal (who the caller authenticated as).
	Agents     map[string]Rules
	Channels   map[string]Rules
	Principals map[string]Rules
	// Sandbox applies to sandboxed callers, Subagents to sub-agents.
	Sandbox   Rules
	Subagents Rules
	// OwnerOnly names tools, besides those whose metadata says so, that only
	// the owner may use.
	OwnerOnly []string

	globs sync.Map // pattern → *regexp.Regexp
	rules sync.Map // reference → rule
	// next, once Replace has set it, is the policy p decides as.
	next atomic.Pointer[Policy]
}

// Replace makes p decide as q from now on: Decide, Offers, Propose and the
// Uses methods of p answer as q's do, for whoever holds p — the runners
// made with it, the console. A running server applies a changed
// configuration's rules with it; a call already past its policy step is
// not decided again. q's fields are not to be changed after.
func (p *Policy) Replace(q *Policy) {
	if q == p {
		q = nil
	}
	p.next.Store(q.current())
}

// Snapshot is the policy p decides as now, fixed: a later Replace does
// not change it. A call decided in several steps (what the rules look at,
// then the decision) takes one snapshot, so a Replace between the steps
// cannot mix two policies.
func (p *Policy) Snapshot() *Policy { return p.current() }

// current is the policy p decides as: the latest Replace's, or p.
func (p *Policy) current() *Policy {
	if p == nil {
		return nil
	}
	if q := p.next.Load(); q != nil {
		return q
	}
	return p
}

// Request is a call, or a tool to offer, as policy sees it.
type Request struct {
	Meta tool.Meta
	// Args are the call's arguments; nil when deciding whether to offer the
	// tool at all (ask rules with conditions then do not apply).
	Args map[string]any
	// Files are the files the call touches, as the pipeline works them out
	// when a rule has a condition on files: the paths it names and the
	// files its tool's preview says it would change, relative to the
	// workspace, cleaned, with links resolved. FilesListed says they
	// include every file the call would change (its tool is read-only, or
	// lists its changes: write, edit, apply_patch); when it is false, a
	// condition on files holds whatever the paths.
	Files       []string
	FilesListed bool
	// Programs are the programs a command would start, as its tool's
	// preview lists them, when a rule has a command specifier;
	// ProgramsListed says the list is complete (the command parsed and
	// names each program it starts).
	Programs       []tool.Program
	ProgramsListed bool
	// Saved are the allow rules a person saved for the call's workspace
	// from an approval ("exec(npm run test:*)"): the "workspace" layer.
	// Only rules with a specifier count, and like every allow they never
	// override a deny or an ask of another layer.
	Saved []string
	// Skills are the allowed-tools of the skills active in the caller's
	// session ("read", "exec(git diff:*)"): the "skill" layer. A tool one
	// names is pre-approved, with or without a specifier; it only allows,
	// so a deny or an ask of another layer still wins.
	Skills []string
	// Caller is who calls: its agent, channel, sandbox and sub-agent flags
	// select those layers, and its owner flag (true only when the caller is
	// known to be the owner) the owner-only tools.
	Caller tool.Identity
	// Provider and Model are the model provider and model that made the
	// call, for the provider layers.
	Provider string
	Model    string
}

// Verdict is one layer's decision and the rule behind it.
type Verdict struct {
	Layer    string   `json:"layer"`
	Decision Decision `json:"decision"`
	Rule     string   `json:"rule,omitempty"`
	// Specific says the rule has a specifier that holds for the call
	// ("allow exec(npm run test:*)"); see [Result.Preapproved].
	Specific bool `json:"specific,omitempty"`
}

// Result is the policy's decision about a request.
type Result struct {
	Decision Decision  `json:"decision"`
	Verdicts []Verdict `json:"verdicts"`
	// DecidedBy is the verdict that decided: of those with the final
	// decision, the most specific, the first of equals (empty when no
	// layer has a rule).
	DecidedBy Verdict `json:"decidedBy,omitzero"`
	// Preapproved says an allow rule with a specifier decided: the call
	// was approved in advance, and runs without a person being asked.
	Preapproved bool `json:"preapproved,omitempty"`
	// Reason explains a deny or an ask in words for the model and the person.
	Reason string `json:"reason,omitempty"`
}

// OwnerOnlyReason is what a caller not known to be the owner is told.
const OwnerOnlyReason = "Tool restricted to owner senders."

// Decide evaluates every layer for req.
func (p *Policy) Decide(req Request) Result {
	p = p.current()
	var res Result
	add := func(v Verdict) { res.Verdicts = append(res.Verdicts, v) }
	ownerOnly := req.Meta.OwnerOnly || slices.ContainsFunc(p.OwnerOnly, func(ref string) bool { return p.Matches(&req.Meta, ref) })
	if ownerOnly {
		if req.Caller.Owner {
			add(Verdict{Layer: "owner", Decision: Allow, Rule: "owner-only tool, caller is the owner"})
		} else {
			add(Verdict{Layer: "owner", Decision: Deny, Rule: "owner-only tool, caller not known to be the owner"})
		}
	}
	if r := p.Tools; r.Profile != "" {
		d, rule := p.profile(&req.Meta, r.Profile, r.AlsoAllow)
		add(Verdict{Layer: "profile", Decision: d, Rule: rule})
	}
	global := p.Tools
	global.Profile = "" // its own layer, above
	p.layer(req, "global", global, add)
	provider := strings.ToLower(req.Provider)
	model := strings.ToLower(req.Model)
	p.providers(req, "provider", p.Tools.ByProvider, provider, model, add)
	if agent := req.Caller.AgentID; agent != "" {
		if r, ok := p.Agents[agent]; ok {
			p.layer(req, "agent "+agent, r, add)
			p.providers(req, "agent "+agent+" provider", r.ByProvider, provider, model, add)
		}
	}
	if channel := req.Caller.Channel; channel != "" {
		if r, ok := p.Channels[channel]; ok {
			p.layer(req, "channel "+channel, r, add)
		}
	}
	if principal := req.Caller.Principal; principal != "" {
		if r, ok := p.Principals[principal]; ok {
			p.layer(req, "principal "+principal, r, add)
		}
	}
	if req.Caller.Sandboxed {
		p.layer(req, "sandbox", p.Sandbox, add)
	}
	if req.Caller.Subagent {
		p.layer(req, "subagent", p.Subagents, add)
	}
	if saved := slices.DeleteFunc(slices.Clone(req.Saved), func(ref string) bool { return !p.specific(ref) }); len(saved) > 0 {
		p.layer(req, "workspace", Rules{Allow: saved}, add)
	}
	skill, bySkill := p.best(req, req.Skills, true)
	if bySkill {
		add(Verdict{Layer: "skill", Decision: Allow, Rule: "allow " + skill, Specific: p.specific(skill)})
	}
	for _, v := range res.Verdicts {
		if v.Decision > res.Decision {
			res.Decision = v.Decision
		}
	}
	if res.Decision == None {
		res.Decision = Allow
	}
	for _, v := range res.Verdicts {
		if v.Decision == res.Decision && (res.DecidedBy.Layer == "" || v.Specific && !res.DecidedBy.Specific) {
			res.DecidedBy = v
		}
	}
	if bySkill && res.Decision == Allow && !res.DecidedBy.Specific {
		res.DecidedBy = res.Verdicts[len(res.Verdicts)-1]
	}
	res.Preapproved = res.Decision == Allow && (res.DecidedBy.Specific || bySkill)
	res.Reason = p.reason(req, res, ownerOnly)
	return res
}

// reason words the decision for the model.
func (p *Policy) reason(req Request, res Result, ownerOnly bool) string {
	switch res.Decision {
	case Deny:
		if ownerOnly && !req.Caller.Owner {
			return OwnerOnlyReason
		}
		v := res.DecidedBy
		if v.Specific {
			return fmt.Sprintf("This call of %s is not allowed here (%s: %s).", req.Meta.ID, v.Layer, v.Rule)
		}
		return fmt.Sprintf("Tool %s is not allowed here (%s: %s).", req.Meta.ID, v.Layer, v.Rule)
	case Ask:
		return fmt.Sprintf("%s: %s", res.DecidedBy.Layer, res.DecidedBy.Rule)
	}
	return ""
}

// UsesArgs reports whether Decide looks at a call's arguments: whether an
// ask rule of some layer has conditions on them. When none has, Decide
// gives the same result with Args nil, and a caller need not decode them.
func (p *Policy) UsesArgs() bool {
	p = p.current()
	return p.anyRule(func(a AskRule) bool { return len(a.When) > 0 }, func(r rule) bool { return r.kind != wholeTool })
}

// UsesFiles reports whether Decide looks at the files a call touches:
// whether an ask rule of some layer has a condition on files. When none
// has, Files and FilesListed change nothing, and a caller need not work
// them out.
func (p *Policy) UsesFiles() bool {
	p = p.current()
	return p.anyRule(func(a AskRule) bool {
		for key := range a.When {
			if IsFileKey(key) {
				return true
			}
		}
		return false
	}, func(r rule) bool { return r.kind == specPath })
}

// UsesPrograms reports whether Decide looks at the programs a command
// would start: whether a rule has a command specifier. When none has,
// Programs and ProgramsListed change nothing.
func (p *Policy) UsesPrograms() bool {
	p = p.current()
	return p.anyRule(func(AskRule) bool { return false }, func(r rule) bool { return r.kind == specCommand })
}

// anyRule reports whether an ask rule of some layer satisfies f, or a
// reference of some layer's allow, deny or ask lists satisfies g.
func (p *Policy) anyRule(f func(AskRule) bool, g func(rule) bool) bool {
	ref := func(s string) bool {
		r, ok := p.rule(s)
		return ok && g(r)
	}
	one := func(r Rules) bool {
		return slices.ContainsFunc(r.Ask, func(a AskRule) bool { return f(a) || slices.ContainsFunc(a.Tools, ref) }) ||
			slices.ContainsFunc(r.Allow, ref) || slices.ContainsFunc(r.AlsoAllow, ref) || slices.ContainsFunc(r.Deny, ref)
	}
	in := func(r Rules) bool {
		if one(r) {
			return true
		}
		for _, byProvider := range r.ByProvider {
			if one(byProvider) {
				return true
			}
		}
		return false
	}
	if in(p.Tools) || in(p.Sandbox) || in(p.Subagents) {
		return true
	}
	for _, r := range p.Agents {
		if in(r) {
			return true
		}
	}
	for _, r := range p.Channels {
		if in(r) {
			return true
		}
	}
	for _, r := range p.Principals {
		if in(r) {
			return true
		}
	}
	return false
}

// Offers reports whether a tool may be offered to the caller at all: every
// layer lets it through, ignoring conditions on arguments.
func (p *Policy) Offers(req Request) bool {
	req.Args = nil
	return p.Decide(req).Decision != Deny
}

// providers adds the layers of the provider and model keys that apply.
func (p *Policy) providers(req Request, prefix string, by map[string]Rules, provider, model string, add func(Verdict)) {
	if provider == "" || len(by) == 0 {
		return
	}
	for key, r := range by {
		k := strings.ToLower(key)
		if k == provider || model != "" && k == provider+"/"+model {
			p.layer(req, prefix+" "+key, r, add)
		}
	}
}

// layer evaluates one layer of rules: a layer without rules adds nothing, a
// layer whose rules do not mention the tool adds a None verdict.
func (p *Policy) layer(req Request, name string, r Rules, add func(Verdict)) {
	if r.Profile == "" && len(r.Allow) == 0 && len(r.AlsoAllow) == 0 && len(r.Deny) == 0 && len(r.Ask) == 0 {
		return
	}
	m := &req.Meta
	verdict := func(d Decision, rule string) { add(Verdict{Layer: name, Decision: d, Rule: rule}) }
	if ref, ok := p.best(req, r.Deny, false); ok {
		add(Verdict{Layer: name, Decision: Deny, Rule: "deny " + ref, Specific: p.specific(ref)})
		return
	}
	if v, ok := p.ask(req, r.Ask); ok {
		v.Layer = name
		add(v)
		return
	}
	unmet := p.unmetAsk(req, r.Ask)
	if r.Profile != "" {
		if d, rule := p.profile(m, r.Profile, r.AlsoAllow); d == Deny {
			verdict(d, rule)
			return
		}
	}
	if len(r.Allow) > 0 {
		refs := append(slices.Clone(r.Allow), r.AlsoAllow...)
		if ref, ok := p.best(req, refs, true); ok {
			add(Verdict{Layer: name, Decision: Allow, Rule: "allow " + ref, Specific: p.specific(ref)})
			return
		}
		if ref, ok := p.someUnknown(req, refs); ok {
			verdict(Allow, "allow "+ref+": depends on the call's arguments")
			return
		}
		if slices.ContainsFunc(r.Allow, func(ref string) bool { _, _, spec := splitRule(ref); return !spec }) {
			verdict(Deny, "not in the allow list")
			return
		}
	}
	if r.Profile != "" {
		verdict(Allow, "in profile "+r.Profile)
		return
	}
	verdict(None, cmp.Or(unmet, "no rule names it"))
}

// profile decides the profile layer: in the profile, or in alsoAllow.
func (p *Policy) profile(m *tool.Meta, profile string, also []string) (Decision, string) {
	if m.InProfile(profile) {
		return Allow, "in profile " + profile
	}
	if ref, ok := p.first(m, also); ok {
		return Allow, "alsoAllow " + ref
	}
	return Deny, "not in profile " + profile
}

// first returns the first of refs that names the tool.
func (p *Policy) first(m *tool.Meta, refs []string) (string, bool) {
	for _, ref := range refs {
		if p.Matches(m, ref) {
			return ref, true
		}
	}
	return "", false
}

// best returns the most specific of refs that holds for req (the first
// of equals); strict for a rule that gives (see [ParseRule]).
func (p *Policy) best(req Request, refs []string, strict bool) (string, bool) {
	found, rank := "", -1
	for _, ref := range refs {
		r, ok := p.rule(ref)
		if ok && r.specificity() > rank && p.holds(req, ref, strict) == holds {
			found, rank = ref, r.specificity()
		}
	}
	return found, rank >= 0
}

// someUnknown returns the first of refs that names the tool with a
// specifier the request cannot decide (no arguments).
func (p *Policy) someUnknown(req Request, refs []string) (string, bool) {
	for _, ref := range refs {
		if p.holds(req, ref, true) == unknown {
			return ref, true
		}
	}
	return "", false
}

// specific reports whether ref has a specifier: a verdict of its rule is
// [Verdict.Specific].
func (p *Policy) specific(ref string) bool {
	r, ok := p.rule(ref)
	return ok && r.kind != wholeTool
}

// ask returns the verdict (without its layer) of the most specific ask
// rule that holds for req: one of its references holds, and its
// conditions.
func (p *Policy) ask(req Request, rules []AskRule) (Verdict, bool) {
	var found Verdict
	rank := -1
	for _, a := range rules {
		ref, ok := p.best(req, a.Tools, false)
		if !ok {
			continue
		}
		r, _ := p.rule(ref)
		if cond, ok := p.conditionsMatch(a.When, req); ok && r.specificity() > rank {
			found, rank = Verdict{Decision: Ask, Rule: "ask " + ref + cond, Specific: r.kind != wholeTool}, r.specificity()
		}
	}
	return found, rank >= 0
}

// unmetAsk words, for a tool no ask rule holds for, the first one that
// names it but whose specifier or conditions do not hold ("" for none).
func (p *Policy) unmetAsk(req Request, rules []AskRule) string {
	for _, a := range rules {
		for _, ref := range a.Tools {
			h := p.holds(req, ref, false)
			if h == fails && !p.Matches(&req.Meta, RuleName(ref)) {
				continue
			}
			switch {
			case h == unknown || req.Args == nil && len(a.When) > 0:
				return "ask " + ref + whenText(a.When, " when ") + ": depends on the call's arguments"
			case h == fails:
				return "ask " + ref + ", which does not hold for this call"
			default:
				return "ask " + ref + " only when " + conditionsText(a.When) + ", which does not hold"
			}
		}
	}
	return ""
}

// whenText renders conditions after prefix, "" for none.
func whenText(when map[string][]string, prefix string) string {
	if len(when) == 0 {
		return ""
	}
	return prefix + conditionsText(when)
}

// Matches reports whether ref names the tool: its id, an alias ("bash" is
// exec), a group ("group:fs"), a * glob over ids ("mcp__github__*"); "write"
// also names edit, apply_patch and tts (see [catalog.NamesFileChanges]).
func (p *Policy) Matches(m *tool.Meta, ref string) bool {
	ref = strings.TrimSpace(ref)
	if registry.Matches(m, ref) || catalog.NamesFileChanges(ref, m.ID) {
		return true
	}
	if strings.Contains(ref, "*") && !strings.HasPrefix(ref, registry.GroupPrefix) {
		return p.glob(ref, false).MatchString(m.ID)
	}
	return false
}

// conditionsMatch reports whether every condition of when holds for req,
// and renders the match for the verdict. No conditions always hold; with
// conditions, unknown arguments (nil) never do.
func (p *Policy) conditionsMatch(when map[string][]string, req Request) (string, bool) {
	if len(when) == 0 {
		return "", true
	}
	if req.Args == nil {
		return "", false
	}
	var parts []string
	for _, key := range slices.Sorted(maps.Keys(when)) {
		if IsFileKey(key) {
			part, ok := p.filesMatch(key, when[key], req)
			if !ok {
				return "", false
			}
			parts = append(parts, part)
			continue
		}
		s, ok := argValue(req.Args, key)
		if !ok {
			return "", false
		}
		pattern, ok := p.anyPattern(key, s, when[key])
		if !ok {
			return "", false
		}
		parts = append(parts, fmt.Sprintf("%s matches %q", key, pattern))
	}
	return " when " + strings.Join(parts, " and "), true
}

// conditionsText renders an ask rule's conditions for people:
// `path matches "*.go" and command matches "make *" or "npm *"`.
func conditionsText(when map[string][]string) string {
	var parts []string
	for _, key := range slices.Sorted(maps.Keys(when)) {
		quoted := make([]string, len(when[key]))
		for i, pat := range when[key] {
			quoted[i] = strconv.Quote(pat)
		}
		parts = append(parts, key+" matches "+strings.Join(quoted, " or "))
	}
	return strings.Join(parts, " and ")
}

// filesMatch decides a condition on files: it holds when a path the call
// touches matches one of the patterns, or when the files the call would
// change are not known.
func (p *Policy) filesMatch(key string, patterns []string, req Request) (string, bool) {
	paths := touched(req)
	for _, pat := range patterns {
		re := p.glob(pat, true)
		if slices.ContainsFunc(paths, re.MatchString) {
			return fmt.Sprintf("%s matches %q", key, pat), true
		}
	}
	if req.FilesListed {
		return "", false
	}
	quoted := make([]string, len(patterns))
	for i, pat := range patterns {
		quoted[i] = strconv.Quote(pat)
	}
	return fmt.Sprintf("%s may match %s (the files the call would change are not known)", key, strings.Join(quoted, " or ")), true
}

// touched returns the paths a call touches, as far as the request says:
// the paths its arguments name, as given and cleaned, and its Files.
func touched(req Request) []string {
	var out []string
	for _, p := range ArgPaths(req.Args) {
		out = append(out, p, path.Clean(p))
	}
	return append(out, req.Files...)
}

// ArgPaths returns the paths arguments name under a file key (see
// [IsFileKey]): each string value, or string in a list, trimmed.
func ArgPaths(args map[string]any) []string {
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	for key, v := range args {
		if !IsFileKey(key) {
			continue
		}
		if list, ok := v.([]any); ok {
			for _, item := range list {
				add(item)
			}
		} else {
			add(v)
		}
	}
	return out
}

// IsFileKey reports whether an argument name, in any case style, names
// files: path, paths, file, files, file_path, filePath, file_paths,
// filename, file_name, … A condition under such a key is a condition on
// the files a call touches (see [AskRule]).
func IsFileKey(key string) bool {
	k := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(key)))
	switch k {
	case "path", "paths", "file", "files", "filepath", "filepaths", "filename", "filenames":
		return true
	}
	return false
}

// anyPattern returns the first pattern that value matches. Commands are
// matched whole and chain link by chain link.
func (p *Policy) anyPattern(key, value string, patterns []string) (string, bool) {
	candidates := []string{strings.TrimSpace(value)}
	if key == "command" || key == "cmd" || key == "script" {
		candidates = append(candidates, commandLinks(value)...)
	}
	for _, pat := range patterns {
		re := p.glob(pat, true)
		for _, c := range candidates {
			if re.MatchString(c) {
				return pat, true
			}
		}
	}
	return "", false
}

// commandLinks splits a shell command at &&, ||, ;, | and newlines.
func commandLinks(cmd string) []string {
	f := strings.FieldsFunc(strings.NewReplacer("&&", "\n", "||", "\n", ";", "\n", "|", "\n").Replace(cmd), func(r rune) bool { return r == '\n' })
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// glob compiles a pattern: * matches any run of characters, ? one
// character, **/ any number of directories (also none). Matching is of the
// whole value; conditions also ignore case.
func (p *Policy) glob(pattern string, fold bool) *regexp.Regexp {
	key := pattern
	if fold {
		key = "(?i)" + pattern
	}
	if re, ok := p.globs.Load(key); ok {
		return re.(*regexp.Regexp)
	}
	var b strings.Builder
	b.WriteString("^")
	if fold {
		b.WriteString("(?i)")
	}
	for i := 0; i < len(pattern); {
		r, size := utf8.DecodeRuneInString(pattern[i:])
		switch {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(?:.*/)?")
			size = 3
		case r == '*':
			b.WriteString(".*")
		case r == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
		i += size
	}
	b.WriteString("$")
	re := regexp.MustCompile(b.String())
	p.globs.Store(key, re)
	return re
}
