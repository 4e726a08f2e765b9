package main

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/alecthomas/kong"
	"github.com/toolbelt/toolbelt/internal/closest"
)

// valueFlags are the global flags that take a value as the next argument.
var valueFlags = []string{"--config", "--data"}

// firstPositional returns the index of the first argument that is not a
// global flag or a global flag's value, or -1.
func firstPositional(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case slices.Contains(valueFlags, a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return i
		}
	}
	return -1
}

// grammarOf returns what kong builds the grammar from for a run of args,
// and sync, which copies the global flags parsed into c. Building the
// grammar of all commands was a quarter of the CPU of a start of
// toolbelt mcp, and kong reads every field's tag even of commands it is
// told to ignore: a run of one command gets a struct made of cli's global
// flags and that command's field only. It is c itself — the whole grammar —
// when args run no command, an unknown one, or one that needs the others
// (help and completion describe them all).
//
// It stays for the cold-start aim (≤ 2× the bare go-sdk server): 40 starts
// of toolbelt mcp each, interleaved, 2026-11-29 at load average 11–12, to
// the first tools/list answer 112.0 ms and 70.2 ms of CPU with it, 129.1 ms
// (2.68× the floor's 48.2 ms, against 2.32×) and 82.5 ms without; and the
// idle server's anonymous memory 4.6 MB with it, 5.8 MB without
// (bench/compare, three runs).
func grammarOf(args []string, c *cli) (root any, sync func()) {
	whole := func() (any, func()) { return c, func() {} }
	i := firstPositional(args)
	if i < 0 || args[i] == "help" || args[i] == "completion" {
		return whole()
	}
	var fields []reflect.StructField
	var globals []int // their indexes in cli
	found := false
	for f := range reflect.TypeFor[cli]().Fields() {
		if _, ok := f.Tag.Lookup("cmd"); !ok {
			globals = append(globals, f.Index[0])
			fields = append(fields, f)
			continue
		}
		name := f.Tag.Get("name")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == args[i] {
			found = true
			fields = append(fields, f)
		}
	}
	if !found {
		return whole()
	}
	pruned := reflect.New(reflect.StructOf(fields)).Elem()
	return pruned.Addr().Interface(), func() {
		all := reflect.ValueOf(c).Elem()
		for j, k := range globals {
			all.Field(k).Set(pruned.Field(j))
		}
	}
}

// preParse handles what kong would not explain well: no command at all
// (the overview), "help" alone, and an unknown command (the nearest ones).
// done says the run is over, with code.
func preParse(parser *kong.Kong, args []string, e env) (code int, done bool) {
	i := firstPositional(args)
	if i < 0 {
		for _, a := range args {
			if a == "-h" || a == "--help" || a == "-V" || a == "--version" || strings.HasPrefix(a, "-") && flagOf(parser.Model.Node, a) == nil {
				return 0, false // kong prints these, or the unknown flag's error
			}
		}
		printOverview(e.stdout, parser)
		return exitOK, true
	}
	name := args[i]
	if name == "help" && i == len(args)-1 {
		printOverview(e.stdout, parser)
		return exitOK, true
	}
	names := commandNames(parser.Model.Node)
	if name == "help" && !strings.HasPrefix(args[i+1], "-") {
		name = args[i+1] // help CMD: the command must exist
	}
	if slices.Contains(names, name) {
		return 0, false
	}
	fmt.Fprintf(e.stderr, "toolbelt: unknown command %q", name)
	if near := closest.Names(name, names, 2); len(near) > 0 {
		fmt.Fprintf(e.stderr, "; did you mean %s?", quoteJoin(near, " or "))
	}
	fmt.Fprintln(e.stderr, "\nRun 'toolbelt help' for the commands.")
	return exitUsage, true
}

// mistypedCommand finds, in args kong could not parse, the first word that
// stands where one of a command's subcommands goes and is close to one of
// them: it returns the command's path, the word and the subcommands meant
// (none when no word is).
func mistypedCommand(root *kong.Node, args []string) (path, word string, near []string) {
	n := root
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", "", nil
		case strings.HasPrefix(a, "-"):
			if f := flagOf(n, a); f != nil && !f.IsBool() && !f.IsCounter() && !strings.Contains(a, "=") {
				i++ // its value
			}
			continue
		}
		names := commandNames(n)
		if len(names) == 0 {
			return "", "", nil
		}
		next := childNamed(n, a)
		if next == nil {
			if near := closest.Names(a, names, 2); len(near) > 0 {
				return n.Path(), a, near
			}
			return "", "", nil
		}
		n = next
	}
	return "", "", nil
}

// flagOf returns the flag arg names among those of n and its parents, or
// nil.
func flagOf(n *kong.Node, arg string) *kong.Flag {
	name, _, _ := strings.Cut(arg, "=")
	for _, group := range n.AllFlags(false) {
		for _, f := range group {
			if name == "--"+f.Name || f.Short != 0 && name == "-"+string(f.Short) {
				return f
			}
		}
	}
	return nil
}

// childNamed returns n's subcommand called name (or by an alias), or nil.
func childNamed(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && (c.Name == name || slices.Contains(c.Aliases, name)) {
			return c
		}
	}
	return nil
}

// printHelp is kong's help, and for a command that runs one of its
// subcommands by default (toolbelt sessions is toolbelt sessions list) the
// flags of that subcommand too: the command takes them.
func printHelp(options kong.HelpOptions, ctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	n := ctx.Selected()
	if n == nil || n.DefaultCmd == nil || len(n.DefaultCmd.Flags) == 0 {
		return nil
	}
	fmt.Fprintf(ctx.Stdout, "\n'toolbelt %s' runs 'toolbelt %s', with its flags:\n", n.Path(), n.DefaultCmd.Path())
	tw := tabwriter.NewWriter(ctx.Stdout, 0, 0, 4, ' ', 0)
	for _, f := range n.DefaultCmd.Flags {
		if !f.Hidden {
			fmt.Fprintf(tw, "      %s\t%s\n", f, f.Help)
		}
	}
	return tw.Flush()
}

// helpArgs turns "help CMD…" into "CMD… --help", which kong answers with
// the command's usage.
func helpArgs(args []string) []string {
	i := firstPositional(args)
	if i < 0 || args[i] != "help" || i == len(args)-1 {
		return args
	}
	out := slices.Concat(args[:i], args[i+1:], []string{"--help"})
	return out
}

// commandNames lists the names and aliases of n's visible subcommands.
func commandNames(n *kong.Node) []string {
	var names []string
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			names = append(names, c.Name)
			names = append(names, c.Aliases...)
		}
	}
	return names
}

func quoteJoin(list []string, sep string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, sep)
}

// printOverview prints the commands, grouped, one line each.
func printOverview(w io.Writer, parser *kong.Kong) {
	root := parser.Model.Node
	fmt.Fprintf(w, "%s\n\nUsage: toolbelt <command> [flags]\n", root.Help)
	width := 0
	for _, c := range root.Children {
		width = max(width, len(c.Name))
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s\n", g.Title)
		for _, c := range root.Children {
			if c.Type != kong.CommandNode || c.Hidden || c.Group == nil || c.Group.Key != g.Key {
				continue
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Help)
		}
	}
	fmt.Fprint(w, `
Global flags: --config FILE, --data DIR, -v (debug logs), -V (version).
Run 'toolbelt help <command>' or 'toolbelt <command> --help' for a command's usage.
New here? 'toolbelt init' writes a toolbelt.yaml; 'toolbelt serve' serves the tools.
`)
}

type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command to explain."`
}

// Run prints the overview; "help CMD" never gets here (see helpArgs).
func (h *helpCmd) Run(e *env) error {
	printOverview(e.stdout, e.parser)
	return nil
}
