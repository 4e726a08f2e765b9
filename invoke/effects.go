package invoke

import (
	"context"
	"slices"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/tool"
)

// previewed is what a call's preview said: the effects, or why it could
// not say.
type previewed struct {
	effects *tool.Effects
	err     error
}

// preview returns what the tool's preview says the call would do: nil for
// a tool without a preview, or a read-only one (it runs unasked, changing
// nothing, whatever its preview says), and for an undo (the preview
// describes the call, not its undo). It is worked out once for the
// call's arguments, by the first step that needs it (policy, hooks,
// confirm), and kept in req.Effects; SetArgs discards it.
func (req *Request) preview(ctx context.Context) (*tool.Effects, error) {
	if req.previewed == nil {
		req.previewed = &previewed{}
		if req.Tool.Preview != nil && !req.Tool.Meta.ReadOnly && req.UndoOf == "" {
			e, err := req.Tool.Preview(ctx, req.Call, req.Context)
			if err != nil {
				req.previewed.err = err
			} else {
				req.previewed.effects = &e
			}
		}
		req.Effects = req.previewed.effects
	}
	return req.previewed.effects, req.previewed.err
}

// touched are the files a call touches (see policy.Request.Files).
type touched struct {
	files  []string
	listed bool
}

// files returns the files the call touches: the paths its arguments name
// (see policy.ArgPaths) as the tool context's file bridge resolves them —
// relative to the workspace, cleaned, links resolved — and the files its
// preview says it would change. listed says they include every file it
// would change: its tool is read-only, or is a core tool whose preview
// lists its changes (write, edit, apply_patch, tts) and the preview worked,
// and every path it names resolves inside the workspace.
// Worked out once for the call's arguments.
func (req *Request) files(ctx context.Context) (files []string, listed bool) {
	if req.touched != nil {
		return req.touched.files, req.touched.listed
	}
	t := &touched{listed: req.Tool.Meta.ReadOnly}
	unresolved := false
	if args, err := req.Args(); err == nil && req.Context != nil && req.Context.FS != nil {
		for _, p := range policy.ArgPaths(args) {
			canon, err := req.Context.FS.Resolve(ctx, p)
			if err != nil {
				unresolved = true // matched as given (policy.ArgPaths)
				continue
			}
			t.files = append(t.files, canon)
		}
	}
	if !t.listed {
		e, err := req.preview(ctx)
		if e != nil {
			t.files = append(t.files, e.Files...)
		}
		t.listed = err == nil && e != nil && req.Tool.Meta.Source == tool.SourceCore && catalog.ChangesFiles(req.Tool.Meta.ID)
	}
	t.listed = t.listed && !unresolved
	slices.Sort(t.files)
	t.files = slices.Compact(t.files)
	req.touched = t
	return t.files, t.listed
}

// programs returns the programs the call's command would start, as its
// tool's preview lists them, and whether that list is complete.
func (req *Request) programs(ctx context.Context) ([]tool.Program, bool) {
	e, err := req.preview(ctx)
	if err != nil || e == nil {
		return nil, false
	}
	return e.Programs, e.Command != "" && e.Unsummarized == ""
}
