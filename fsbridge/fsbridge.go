// Package fsbridge gives tools one interface to a file system — a local
// directory confined to a root ([Local]), memory ([Memory]), or anything else
// that can stat, read, write, list, walk, remove and rename — so file tools
// never touch paths directly.
//
// Every path a bridge receives is treated as hostile: it came from a model
// that may have read hostile text. Bridges refuse paths that would leave the
// root ("..", absolute paths elsewhere, symbolic links that lead outside,
// NUL bytes), and refuse to write protected paths (git internals, agent and
// Toolbelt configuration; see [DefaultProtected]) even inside the root.
// Refusals are [*RefusedError]s whose message says what was refused and why,
// in words a model can act on.
package fsbridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Bridge is storage that file tools read and write through. Paths are
// slash-separated and relative to the bridge's root ("src/main.go"; "." is
// the root itself); a bridge may also accept an absolute path that lies
// inside its root. Implementations refuse any path that would leave the root
// and any write to a protected path, with a [*RefusedError].
//
// A missing file is an error that matches [fs.ErrNotExist]; writing a
// directory matches [ErrIsDir]; using a file as a directory matches
// [ErrNotDir]. Implementations are safe for concurrent use.
type Bridge interface {
	// Root names the root for people and models: an absolute directory for
	// [Local], "memory" for [Memory].
	Root() string
	// Resolve returns the canonical form of path: relative to the root,
	// cleaned, with every symbolic link resolved. The path need not exist;
	// the part that does not is cleaned lexically.
	Resolve(ctx context.Context, path string) (string, error)
	// Stat describes the file at path, following symbolic links.
	Stat(ctx context.Context, path string) (fs.FileInfo, error)
	// Open opens the file at path for reading.
	Open(ctx context.Context, path string) (fs.File, error)
	// ReadFile returns the whole content of the file at path.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// CheckWrite reports whether WriteFile(path) would be allowed, without
	// writing: nil, a [*RefusedError], or why it cannot be done (a
	// directory is in the way, a parent is a file).
	CheckWrite(ctx context.Context, path string) error
	// WriteFile replaces the file at path atomically: readers see the old
	// content or the new, never a mix. An existing file keeps its mode; a new
	// one gets perm. The parent directory must exist. Writing through a
	// symbolic link writes its target, which must be inside the root.
	WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error
	// MkdirAll creates the directory at path and any missing parents.
	MkdirAll(ctx context.Context, path string) error
	// ReadDir lists the directory at path, sorted by name. Entries are not
	// followed: a symbolic link is reported as one.
	ReadDir(ctx context.Context, path string) ([]fs.DirEntry, error)
	// WalkDir walks the tree at path like [fs.WalkDir]: in lexical order,
	// calling fn for path itself and then for every entry below it, with
	// paths in canonical form (see Resolve). Symbolic links are reported and
	// never followed. fn may return [fs.SkipDir] or [fs.SkipAll]. The walk
	// stops with ctx's error when ctx is cancelled. The entries implement
	// [Opener].
	WalkDir(ctx context.Context, path string, fn fs.WalkDirFunc) error
	// Remove deletes the file or empty directory at path. A symbolic link is
	// removed itself, not its target.
	Remove(ctx context.Context, path string) error
	// Rename moves oldPath to newPath, replacing a file there. Symbolic links
	// are moved themselves, not their targets.
	Rename(ctx context.Context, oldPath, newPath string) error
}

// Opener is implemented by the entries a bridge's WalkDir passes to its
// function. They open files for reading as Bridge.Open would, but cheaply,
// relative to the directory being walked; they may be used only while the
// function runs.
type Opener interface {
	// Open opens the entry's file.
	Open() (fs.File, error)
	// OpenSibling opens the file name in the entry's directory. A name
	// the walk's listing of that directory does not hold is
	// [fs.ErrNotExist] at once, without asking the file system (so a walk
	// can look for a file in every directory at no cost).
	OpenSibling(name string) (fs.File, error)
}

var (
	// ErrRefused matches every [*RefusedError].
	ErrRefused = errors.New("refused")
	// ErrIsDir matches errors from writing or reading a directory as a file.
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir matches errors from using a file as a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrHardLinked matches the refusals of a file with more than one hard
	// link (see [AllowHardLinks]); they also match [ErrRefused]. Tools that
	// read many files skip such a file and say so.
	ErrHardLinked = errors.New("several hard links")
)

// RefusedError is a refusal: the operation was not attempted because the path
// leaves the root, is protected, or is otherwise unsafe. Its message is meant
// for a model.
type RefusedError struct {
	// Op is the operation refused ("read", "write", "remove", …).
	Op string
	// Path is the path as it was given.
	Path string
	// Reason says why, and what to do instead.
	Reason string
	// kind is a more precise error the refusal matches, such as
	// ErrHardLinked, or nil.
	kind error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to %s %q: %s", e.Op, e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrRefused) true, and errors.Is(err, kind) for
// the refusals of a kind (such as [ErrHardLinked]).
func (e *RefusedError) Is(target error) bool {
	return target == ErrRefused || e.kind != nil && target == e.kind
}

// rootItself is the reason write operations refuse the root.
const rootItself = "this is the workspace root itself: name a file inside it"

func refuse(op, p, format string, args ...any) error {
	return &RefusedError{Op: op, Path: p, Reason: fmt.Sprintf(format, args...)}
}

// pathErr wraps err for the path as it was given.
func pathErr(op, p string, err error) error {
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// checkName refuses what no path may contain, whatever the bridge: nothing,
// a NUL byte, a leading "~". It returns the path slash-separated.
func checkName(op, name string) (string, error) {
	switch {
	case name == "":
		return "", refuse(op, name, `the path is empty: give a path relative to the workspace root, such as "src/main.go", or "." for the root itself`)
	case strings.IndexByte(name, 0) >= 0:
		return "", refuse(op, name, "the path contains a NUL byte, which no file name can contain: remove it and retry")
	case name == "~" || strings.HasPrefix(name, "~/"):
		return "", refuse(op, name, `"~" is not expanded and the home directory is outside the workspace: give a path relative to the workspace root`)
	}
	return name, nil
}

// checkChild refuses a name that is not one file name.
func checkChild(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return refuse("read", name, "OpenSibling takes the name of one file in the directory")
	}
	return nil
}

// lexical cleans a relative slash path and refuses it when ".." would climb
// above the root.
func lexical(op, given, rel string) (string, error) {
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", refuse(op, given, `the path climbs above the workspace root with "..": file tools only reach files inside the workspace; give a path relative to its root`)
	}
	return c, nil
}

// splitPath returns the components of a slash path, without empty ones.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

// joinPath joins components into a canonical path; no components is ".".
func joinPath(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}
