package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/toolbelt/toolbelt/provider"
	"github.com/toolbelt/toolbelt/schema"
)

// schemaCmd groups the commands that compile, check and export parameter
// schemas for providers. Exit codes: 0 ok, 1 invalid arguments or problems
// found, 2 usage.
type schemaCmd struct {
	Normalize schemaNormalizeCmd `cmd:"" help:"Print a JSON Schema compiled for a provider; --report prints what changed instead."`
	Validate  schemaValidateCmd  `cmd:"" help:"Check arguments against a JSON Schema as the pipeline does, printing every error; exit 1 if they are invalid."`
	Export    schemaExportCmd    `cmd:"" help:"Print the registry's tools as a provider's request takes them."`
	Lint      schemaLintCmd      `cmd:"" help:"Print what a provider would reject in a schema, one line per problem; exit 1 if anything."`
}

// dialectFlag names the dialect a schema is compiled to.
type dialectFlag struct {
	Provider string `required:"" placeholder:"P" help:"openai, openai-strict, anthropic, gemini, gemini-json, xai, or compat:KEYWORD,… (an OpenAI-compatible server without those keywords)."`
}

func (f dialectFlag) dialect() (schema.Dialect, error) { return schema.ParseDialect(f.Provider) }

// schemaInput is the schema file argument: a file, or "-" for stdin.
type schemaInput struct {
	File string `arg:"" optional:"" default:"-" help:"JSON Schema file, or an MCP tools/list result to compile every tool's; '-' or nothing reads stdin."`
}

// read decodes the schema, keeping every keyword and exact numbers.
func (in schemaInput) read(e *env) (any, error) {
	b, err := readInput(e, in.File)
	if err != nil {
		return nil, err
	}
	doc, err := schema.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", inputName(in.File), err)
	}
	return doc, nil
}

func inputName(file string) string {
	if file == "-" {
		return "stdin"
	}
	return file
}

type schemaNormalizeCmd struct {
	dialectFlag
	schemaInput
	Report bool `help:"Print the changes compiling made, one per line, instead of the schema."`
	JSON   bool `name:"json" help:"With --report, print the report as JSON."`
}

func (c *schemaNormalizeCmd) Run(e *env) error {
	d, err := c.dialect()
	if err != nil {
		return err
	}
	doc, err := c.read(e)
	if err != nil {
		return err
	}
	var out any
	var rep schema.Report
	if tools, ok := toolList(doc); ok {
		// A tools/list result: each tool's schema, compiled, in the same shape.
		rep = schema.Report{Dialect: d.Name(), Changes: []schema.Change{}}
		list := make([]map[string]any, 0, len(tools))
		for _, t := range tools {
			compiled, r := d.Compile(t.schema)
			r = r.Prefixed("tools." + t.name + ".inputSchema")
			rep.Changes, rep.NotStrict = append(rep.Changes, r.Changes...), append(rep.NotStrict, r.NotStrict...)
			list = append(list, map[string]any{"name": t.name, "inputSchema": compiled})
		}
		out = map[string]any{"tools": list}
	} else {
		out, rep = d.Compile(doc)
	}
	switch {
	case c.Report && c.JSON:
		return writeJSON(e.stdout, rep)
	case c.Report:
		_, err := io.WriteString(e.stdout, rep.String())
		return err
	}
	for _, ns := range rep.NotStrict {
		fmt.Fprintf(e.stderr, "toolbelt: not strict: %s\n", ns)
	}
	return writeJSON(e.stdout, out)
}

type schemaValidateCmd struct {
	Schema   string `required:"" placeholder:"FILE" help:"JSON Schema file ('-' for stdin)."`
	Args     string `placeholder:"JSON" help:"Arguments as JSON."`
	ArgsFile string `placeholder:"FILE" help:"Read the arguments from FILE ('-' for stdin)."`
	NoCoerce bool   `help:"Do not coerce unambiguous scalars (\"5\" for a number field) before checking."`
	JSON     bool   `name:"json" help:"Print {valid, errors, coercions, arguments} as JSON."`
}

// validation is `schema validate --json`.
type validation struct {
	Valid     bool              `json:"valid"`
	Errors    []schema.Error    `json:"errors"`
	Coercions []schema.Coercion `json:"coercions"`
	Arguments any               `json:"arguments,omitempty"`
}

func (c *schemaValidateCmd) Run(e *env) error {
	if (c.Args == "") == (c.ArgsFile == "") {
		return fmt.Errorf("give the arguments once: --args JSON or --args-file FILE")
	}
	if c.Schema == "-" && c.ArgsFile == "-" {
		return fmt.Errorf("the schema and the arguments cannot both come from stdin")
	}
	src, err := readInput(e, c.Schema)
	if err != nil {
		return err
	}
	v, err := schema.CompileJSON(src)
	if err != nil {
		return fmt.Errorf("schema %s: %w", inputName(c.Schema), err)
	}
	raw := []byte(c.Args)
	if c.ArgsFile != "" {
		if raw, err = readInput(e, c.ArgsFile); err != nil {
			return err
		}
	}
	res := validation{Errors: []schema.Error{}, Coercions: []schema.Coercion{}}
	args, err := schema.Decode(raw)
	if err != nil {
		res.Errors = append(res.Errors, schema.Error{Message: "the arguments are not valid JSON: " + err.Error()})
	} else {
		if obj, ok := args.(map[string]any); ok && !c.NoCoerce {
			res.Coercions = append(res.Coercions, v.Coerce(obj)...)
		}
		res.Arguments = args
		res.Errors = append(res.Errors, v.Validate(args)...)
	}
	res.Valid = len(res.Errors) == 0
	if c.JSON {
		err = writeJSON(e.stdout, res)
	} else {
		err = printValidation(e.stdout, res)
	}
	if err != nil {
		return err
	}
	if !res.Valid {
		return exitCode(exitToolError)
	}
	return nil
}

func printValidation(w io.Writer, res validation) error {
	var b strings.Builder
	for _, c := range res.Coercions {
		fmt.Fprintf(&b, "coerced %s\n", c)
	}
	for _, e := range res.Errors {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	if res.Valid {
		b.WriteString("valid\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type schemaExportCmd struct {
	Provider string `required:"" placeholder:"P" help:"openai, openai-strict, openai-responses, openai-responses-strict, anthropic, gemini, gemini-json, xai, or compat:KEYWORD,…."`
	selectFlags
	workspaceFlags
	Report bool `help:"Print what compiling each tool's schema changed, one line per change, instead of the tools."`
}

func (c *schemaExportCmd) Run(e *env) error {
	target, err := provider.ParseTarget(c.Provider)
	if err != nil {
		return err
	}
	reg, err := e.registry()
	if err != nil {
		return err
	}
	opts, err := c.options(reg)
	if err != nil {
		return err
	}
	tc, err := c.toolContext(e)
	if err != nil {
		return err
	}
	tools := reg.ResolveAll(tc, func(id string, err error) {
		e.log.Info("tool unavailable in this context; left out", "tool", id, "reason", err)
	}, opts...)
	out, err := provider.NewExporter(reg).Export(tools, target)
	if err != nil {
		return err
	}
	if out.Fallback != "" {
		fmt.Fprintf(e.stderr, "toolbelt: %s\n", out.Fallback)
	}
	if c.Report {
		var b strings.Builder
		for _, r := range out.Reports {
			b.WriteString(r.String())
		}
		_, err := io.WriteString(e.stdout, b.String())
		return err
	}
	return writeJSON(e.stdout, out.Tools)
}

type schemaLintCmd struct {
	dialectFlag
	File string `arg:"" optional:"" default:"-" help:"A JSON Schema, or an MCP tools/list result ({\"tools\":[{\"name\",\"inputSchema\"}]}) to lint every tool; '-' or nothing reads stdin."`
	JSON bool   `name:"json" help:"Print the problems as a JSON array."`
}

func (c *schemaLintCmd) Run(e *env) error {
	d, err := c.dialect()
	if err != nil {
		return err
	}
	doc, err := schemaInput{File: c.File}.read(e)
	if err != nil {
		return err
	}
	problems := []schema.Problem{}
	if tools, ok := toolList(doc); ok {
		for _, t := range tools {
			_, rep := d.Compile(t.schema)
			problems = append(problems, rep.Prefixed("tools."+t.name+".parameters").Problems()...)
		}
	} else {
		problems = append(problems, d.Lint(doc)...)
	}
	if c.JSON {
		err = writeJSON(e.stdout, problems)
	} else {
		var b strings.Builder
		for _, p := range problems {
			b.WriteString(p.String())
			b.WriteByte('\n')
		}
		if len(problems) == 0 {
			fmt.Fprintf(&b, "%s accepts it as it is\n", d.Name())
		}
		_, err = io.WriteString(e.stdout, b.String())
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return exitCode(exitToolError)
	}
	return nil
}

// namedSchema is one tool's parameter schema in a tool list.
type namedSchema struct {
	name   string
	schema any
}

// toolList recognizes a tool list — {"tools":[{"name", "inputSchema" |
// "input_schema" | "parameters"}]} as MCP's tools/list returns it — and
// returns its schemas.
func toolList(doc any) ([]namedSchema, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	list, ok := m["tools"].([]any)
	if !ok {
		return nil, false
	}
	var out []namedSchema
	for _, item := range list {
		t, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		name, _ := t["name"].(string)
		var s any
		found := false
		for _, k := range []string{"inputSchema", "input_schema", "parameters"} {
			if v, ok := t[k]; ok {
				s, found = v, true
				break
			}
		}
		if name == "" || !found {
			return nil, false
		}
		out = append(out, namedSchema{name: name, schema: s})
	}
	return out, true
}
