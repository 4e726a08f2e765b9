package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// workspaceRoot returns the real path (symbolic links resolved) of the
// directory commands are confined to: the tool context's file-system root.
// Its error says why the shell tools are unavailable.
func workspaceRoot(tc *tool.Context) (string, error) {
	if tc != nil && tc.FSRoot == "" && tc.Workspace != "" {
		if _, err := os.Stat(tc.Workspace); err != nil {
			return "", fmt.Errorf("the shell tools need a workspace: %w", err)
		}
		return "", fmt.Errorf("the shell tools need a workspace: %s is not open as the file-system root", tc.Workspace)
	}
	if tc == nil || tc.FSRoot == "" {
		return "", errors.New("the shell tools need a workspace: the tool context has no file-system root (give toolbelt a workspace directory, e.g. --workspace DIR)")
	}
	real, err := filepath.EvalSymlinks(tc.FSRoot)
	if err != nil {
		return "", fmt.Errorf("the shell tools need a workspace, but the root %s is unusable: %w", tc.FSRoot, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return "", fmt.Errorf("the shell tools need a workspace, but the root %s is unusable: %w", tc.FSRoot, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("the shell tools need a workspace, but the root %s is unusable: %w", tc.FSRoot, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("the shell tools need a workspace, but the root %s is not a directory", tc.FSRoot)
	}
	return real, nil
}

// ConcealedIn returns the directories inside root (a real path) that the
// tool context's file bridge conceals (see fsbridge.Conceal), with their
// symbolic links resolved: Toolbelt's data directory when the workspace
// holds it. Commands and directory tools' handlers must not reach what
// the file tools cannot.
func ConcealedIn(tc *tool.Context, root string) []string {
	b, ok := tc.FS.(interface{ Concealed() []string })
	if !ok {
		return nil
	}
	var dirs []string
	for _, d := range b.Concealed() {
		real := filepath.Clean(d)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			real = r
		}
		if real != root && within(real, root) && !slices.Contains(dirs, real) {
			dirs = append(dirs, real)
		}
	}
	return dirs
}

// resolveWorkdir returns the real path of the directory a command should
// run in: workdir (relative to root, or absolute) after following every
// symbolic link, which must be root or lie below it. root is a real path.
func resolveWorkdir(root, workdir string) (string, error) {
	if workdir == "" {
		return root, nil
	}
	if strings.ContainsRune(workdir, 0) {
		return "", tool.InputErrorf("workdir %q contains a NUL byte; give a directory path relative to the workspace, such as \"src\"", workdir)
	}
	p := workdir
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	if !within(p, root) {
		return "", outside(workdir, root, "")
	}
	real, err := filepath.EvalSymlinks(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", tool.InputErrorf("workdir %q does not exist in the workspace %s: create it first (for example run mkdir -p in the workspace) or use an existing directory", workdir, root)
	case err != nil:
		return "", tool.InputErrorf("workdir %q cannot be used: %v", workdir, err)
	}
	if !within(real, root) {
		return "", outside(workdir, root, real)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", tool.InputErrorf("workdir %q cannot be used: %v", workdir, err)
	}
	if !st.IsDir() {
		return "", tool.InputErrorf("workdir %q is a file, not a directory: give the directory that contains it", workdir)
	}
	return real, nil
}

func outside(workdir, root, via string) error {
	how := ""
	if via != "" {
		how = fmt.Sprintf(" (through a symbolic link it leads to %s)", via)
	}
	return tool.InputErrorf("workdir %q is outside the workspace %s%s: commands run only inside the workspace. The command was not run; use a directory inside the workspace, relative to it (such as \"src\") or omit workdir", workdir, root, how)
}

// within reports whether the clean absolute path p is root or below it.
func within(p, root string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// SandboxSpec returns the sandbox for a program run for tc in root (its
// real path), with at most limit processes: the workspace writable, what
// the tool context's file bridge conceals covered and what it protects
// read-only, as for exec. Other packages that run programs in the sandbox
// (directory tools) start from it, so that their programs see what exec's
// sandbox shows.
func SandboxSpec(tc *tool.Context, root string, limit int) sandbox.Spec {
	return sandbox.Spec{Root: root, Workdir: root, ProcessLimit: limit, Conceal: ConcealedIn(tc, root), Protect: protectionOf(tc)}
}

// protectionOf returns the protected-path list of the tool context's file
// bridge (see fsbridge.Protect), or nil when it has none: what it
// protects, the sandbox keeps read-only.
func protectionOf(tc *tool.Context) sandbox.Protection {
	if b, ok := tc.FS.(interface{ Protection() fsbridge.Protection }); ok {
		return b.Protection()
	}
	return nil
}
