package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

func (c *completionCmd) Run(e *env) error {
	specs := completionSpecs(e.parser.Model.Node)
	var err error
	switch c.Shell {
	case "bash":
		err = writeBash(e.stdout, specs)
	case "zsh":
		err = writeZsh(e.stdout, specs)
	case "fish":
		err = writeFish(e.stdout, specs)
	}
	return err
}

// completionSpec is what can follow a command path: its subcommands and
// its flags.
type completionSpec struct {
	path  string // "" for toolbelt itself, "mcp servers"
	cmds  []completionWord
	flags []completionWord
}

type completionWord struct{ name, help string }

// completionSpecs walks the grammar: every command path with its visible
// subcommands and long flags (global flags included).
func completionSpecs(root *kong.Node) []completionSpec {
	var specs []completionSpec
	var walk func(n *kong.Node, path string, inherited []completionWord)
	walk = func(n *kong.Node, path string, inherited []completionWord) {
		s := completionSpec{path: path, flags: inherited}
		for _, f := range n.Flags {
			if !f.Hidden {
				s.flags = append(s.flags, completionWord{"--" + f.Name, f.Help})
			}
		}
		for _, c := range n.Children {
			if c.Type == kong.CommandNode && !c.Hidden {
				s.cmds = append(s.cmds, completionWord{c.Name, c.Help})
			}
		}
		specs = append(specs, s)
		for _, c := range n.Children {
			if c.Type == kong.CommandNode && !c.Hidden {
				walk(c, strings.TrimSpace(path+" "+c.Name), s.flags[:len(s.flags):len(s.flags)])
			}
		}
	}
	walk(root, "", nil)
	return specs
}

func names(words []completionWord) string {
	var b []string
	for _, w := range words {
		b = append(b, w.name)
	}
	return strings.Join(b, " ")
}

// shellQuote quotes s for a POSIX shell, in single quotes.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// wordsOf is the shell code shared by bash and zsh: it finds the command
// path typed so far ($cmd, $sub), skipping flags and the global flags'
// values.
const wordsOf = `  local cmd="" sub="" i
  for ((i = FIRST; i < CUR; i++)); do
    case ${WORDS[i]} in
      --config|--data) ((i++)) ;;
      -*) ;;
      *) if [[ -z $cmd ]]; then cmd=${WORDS[i]}; elif [[ -z $sub ]]; then sub=${WORDS[i]}; fi ;;
    esac
  done
`

func writeBash(w io.Writer, specs []completionSpec) error {
	var b strings.Builder
	b.WriteString("# bash completion for toolbelt. Load it with:\n#   source <(toolbelt completion bash)\n# or install it for new shells:\n#   mkdir -p ~/.local/share/bash-completion/completions && toolbelt completion bash > ~/.local/share/bash-completion/completions/toolbelt\n")
	b.WriteString("_toolbelt_spec() {\n  case $1 in\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "    %s) cmds=%s flags=%s ;;\n", shellQuote(s.path), shellQuote(names(s.cmds)), shellQuote(names(s.flags)))
	}
	b.WriteString("    *) return 1 ;;\n  esac\n}\n\n_toolbelt() {\n")
	b.WriteString(strings.NewReplacer("FIRST", "1", "CUR", "COMP_CWORD", "WORDS", "COMP_WORDS").Replace(wordsOf))
	b.WriteString(`  local cur=${COMP_WORDS[COMP_CWORD]} cmds flags
  case ${COMP_WORDS[COMP_CWORD-1]} in
    --config|--data|--workspace|--args-file|--batch) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  _toolbelt_spec "$cmd${sub:+ $sub}" || _toolbelt_spec "$cmd" || return
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
  fi
}
complete -F _toolbelt toolbelt
`)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeZsh(w io.Writer, specs []completionSpec) error {
	var b strings.Builder
	b.WriteString("#compdef toolbelt\n# zsh completion for toolbelt. Load it with:\n#   source <(toolbelt completion zsh)\n# or install it for new shells (with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc):\n#   mkdir -p ~/.zfunc && toolbelt completion zsh > ~/.zfunc/_toolbelt\n")
	b.WriteString("_toolbelt_spec() {\n  case $1 in\n")
	for _, s := range specs {
		var cmds, flags []string
		for _, c := range s.cmds {
			cmds = append(cmds, shellQuote(c.name+":"+c.help))
		}
		for _, f := range s.flags {
			flags = append(flags, shellQuote(f.name))
		}
		fmt.Fprintf(&b, "    %s) cmds=(%s) flags=(%s) ;;\n", shellQuote(s.path), strings.Join(cmds, " "), strings.Join(flags, " "))
	}
	b.WriteString("    *) return 1 ;;\n  esac\n}\n\n_toolbelt() {\n")
	b.WriteString(strings.NewReplacer("FIRST", "2", "CUR", "CURRENT", "WORDS", "words").Replace(wordsOf))
	b.WriteString(`  local -a cmds flags
  case ${words[CURRENT-1]} in
    --config|--data|--workspace|--args-file|--batch) _files; return ;;
  esac
  _toolbelt_spec "$cmd${sub:+ $sub}" || _toolbelt_spec "$cmd" || return
  if [[ ${words[CURRENT]} == -* ]]; then
    compadd -- $flags
  else
    _describe command cmds
  fi
}
if (( $+functions[compdef] )); then compdef _toolbelt toolbelt; fi
`)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFish(w io.Writer, specs []completionSpec) error {
	var b strings.Builder
	b.WriteString("# fish completion for toolbelt. Load it with:\n#   toolbelt completion fish | source\n# or install it for new shells:\n#   mkdir -p ~/.config/fish/completions && toolbelt completion fish > ~/.config/fish/completions/toolbelt.fish\n")
	b.WriteString("complete -c toolbelt -f\n")
	for _, s := range specs {
		words := strings.Fields(s.path)
		var cond string
		switch len(words) {
		case 0:
			cond = "__fish_use_subcommand"
		case 1:
			cond = "__fish_seen_subcommand_from " + words[0]
		default:
			cond = "__fish_seen_subcommand_from " + words[0] + "; and __fish_seen_subcommand_from " + words[1]
		}
		var sub []string
		for _, c := range s.cmds {
			sub = append(sub, c.name)
		}
		cmdCond := cond
		if len(sub) > 0 && len(words) > 0 {
			cmdCond += "; and not __fish_seen_subcommand_from " + strings.Join(sub, " ")
		}
		for _, c := range s.cmds {
			fmt.Fprintf(&b, "complete -c toolbelt -n %s -a %s -d %s\n", shellQuote(cmdCond), shellQuote(c.name), shellQuote(c.help))
		}
		if len(words) == 0 {
			for _, f := range s.flags {
				fmt.Fprintf(&b, "complete -c toolbelt -l %s -d %s\n", strings.TrimPrefix(f.name, "--"), shellQuote(f.help))
			}
			continue
		}
		for _, f := range s.flags[len(specs[0].flags):] {
			fmt.Fprintf(&b, "complete -c toolbelt -n %s -l %s -d %s\n", shellQuote(cond), strings.TrimPrefix(f.name, "--"), shellQuote(f.help))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
