package fs

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

type writeArgs struct {
	Path    string `json:"path" jsonschema:"The file to write, relative to the workspace root. Missing parent directories are created." minLength:"1"`
	Content string `json:"content" jsonschema:"The complete new content of the file."`
}

const writeDescription = `Write a file in the workspace: create it, or replace all of its content. Missing parent directories are created. The write is atomic (readers never see half a file) and an existing file keeps its permissions. To change part of an existing file, use edit instead. Protected paths (git internals, agent and Toolbelt configuration) are refused.`

// writeDetails are the details of a write result.
type writeDetails struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

func (s *set) writeTool() (tool.Tool, error) {
	return changeTool("write", writeDescription, s.planWrite,
		func(in writeArgs, f *planned, commit func() (string, error)) (tool.Result, error) {
			details := writeDetails{Path: in.Path, Bytes: len(in.Content), Created: !f.before.Exists}
			if !f.changed() {
				res := tool.Textf("%s already has this content (%d bytes): nothing was changed.", in.Path, len(in.Content))
				res.Details = details
				return res, nil
			}
			note, err := commit()
			if err != nil {
				return tool.Result{}, err
			}
			how := "replaced its content"
			if details.Created {
				how = "created it"
			}
			res := tool.Textf("Wrote %d bytes to %s (%s).%s", len(in.Content), in.Path, how, note)
			res.Details = details
			return res, nil
		},
		func(in writeArgs, f *planned) string {
			switch {
			case !f.before.Exists:
				return fmt.Sprintf("create %s with %s", in.Path, sizeText(int64(len(in.Content))))
			case !f.changed():
				return fmt.Sprintf("leave %s as it is: it already has this content", in.Path)
			}
			return fmt.Sprintf("replace the content of %s with %s", in.Path, sizeText(int64(len(in.Content))))
		})
}

// planWrite works out a write, with the file locked: the file's state
// before and after. Nothing is written.
func (s *set) planWrite(ctx context.Context, inv tool.Invocation, in writeArgs) (*plan, *planned, error) {
	pl, err := s.lockedPlan(ctx, inv, in.Path)
	if err != nil {
		return nil, nil, err
	}
	err = pl.writable(ctx, in.Path)
	var f *planned
	if err == nil {
		f, err = pl.file(ctx, in.Path)
	}
	if err == nil {
		err = pl.seen(f, in.Path)
	}
	if err != nil {
		pl.release()
		return nil, nil, err
	}
	f.put([]byte(in.Content))
	return pl, f, nil
}

// sizeText formats a byte count for people and models.
func sizeText(n int64) string {
	unit, div := "", 1.0
	switch {
	case n >= 1<<20:
		unit, div = "MB", 1<<20
	case n >= 1<<10:
		unit, div = "KB", 1<<10
	default:
		return fmt.Sprintf("%d bytes", n)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/div), ".0") + " " + unit
}
