package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

type configCmd struct {
	Show  configShowCmd  `cmd:"" help:"Print the configuration in effect (defaults filled in) and where it came from."`
	Check configCheckCmd `cmd:"" help:"Check a configuration file: syntax, keys, types, tool references, tool settings; warn about unset environment variables and missing executables."`
}

type configCheckCmd struct {
	File string `arg:"" optional:"" help:"The file to check (default: the one toolbelt would use)." placeholder:"FILE"`
	JSON bool   `name:"json" help:"Print JSON: {file, lookedFor, ok, problems, warnings, summary}; each problem and warning {path, line, column, message}."`
	workspaceFlags
}

// configReport is what toolbelt config check found.
type configReport struct {
	// File is the file checked (absolute); "" when there is none.
	File string `json:"file"`
	path string // the file as found, for the text
	// LookedFor lists where toolbelt looked, when it found no file.
	LookedFor []string `json:"lookedFor,omitempty"`
	// OK says the configuration has no problem (warnings aside).
	OK       bool          `json:"ok"`
	Problems []lineProblem `json:"problems"`
	Warnings []lineProblem `json:"warnings"`
	// Summary says what a good file configures ("defaults" for nothing).
	Summary string `json:"summary,omitempty"`
}

// lineProblem is a problem of a configuration at its line and column.
type lineProblem struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

// lineProblems lists the problems err joins, each at its line when it has
// one.
func lineProblems(err error) []lineProblem {
	errs := []error{err}
	if many, ok := err.(interface{ Unwrap() []error }); ok {
		errs = many.Unwrap()
	}
	out := []lineProblem{}
	for _, err := range errs {
		if le, ok := err.(*config.LineError); ok {
			out = append(out, lineProblem{le.Path, le.Line, le.Column, le.Msg})
		} else {
			out = append(out, lineProblem{Message: err.Error()})
		}
	}
	return out
}

func (c *configCheckCmd) Run(e *env) error {
	r, err := c.check(e)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := writeJSON(e.stdout, r); err != nil {
			return err
		}
		if !r.OK {
			return exitCode(exitUsage)
		}
		return nil
	}
	if r.File == "" {
		_, err := fmt.Fprintf(e.stdout, "No configuration file (looked for %s): toolbelt uses its defaults. 'toolbelt init' writes one.\n", strings.Join(r.LookedFor, ", "))
		return err
	}
	fmt.Fprintf(e.stdout, "Checking %s\n", r.File)
	if !r.OK {
		errs := make([]error, len(r.Problems))
		for i, p := range r.Problems {
			errs[i] = &config.LineError{Path: p.Path, Line: p.Line, Column: p.Column, Msg: p.Message}
		}
		return errors.Join(errs...)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stdout, "warning: %v\n", &config.LineError{Path: w.Path, Line: w.Line, Column: w.Column, Msg: w.Message})
	}
	status := "ok"
	switch n := len(r.Warnings); {
	case n == 1:
		status = "ok, 1 warning"
	case n > 1:
		status = fmt.Sprintf("ok, %d warnings", n)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: %s (%s)\n", r.path, status, r.Summary)
	return err
}

// check checks the configuration file the command names (or the one
// toolbelt would use); its error is one that keeps it from checking.
func (c *configCheckCmd) check(e *env) (*configReport, error) {
	if c.File != "" {
		e.configPath = c.File
	}
	path, err := config.Find(e.configPath)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return &configReport{LookedFor: configCandidates(), OK: true, Problems: []lineProblem{}, Warnings: []lineProblem{}, Summary: "defaults"}, nil
	}
	r := &configReport{File: absPath(path), path: path, Warnings: []lineProblem{}}
	cfg, err := e.config()
	if err != nil {
		// Report the problems of the tools' settings too, against the
		// built-in tools.
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, err
		}
		reg, closer := e.tools()
		defer closer.Close()
		if checked := config.Check(path, data, reg); checked != nil {
			err = checked
		}
		r.Problems = lineProblems(err)
		return r, nil
	}
	reg, err := e.registry()
	if err != nil {
		return nil, err
	}
	checked := cfg.CheckTools(reg)
	errs := append([]error{checked}, checkModels(cfg)...)
	if tc, err := c.toolContext(e); err == nil && checked == nil {
		errs = append(errs, cfg.CheckSettings(reg, tc)...)
	}
	if err := config.Join(errs...); err != nil {
		r.Problems = lineProblems(err)
		return r, nil
	}
	warnings := cfg.Lint(exec.LookPath, os.LookupEnv)
	for _, p := range e.tb.DirProblems() {
		warnings = append(warnings, cfg.ErrorAt("$.tools.dirs", "directory tool not loaded: "+p.Err.Error()))
	}
	for _, w := range warnings {
		r.Warnings = append(r.Warnings, lineProblem{w.Path, w.Line, w.Column, w.Msg})
	}
	r.OK, r.Problems, r.Summary = true, []lineProblem{}, summarize(cfg)
	return r, nil
}

// configCandidates lists where toolbelt looks for its configuration.
func configCandidates() []string {
	list := []string{"$TOOLBELT_CONFIG", "./" + config.FileName}
	if dir, err := os.UserConfigDir(); err == nil {
		list = append(list, filepath.Join(dir, "toolbelt", config.FileName))
	}
	return list
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

type configShowCmd struct {
	workspaceFlags
	JSON bool `name:"json" help:"Print JSON: {sources, workspace, state, config}."`
}

// configSource is one place a setting in effect came from.
type configSource struct {
	What string `json:"what"`
	From string `json:"from"`
}

func (c *configShowCmd) Run(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	var sources []configSource
	switch {
	case cfg.Path != "" && os.Getenv("TOOLBELT_CONFIG") != "" && e.configPath == "":
		sources = append(sources, configSource{"file", absPath(cfg.Path) + " (from TOOLBELT_CONFIG)"})
	case cfg.Path != "":
		sources = append(sources, configSource{"file", absPath(cfg.Path)})
	default:
		sources = append(sources, configSource{"file", "none: the defaults (looked for " + strings.Join(configCandidates(), ", ") + ")"})
	}
	for _, v := range []string{"TOOLBELT_WORKSPACE", envData, envDatabaseURL, "TOOLBELT_MCP_TOKEN"} {
		if os.Getenv(v) != "" {
			sources = append(sources, configSource{"environment", v})
		}
	}
	ws, err := c.dir(e)
	if err != nil {
		return err
	}
	dsn, dataDir, err := e.storeDSN(os.Getenv)
	if err != nil {
		return err
	}
	eff := cfg.Effective()
	for i, item := range eff {
		switch item.Key {
		case "workspace":
			eff[i].Value = ws
		case "data":
			eff[i].Value = nil
			if dataDir != "" {
				eff[i].Value = dataDir
			}
		case "database":
			eff[i].Value = nil
			if dataDir == "" {
				eff[i].Value = redacted(dsn)
			}
		case "mcp":
			for j, m := range item.Value.(yaml.MapSlice) {
				if m.Key == "token" && m.Value != nil {
					item.Value.(yaml.MapSlice)[j].Value = "(set)"
				}
			}
		}
	}
	if c.JSON {
		return writeJSON(e.stdout, map[string]any{"sources": sources, "workspace": ws, "state": redacted(dsn), "config": config.Plain(eff)})
	}
	for _, s := range sources {
		fmt.Fprintf(e.stdout, "# %-12s %s\n", s.What+":", s.From)
	}
	fmt.Fprintf(e.stdout, "# %-12s %s\n# %-12s %s\n\n", "workspace:", ws, "state:", redacted(dsn))
	b, err := yaml.MarshalWithOptions(eff, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(b)
	return err
}

// summarize says in a few words what a configuration sets.
func summarize(c *config.Config) string {
	var parts []string
	r := c.Tools.Rules
	if r.Profile != "" {
		parts = append(parts, "profile "+r.Profile)
	}
	count := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	count(len(r.Allow), "allowed", "allowed")
	count(len(r.Deny), "denied", "denied")
	count(len(r.Ask), "ask rule", "ask rules")
	count(len(r.ByProvider), "provider layer", "provider layers")
	count(len(c.Agents), "agent layer", "agent layers")
	count(len(c.Channels), "channel layer", "channel layers")
	count(len(c.MCPServers), "MCP server", "MCP servers")
	if len(c.Tools.Settings) > 0 {
		parts = append(parts, "settings for "+strings.Join(slices.Sorted(maps.Keys(c.Tools.Settings)), ", "))
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, ", ")
}

type policyCmd struct {
	Explain policyExplainCmd `cmd:"" help:"Show each policy layer's verdict on a tool, and the final decision."`
}

type policyExplainCmd struct {
	Tool      string `arg:"" help:"Tool name (id or alias)."`
	Agent     string `help:"Agent id."`
	Provider  string `help:"Model provider, or provider/model (openai/gpt-5)."`
	Channel   string `help:"Channel or group the request comes from." default:"cli"`
	Args      string `help:"Arguments as a JSON object, for ask rules with conditions: the call is decided as the pipeline decides it, its arguments normalized and validated and the files it touches worked out in the workspace." placeholder:"JSON"`
	NotOwner  bool   `help:"Decide for a caller not known to be the owner."`
	Sandboxed bool   `help:"Decide for a sandboxed caller."`
	Subagent  bool   `help:"Decide for a sub-agent."`
	JSON      bool   `name:"json" help:"Print JSON."`
	workspaceFlags
}

func (c *policyExplainCmd) Run(e *env) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	reg, err := e.registry()
	if err != nil {
		return err
	}
	id, ok := reg.Lookup(c.Tool)
	if !ok {
		return fmt.Errorf("no tool is named %q", c.Tool)
	}
	meta, _ := reg.Meta(id)
	req := policy.Request{Meta: meta, Caller: c.caller()}
	req.Provider, req.Model, _ = strings.Cut(c.Provider, "/")
	p := cfg.Policy()
	var res policy.Result
	if c.Args == "" {
		res = p.Decide(req)
	} else {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.Args), &args); err != nil || args == nil {
			return fmt.Errorf("--args must be a JSON object: %v", err)
		}
		if req, res, err = c.explainCall(e, p, id); err != nil {
			return err
		}
	}
	if c.JSON {
		return writeJSON(e.stdout, res)
	}
	col := colorsFor(e.stdout)
	var b strings.Builder
	fmt.Fprintf(&b, "Policy for %s (%s)\n", col.bold(id), describeCaller(req))
	if len(res.Verdicts) == 0 {
		b.WriteString("  no layer has rules\n")
	}
	w := 0
	for _, v := range res.Verdicts {
		w = max(w, len(v.Layer))
	}
	for _, v := range res.Verdicts {
		fmt.Fprintf(&b, "  %-*s  %-5s  %s\n", w, v.Layer, v.Decision, v.Rule)
	}
	final := res.Decision.String()
	switch res.Decision {
	case policy.Deny:
		final = col.paint("31", final)
	case policy.Ask:
		final = col.yellow(final)
	default:
		final = col.green(final)
	}
	fmt.Fprintf(&b, "Final: %s", final)
	if res.Reason != "" {
		fmt.Fprintf(&b, " — %s", res.Reason)
	}
	b.WriteByte('\n')
	if v := res.DecidedBy; v.Specific {
		fmt.Fprintf(&b, "Decided by: %s: %s", v.Layer, v.Rule)
		if res.Preapproved {
			b.WriteString(" (approved in advance: no one is asked)")
		}
		b.WriteByte('\n')
	}
	if c.Args != "" && p.UsesFiles() {
		b.WriteString(filesNote(id, req))
	}
	if res.Decision != policy.Deny && !res.Preapproved {
		if why := riskNote(meta.Risk.String(), cfg.Confirm.Medium); why != "" {
			b.WriteString(why)
		}
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

// explainCall decides about the call --args describe as the pipeline
// does: its arguments normalized and validated, the files it touches
// worked out in the workspace by its tool's preview.
func (c *policyExplainCmd) explainCall(e *env, p *policy.Policy, id string) (policy.Request, policy.Result, error) {
	tc, err := c.toolContext(e)
	if err != nil {
		return policy.Request{}, policy.Result{}, err
	}
	as := c.caller()
	as.Workspace = tc.Workspace
	tc.Identity = as
	var opts []invoke.CallOption
	if c.Provider != "" {
		opts = append(opts, invoke.FromProvider(c.Provider))
	}
	r := invoke.New(e.tb.Registry(), tc, invoke.WithPolicy(p))
	return r.Explain(context.Background(), tool.Call{ID: "explain", Name: id, Arguments: json.RawMessage(c.Args)}, opts...)
}

// caller is who the flags decide for.
func (c *policyExplainCmd) caller() tool.Identity {
	return tool.Identity{AgentID: c.Agent, Channel: c.Channel, Owner: !c.NotOwner, Sandboxed: c.Sandboxed, Subagent: c.Subagent}
}

// filesNote says which files the policy saw the call touch.
func filesNote(id string, req policy.Request) string {
	files := strings.Join(req.Files, ", ")
	switch {
	case req.FilesListed && files == "":
		files = "none"
	case !req.FilesListed && files == "":
		files = fmt.Sprintf("not known (%s does not list the files it would change, so a condition on files holds for it)", id)
	case !req.FilesListed:
		files += fmt.Sprintf(", and others %s does not list (so a condition on files holds for it)", id)
	}
	return "Files it touches: " + files + "\n"
}

// riskNote says whether the tool's risk alone asks a person.
func riskNote(risk string, medium bool) string {
	if risk == "high" || risk == "medium" && medium {
		return fmt.Sprintf("A call also needs a person's approval: %s risk (a tool's preview may lower it, as for read-only commands).\n", risk)
	}
	return ""
}

func describeCaller(r policy.Request) string {
	parts := []string{"owner"}
	if !r.Caller.Owner {
		parts[0] = "not the owner"
	}
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	add("agent", r.Caller.AgentID)
	add("provider", strings.Trim(r.Provider+"/"+r.Model, "/"))
	add("channel", r.Caller.Channel)
	if r.Caller.Sandboxed {
		parts = append(parts, "sandboxed")
	}
	if r.Caller.Subagent {
		parts = append(parts, "sub-agent")
	}
	return strings.Join(parts, ", ")
}
