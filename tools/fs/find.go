package fs

import (
	"context"
	"fmt"
	iofs "io/fs"
	"strings"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
)

// Limits of find.
const (
	findResults    = 1000
	findMaxResults = 10000
)

type findArgs struct {
	Pattern string `json:"pattern" jsonschema:"A glob. Without '/' it matches file and directory names at any depth (*.go, Makefile, test_*); with '/' it matches paths relative to path (src/**/*.ts, cmd/*/main.go). ** matches any number of directories; {a,b} matches either." minLength:"1"`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search, relative to the workspace root (default \".\", the root)." default:"."`
	Limit   int    `json:"limit,omitempty" jsonschema:"The most paths to return (default 1000, at most 10000)." minimum:"1" maximum:"10000" default:"1000"`
}

const findDescription = `Find files and directories in the workspace whose names or paths match a glob, such as "*.go" or "src/**/*_test.ts". Returns paths relative to the workspace root, one per line, in sorted order; directories end with "/". Files excluded by .gitignore and the .git directory are left out. At most 1000 paths are returned unless you set limit; a notice says how many matched in all.`

// findDetails are the details of a find result.
type findDetails struct {
	Shown   int  `json:"shown"`
	Total   int  `json:"total"`
	Limited bool `json:"limited"`
}

func (s *set) findTool() (tool.Tool, error) {
	return tool.New("find", findDescription, func(ctx context.Context, in findArgs, inv tool.Invocation) (tool.Result, error) {
		b, err := bridge(inv)
		if err != nil {
			return tool.Result{}, err
		}
		g, ok := newGlob(in.Pattern)
		if !ok {
			return tool.Result{}, tool.InputErrorf("The pattern %q is not a valid glob. Use *, ?, [abc], {a,b} and ** (for any number of directories).", in.Pattern)
		}
		start, err := dirStart(ctx, b, in.Path, "find searches directories: give the directory that holds it, or read it.")
		if err != nil {
			return tool.Result{}, err
		}
		var out strings.Builder
		shown, total := 0, 0
		err = walk(ctx, b, start, newIgnorer(b), func(p string, d iofs.DirEntry) error {
			if !g.match(relTo(start, p)) {
				return nil
			}
			total++
			if shown < in.Limit {
				shown++
				out.WriteString(p)
				if d.IsDir() {
					out.WriteByte('/')
				}
				out.WriteByte('\n')
			}
			return nil
		})
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		text := strings.TrimSuffix(out.String(), "\n")
		switch {
		case total == 0:
			text = fmt.Sprintf("No files match %q in %s.", in.Pattern, place(start))
		case shown < total:
			text += fmt.Sprintf("\n\n[Showing the first %d of %d matches. Narrow the pattern or the path, or raise limit (at most %d).]", shown, total, findMaxResults)
		}
		res := tool.Text(text)
		res.Details = findDetails{Shown: shown, Total: total, Limited: shown < total}
		return res, nil
	})
}

// dirStart resolves the directory a listing or search starts from, and
// refuses a file with a hint of what to use instead.
func dirStart(ctx context.Context, b fsbridge.Bridge, p, hint string) (string, error) {
	st, err := b.Stat(ctx, p)
	if err != nil {
		return "", problem(p, err)
	}
	if !st.IsDir() {
		return "", tool.InputErrorf("%s is a file, not a directory. %s", p, hint)
	}
	start, err := b.Resolve(ctx, p)
	if err != nil {
		return "", problem(p, err)
	}
	return start, nil
}
