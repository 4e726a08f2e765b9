package fs

import (
	"context"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolbelt/toolbelt/tool"
)

// Limits of ls.
const (
	lsEntries    = 500
	lsMaxEntries = 5000
)

type lsArgs struct {
	Path   string   `json:"path,omitempty" jsonschema:"The directory to list, relative to the workspace root (default \".\", the root)." default:"."`
	Depth  int      `json:"depth,omitempty" jsonschema:"How many levels to list: 1 lists the directory's own entries, 2 also their contents, and so on (default 1)." minimum:"1" maximum:"10" default:"1"`
	Ignore []string `json:"ignore,omitempty" jsonschema:"Glob patterns of entries to leave out, such as node_modules or *.log, matched against each entry's name and its path relative to the listed directory." maxItems:"50"`
	Limit  int      `json:"limit,omitempty" jsonschema:"The most entries to show (default 500, at most 5000)." minimum:"1" maximum:"5000" default:"500"`
}

const lsDescription = `List a directory of the workspace. Entries are shown one per line as paths relative to the workspace root, sorted by name; directories end with "/" and symbolic links with "@". Set depth to list subdirectories too (the contents of .git are never listed). At most 500 entries are shown unless you set limit; a notice says when entries were left out.`

// lsDetails are the details of an ls result.
type lsDetails struct {
	Path    string `json:"path"`
	Shown   int    `json:"shown"`
	Total   int    `json:"total"`
	Limited bool   `json:"limited"`
}

func (s *set) lsTool() (tool.Tool, error) {
	return tool.New("ls", lsDescription, func(ctx context.Context, in lsArgs, inv tool.Invocation) (tool.Result, error) {
		b, err := bridge(inv)
		if err != nil {
			return tool.Result{}, err
		}
		for _, g := range in.Ignore {
			if !doublestar.ValidatePattern(g) {
				return tool.Result{}, tool.InputErrorf("The ignore pattern %q is not a valid glob. Use *, ?, [abc], {a,b} and ** (for any number of directories).", g)
			}
		}
		start, err := dirStart(ctx, b, in.Path, "Use read to see its content.")
		if err != nil {
			return tool.Result{}, err
		}
		var out strings.Builder
		shown, total := 0, 0
		err = b.WalkDir(ctx, start, func(p string, d iofs.DirEntry, err error) error {
			switch {
			case p == start:
				return err
			case err != nil:
				return nil // an unreadable directory is listed, not entered
			}
			rel := relTo(start, p)
			for _, g := range in.Ignore {
				if doublestar.MatchUnvalidated(g, d.Name()) || doublestar.MatchUnvalidated(g, rel) {
					if d.IsDir() {
						return iofs.SkipDir
					}
					return nil
				}
			}
			total++
			if shown < in.Limit {
				shown++
				out.WriteString(p)
				switch {
				case d.IsDir():
					out.WriteByte('/')
				case d.Type()&iofs.ModeSymlink != 0:
					out.WriteByte('@')
				}
				out.WriteByte('\n')
			}
			if d.IsDir() && (d.Name() == ".git" || strings.Count(rel, "/")+1 >= in.Depth) {
				return iofs.SkipDir
			}
			return nil
		})
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		text := out.String()
		switch {
		case total == 0:
			text = fmt.Sprintf("(%s is empty)", path.Clean(in.Path))
		case shown < total:
			text += fmt.Sprintf("\n[Showing %d of %d entries. List a subdirectory, lower depth, add ignore patterns, or raise limit (at most %d) to see the rest.]", shown, total, lsMaxEntries)
		}
		res := tool.Text(strings.TrimSuffix(text, "\n"))
		res.Details = lsDetails{Path: start, Shown: shown, Total: total, Limited: shown < total}
		return res, nil
	})
}
