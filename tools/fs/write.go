package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
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
	return tool.New("write", writeDescription, func(ctx context.Context, in writeArgs, inv tool.Invocation) (tool.Result, error) {
		b, unlock, err := s.lockedBridge(ctx, inv, in.Path)
		if err != nil {
			return tool.Result{}, err
		}
		defer unlock()
		created := false
		switch err := b.CheckWrite(ctx, in.Path); {
		case errors.Is(err, iofs.ErrNotExist):
			// A parent directory is missing: make it (protection is checked
			// for every directory made), then check again.
			if err := b.MkdirAll(ctx, path.Dir(in.Path)); err != nil {
				return tool.Result{}, problem(path.Dir(in.Path), err)
			}
			created = true
		case err != nil:
			return tool.Result{}, problem(in.Path, err)
		default:
			_, statErr := b.Stat(ctx, in.Path)
			created = errors.Is(statErr, iofs.ErrNotExist)
		}
		if err := b.WriteFile(ctx, in.Path, []byte(in.Content), 0o644); err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		how := "replaced its content"
		if created {
			how = "created it"
		}
		res := tool.Textf("Wrote %d bytes to %s (%s).", len(in.Content), in.Path, how)
		res.Details = writeDetails{Path: in.Path, Bytes: len(in.Content), Created: created}
		return res, nil
	})
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
