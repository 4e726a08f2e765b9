package fsbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/toolbelt/toolbelt/internal/randid"
)

// maxLinks bounds the symbolic links followed while resolving one path.
const maxLinks = 40

// Local is a [Bridge] to a directory on disk, confined with [os.Root]: every
// operation happens relative to a descriptor of the root directory, and
// [os.Root] refuses ".." and symbolic links that lead outside it, even when
// the tree changes during the operation. On top of that, Local resolves
// paths itself before acting so that refusals can say which link leads where,
// protected paths are recognised however they are spelled, and writes go to
// a link's target rather than replacing the link.
//
// Writes are atomic (a temporary file in the same directory, then a rename)
// and keep the file's mode. Reading or writing a regular file with more than
// one hard link is refused unless [AllowHardLinks] is given: another link
// may be a file outside the root, which no path check can see.
type Local struct {
	dir            string // absolute, as given
	real           string // dir with symbolic links resolved
	root           *os.Root
	prot           protector
	hidden         protector // concealed directories (see Conceal)
	concealedDirs  []string  // the directories given to Conceal, absolute, and their real paths
	allowHardLinks bool
}

var _ Bridge = (*Local)(nil)

// OpenLocal opens a bridge confined to the directory dir. The root comes from
// configuration, never from a model. Close it when done.
func OpenLocal(dir string, opts ...Option) (*Local, error) {
	o := newOptions(opts)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory", dir)
	}
	prot, err := newProtector(o.protected, abs, real)
	if err != nil {
		return nil, err
	}
	var absConcealed []string
	for _, c := range o.concealed {
		if !filepath.IsAbs(c) {
			return nil, fmt.Errorf("concealed directory %q: give an absolute path", c)
		}
		absConcealed = append(absConcealed, c)
		if r, err := filepath.EvalSymlinks(c); err == nil && r != c {
			absConcealed = append(absConcealed, r)
		}
	}
	hidden, err := newProtector(absConcealed, abs, real)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	return &Local{dir: abs, real: real, root: root, prot: prot, hidden: hidden, concealedDirs: absConcealed, allowHardLinks: o.allowHardLinks}, nil
}

// Concealed returns the directories the bridge conceals (see [Conceal]):
// each as given and, when it differs, with its symbolic links resolved.
// Tools that reach files by other ways than the bridge (a shell) must hide
// them too.
func (l *Local) Concealed() []string { return slices.Clone(l.concealedDirs) }

// Protection returns the bridge's protected-path list (see [Protect]),
// compiled for its root with symbolic links resolved.
func (l *Local) Protection() Protection { return Protection{l.prot} }

// concealed reports whether the canonical path p lies in a concealed
// directory.
func (l *Local) concealed(p string) bool {
	_, ok := l.hidden.match(p)
	return ok
}

// holdsConcealed reports whether the directory canon holds a concealed
// directory.
func (l *Local) holdsConcealed(canon string) bool {
	var elems []string
	if canon != "." {
		elems = splitPath(canon)
	}
	for _, r := range l.hidden.rules {
		if len(r.elems) < len(elems) {
			continue
		}
		inside := true
		for i, e := range elems {
			if fold(e) != r.elems[i] {
				inside = false
				break
			}
		}
		if inside {
			return true
		}
	}
	return false
}

// checkConcealed refuses raw when it, or what it resolves to, lies in a
// concealed directory.
func (l *Local) checkConcealed(op, given, raw string) error {
	if len(l.hidden.rules) == 0 {
		return nil
	}
	if l.concealed(path.Clean(raw)) {
		return l.refuseConcealed(op, given)
	}
	if r, err := l.resolve(op, given, raw, true); err == nil && l.concealed(r.canon) {
		return l.refuseConcealed(op, given)
	}
	return nil
}

func (l *Local) refuseConcealed(op, given string) error {
	return refuse(op, given, "it is inside Toolbelt's own data directory (the audit log, the undo journal), which tools can neither read nor change; leave it alone")
}

// Close releases the root directory.
func (l *Local) Close() error { return l.root.Close() }

// Root returns the root directory as it was given, made absolute.
func (l *Local) Root() string { return l.dir }

// input checks a path as given and returns it relative to the root (raw, for
// resolution that follows the file system) and lexically cleaned.
func (l *Local) input(op, name string) (raw, clean string, err error) {
	if _, err := checkName(op, name); err != nil {
		return "", "", err
	}
	raw = filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		rel, ok := insideAny(filepath.Clean(name), []string{l.dir, l.real})
		if !ok {
			return "", "", refuse(op, name, "the absolute path is outside the workspace %s: file tools only reach files inside it; give a path relative to the workspace root", l.dir)
		}
		raw = rel
	}
	clean, err = lexical(op, name, raw)
	return raw, clean, err
}

// resolution is a path resolved against the disk.
type resolution struct {
	canon string
	// firstMissing is the index of the first element of canon that does
	// not exist, or -1.
	firstMissing int
}

// resolve returns the canonical form of raw: every symbolic link resolved
// (the final element only when follow is set), refusing links that lead
// outside the root. Elements past the first missing one are taken as they
// are.
func (l *Local) resolve(op, given, raw string, follow bool) (resolution, error) {
	pending := splitPath(raw)
	var done []string
	links, firstMissing := 0, -1
	via := ""
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(done) == 0 {
				return resolution{}, l.escape(op, given, via)
			}
			done = done[:len(done)-1]
			if firstMissing >= len(done) {
				firstMissing = -1 // back in directories that exist: resolve again
			}
			continue
		}
		if firstMissing >= 0 || !follow && len(pending) == 0 {
			if firstMissing < 0 && !follow {
				// The final element is taken as it is; record whether it exists.
				if _, err := l.root.Lstat(joinPath(append(slices.Clip(done), c))); errors.Is(err, fs.ErrNotExist) {
					firstMissing = len(done)
				}
			}
			done = append(done, c)
			continue
		}
		cand := joinPath(append(slices.Clip(done), c))
		fi, err := l.root.Lstat(cand)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			firstMissing = len(done)
			done = append(done, c)
			continue
		case err != nil:
			return resolution{}, l.osErr(op, given, err)
		case fi.Mode()&fs.ModeSymlink == 0:
			if len(pending) > 0 && !fi.IsDir() {
				return resolution{}, pathErr(op, given, ErrNotDir)
			}
			done = append(done, c)
			continue
		}
		if links++; links > maxLinks {
			return resolution{}, refuse(op, given, "the path goes through more than %d symbolic links (a loop?): use a path without them", maxLinks)
		}
		target, err := l.root.Readlink(cand)
		if err != nil {
			return resolution{}, l.osErr(op, given, err)
		}
		via = fmt.Sprintf("%s is a symbolic link to %s", cand, target)
		if filepath.IsAbs(target) {
			rel, ok := insideAny(filepath.Clean(target), []string{l.dir, l.real})
			if !ok {
				return resolution{}, refuse(op, given, "%s, which is outside the workspace %s; file tools never follow links out of the workspace. Use a path inside the workspace", via, l.dir)
			}
			done = nil
			pending = append(splitPath(rel), pending...)
			continue
		}
		pending = append(splitPath(filepath.ToSlash(target)), pending...)
	}
	return resolution{canon: joinPath(done), firstMissing: firstMissing}, nil
}

// escape is the refusal for a path that climbs above the root.
func (l *Local) escape(op, given, via string) error {
	if via != "" {
		return refuse(op, given, "%s, and with it the path leads outside the workspace %s; file tools never follow links out of the workspace. Use a path inside the workspace", via, l.dir)
	}
	return refuse(op, given, `the path climbs above the workspace root %s with "..": file tools only reach files inside the workspace`, l.dir)
}

// osErr turns an error from the file system into one about the path as
// given: refusals for escapes os.Root caught, the usual errors otherwise.
func (l *Local) osErr(op, given string, err error) error {
	var pe *fs.PathError
	inner := err
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	switch {
	case errors.Is(inner, fs.ErrNotExist):
		return pathErr(op, given, fs.ErrNotExist)
	case errors.Is(inner, syscall.ENOTDIR):
		return pathErr(op, given, ErrNotDir)
	case errors.Is(inner, syscall.EISDIR):
		return pathErr(op, given, ErrIsDir)
	case errors.Is(inner, syscall.ELOOP):
		return refuse(op, given, "the path goes through too many symbolic links (a loop?): use a path without them")
	case strings.Contains(inner.Error(), "escapes"):
		return refuse(op, given, "the path leads outside the workspace %s (through a symbolic link or \"..\"); file tools only reach files inside it", l.dir)
	}
	return pathErr(op, given, inner)
}

// Resolve implements [Bridge].
func (l *Local) Resolve(ctx context.Context, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	raw, _, err := l.input("use", name)
	if err != nil {
		return "", err
	}
	r, err := l.resolve("use", name, raw, true)
	return r.canon, err
}

// reading runs a read-only operation on raw, which os.Root confines; when it
// fails, the path is resolved by hand to explain why, or to retry with its
// canonical form (os.Root refuses absolute links even into the root).
func reading[T any](l *Local, ctx context.Context, op, name string, do func(p string) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	raw, _, err := l.input(op, name)
	if err != nil {
		return zero, err
	}
	if err := l.checkConcealed(op, name, raw); err != nil {
		return zero, err
	}
	v, err := do(raw)
	if err == nil {
		return v, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		// os.Root reports links that lead out, absolute ones included, as
		// escapes; a missing file is missing.
		return zero, pathErr(op, name, fs.ErrNotExist)
	}
	r, rerr := l.resolve(op, name, raw, true)
	if rerr != nil {
		return zero, rerr
	}
	if r.canon != path.Clean(raw) && r.firstMissing < 0 {
		if v, err2 := do(r.canon); err2 == nil {
			return v, nil
		}
	}
	return zero, l.osErr(op, name, err)
}

// Stat implements [Bridge].
func (l *Local) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return reading(l, ctx, "stat", name, l.root.Stat)
}

// Open implements [Bridge].
func (l *Local) Open(ctx context.Context, name string) (fs.File, error) {
	f, err := reading(l, ctx, "read", name, func(p string) (*os.File, error) {
		return l.root.OpenFile(p, os.O_RDONLY|openFlags, 0)
	})
	if err != nil {
		return nil, err
	}
	return l.checkOpened(f, name)
}

// checkOpened refuses an opened file that is neither a regular file nor a
// directory, or that has several hard links (see [AllowHardLinks]), and
// closes it.
func (l *Local) checkOpened(f *os.File, name string) (fs.File, error) {
	st, err := f.Stat()
	if err != nil {
		err = l.osErr("read", name, err)
	} else {
		err = l.checkInfo(name, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkInfo refuses to read a file that is neither a regular file nor a
// directory, or that has several hard links (see [AllowHardLinks]).
func (l *Local) checkInfo(name string, st fs.FileInfo) error {
	if t := st.Mode().Type(); t != 0 && t != fs.ModeDir {
		return refuse("read", name, "it is not a regular file (%s): file tools only read regular files and directories", describeType(t))
	}
	return l.checkLinks("read", name, st)
}

// checkLinks refuses a regular file with more than one hard link, unless
// the bridge allows them: the other link may be a file outside the root,
// which it would read or change through this one.
func (l *Local) checkLinks(op, name string, fi fs.FileInfo) error {
	n := linkCount(fi)
	if l.allowHardLinks || !fi.Mode().IsRegular() || n <= 1 {
		return nil
	}
	e := &RefusedError{Op: op, Path: name, kind: ErrHardLinked,
		Reason: fmt.Sprintf("the file has %d hard links, and another link may be a file outside the workspace. Hard-linked files are neither read nor written; ", n)}
	if op == "read" {
		e.Reason += "read another file, or ask the user to replace this one with a copy (or to allow hard links)"
	} else {
		e.Reason += "write a new file instead, or ask the user to allow hard links"
	}
	return e
}

// describeType names a special file type.
func describeType(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// ReadFile implements [Bridge].
func (l *Local) ReadFile(ctx context.Context, name string) ([]byte, error) {
	f, err := l.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, pathErr("read", name, ErrIsDir)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, l.osErr("read", name, err)
	}
	return b, nil
}

// ReadDir implements [Bridge].
func (l *Local) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	canon, err := l.canonical(ctx, "list", name)
	if err != nil {
		return nil, err
	}
	d, err := l.root.OpenRoot(canon)
	if err != nil {
		return nil, l.osErr("list", name, err)
	}
	defer d.Close()
	list, err := readDir(d)
	if err != nil {
		return nil, l.osErr("list", name, err)
	}
	entries := make([]fs.DirEntry, 0, len(list))
	in := &listing{l: l}
	for _, e := range list {
		p := childPath(canon, e.name)
		if l.concealed(p) {
			continue
		}
		entries = append(entries, localEntry{dirent: e, path: p, in: in})
	}
	return entries, nil
}

// canonical checks and resolves a path, following every link.
func (l *Local) canonical(ctx context.Context, op, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	raw, _, err := l.input(op, name)
	if err != nil {
		return "", err
	}
	r, err := l.resolve(op, name, raw, true)
	if err != nil {
		return "", err
	}
	if r.firstMissing >= 0 {
		return "", pathErr(op, name, fs.ErrNotExist)
	}
	if l.concealed(r.canon) {
		return "", l.refuseConcealed(op, name)
	}
	return r.canon, nil
}

// dirent is a directory entry as listed: a name and a file type.
type dirent struct {
	name string
	typ  fs.FileMode
}

// readDir lists the directory d, sorted by name.
func readDir(d *os.Root) ([]dirent, error) {
	entries, err := rootDir{d}.list(nil)
	sortDirents(entries)
	return entries, err
}

// sortDirents sorts entries by name.
func sortDirents(entries []dirent) {
	slices.SortFunc(entries, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
}

func childPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// localEntry is a directory entry whose Info is looked up inside the root
// (the standard library's looks it up by absolute path). In a walk it also
// opens its file relative to its directory, in one step.
type localEntry struct {
	dirent
	path string
	in   *listing
}

// listing is what the entries of one directory's listing share.
type listing struct {
	l   *Local
	dir walkDir // the open directory during a walk, or nil
	// entries is the walk's listing of dir, sorted by name.
	entries []dirent
}

func (e localEntry) Name() string      { return e.name }
func (e localEntry) IsDir() bool       { return e.typ.IsDir() }
func (e localEntry) Type() fs.FileMode { return e.typ }

// Open implements [Opener].
func (e localEntry) Open() (fs.File, error) { return e.open(e.name, e.path) }

// OpenSibling implements [Opener].
func (e localEntry) OpenSibling(name string) (fs.File, error) {
	if err := checkChild(name); err != nil {
		return nil, err
	}
	p := childPath(path.Dir(e.path), name)
	if e.in.dir != nil {
		if _, found := slices.BinarySearchFunc(e.in.entries, name, func(d dirent, name string) int { return strings.Compare(d.name, name) }); !found {
			return nil, e.in.l.osErr("read", p, fs.ErrNotExist)
		}
	}
	return e.open(name, p)
}

// open opens rel, relative to the directory being walked (p is its path
// from the root).
func (e localEntry) open(rel, p string) (fs.File, error) {
	if e.in.dir == nil || len(e.in.l.hidden.rules) > 0 { // resolved and checked
		return e.in.l.Open(context.Background(), p)
	}
	return e.in.dir.open(e.in.l, rel, p)
}

func (e localEntry) Info() (fs.FileInfo, error) {
	fi, err := e.in.l.root.Lstat(e.path)
	if err != nil {
		return nil, e.in.l.osErr("stat", e.path, err)
	}
	return fi, nil
}

// WalkDir implements [Bridge]. Each directory is opened relative to its
// parent's descriptor, so a walk costs one open per directory.
func (l *Local) WalkDir(ctx context.Context, name string, fn fs.WalkDirFunc) error {
	canon, err := l.canonical(ctx, "walk", name)
	if err != nil {
		return fn(name, nil, err)
	}
	fi, err := l.root.Stat(canon)
	if err != nil {
		return fn(canon, nil, l.osErr("walk", name, err))
	}
	top := localEntry{dirent: dirent{fi.Name(), fi.Mode().Type()}, path: canon, in: &listing{l: l}}
	err = fn(canon, top, nil)
	if err != nil || !fi.IsDir() {
		return skipped(err)
	}
	d, err := l.openWalk(canon)
	if err != nil {
		return skipped(fn(canon, top, l.osErr("walk", name, err)))
	}
	defer d.close()
	return skipped(l.walk(ctx, d, canon, top, fn, make([]byte, 32<<10)))
}

// skipped turns the end of a walk by SkipDir or SkipAll into success.
func skipped(err error) error {
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// walk walks the open directory d at dir; buf is scratch space for listing.
func (l *Local) walk(ctx context.Context, d walkDir, dir string, self fs.DirEntry, fn fs.WalkDirFunc, buf []byte) error {
	entries, err := d.list(buf)
	sortDirents(entries)
	if err != nil {
		if err := fn(dir, self, l.osErr("walk", dir, err)); err != nil {
			return err
		}
	}
	in := &listing{l: l, dir: d, entries: entries}
	// An entry used after its directory is closed (the descriptor number
	// may be another directory's by then) opens by path from the root.
	defer func() { in.dir = nil }()
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := childPath(dir, e.name)
		if l.concealed(p) {
			continue
		}
		entry := localEntry{dirent: e, path: p, in: in}
		err := fn(p, entry, nil)
		if !entry.IsDir() || err != nil {
			if errors.Is(err, fs.SkipDir) {
				if entry.IsDir() {
					continue
				}
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		sub, err := d.sub(e.name)
		if err != nil {
			if err := fn(p, entry, l.osErr("walk", p, err)); err != nil && !errors.Is(err, fs.SkipDir) {
				return err
			}
			continue
		}
		err = l.walk(ctx, sub, p, entry, fn, buf)
		sub.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// walkDir is a directory open during a walk: it is listed, and its entries
// are opened, relative to its own descriptor, never by path.
type walkDir interface {
	// list returns the directory's entries, unsorted; buf is scratch space.
	list(buf []byte) ([]dirent, error)
	// sub opens the subdirectory name.
	sub(name string) (walkDir, error)
	// open opens the entry name for reading as [Local.Open] would (p is its
	// path from the root).
	open(l *Local, name, p string) (fs.File, error)
	close() error
}

// rootDir is a walkDir confined by [os.Root], on every system.
type rootDir struct{ *os.Root }

func (d rootDir) list([]byte) ([]dirent, error) {
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return listDir(d.Root, f)
}

func (d rootDir) sub(name string) (walkDir, error) {
	r, err := d.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return rootDir{r}, nil
}

func (d rootDir) open(l *Local, name, p string) (fs.File, error) {
	f, err := d.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		// A link out of d (which d refuses) may stay in the root, and
		// other failures are explained by resolving the path.
		return l.Open(context.Background(), p)
	}
	return l.checkOpened(f, p)
}

func (d rootDir) close() error { return d.Close() }

// slot is where a write lands: the opened parent directory and the name in it.
type slot struct {
	dir  *os.Root
	base string
	// canon is the canonical path of the file.
	canon string
	// info describes the existing file (not followed); nil when there is none.
	info fs.FileInfo
}

// slot resolves name for op, refuses protected paths and the root, and opens
// the parent directory. follow says whether a final symbolic link is
// followed (writes) or acted on itself (remove, rename). The caller closes
// s.dir.
func (l *Local) slot(ctx context.Context, op, name string, follow bool) (*slot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, clean, err := l.input(op, name)
	if err != nil {
		return nil, err
	}
	if err := l.prot.check(op, name, clean); err != nil {
		return nil, err
	}
	r, err := l.resolve(op, name, raw, follow)
	if err != nil {
		return nil, err
	}
	if r.canon == "." || clean == "." {
		return nil, refuse(op, name, rootItself)
	}
	if err := l.prot.check(op, name, r.canon); err != nil {
		return nil, err
	}
	if l.concealed(clean) || l.concealed(r.canon) {
		return nil, l.refuseConcealed(op, name)
	}
	parent, base := path.Split(r.canon)
	parent = strings.TrimSuffix(parent, "/")
	if parent == "" {
		parent = "."
	}
	if r.firstMissing >= 0 && r.firstMissing < len(splitPath(r.canon))-1 {
		return nil, pathErr(op, name, fmt.Errorf("the directory %s does not exist: %w", parent, fs.ErrNotExist))
	}
	d, err := l.root.OpenRoot(parent)
	if err != nil {
		return nil, l.osErr(op, name, err)
	}
	// The parent was resolved without links; if it was swapped since, refuse
	// rather than act on where the swap points.
	if parent != "." {
		opened, err1 := d.Stat(".")
		current, err2 := l.root.Lstat(parent)
		if err1 != nil || err2 != nil || !os.SameFile(opened, current) {
			d.Close()
			return nil, refuse(op, name, "the directory %s changed while it was being opened (something else is changing the workspace): retry", parent)
		}
	}
	s := &slot{dir: d, base: base, canon: r.canon}
	fi, err := d.Lstat(base)
	switch {
	case err == nil:
		s.info = fi
	case !errors.Is(err, fs.ErrNotExist):
		d.Close()
		return nil, l.osErr(op, name, err)
	}
	return s, nil
}

// checkReplace refuses replacing the existing file s.info by a write.
func (l *Local) checkReplace(op, name string, s *slot) error {
	fi := s.info
	switch {
	case fi == nil:
		return nil
	case fi.IsDir():
		return pathErr(op, name, ErrIsDir)
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(op, name, "it became a symbolic link while being written (something else is changing the workspace): retry")
	case !fi.Mode().IsRegular():
		return refuse(op, name, "it is not a regular file (%s): file tools only write regular files", describeType(fi.Mode().Type()))
	}
	return l.checkLinks(op, name, fi)
}

// CheckWrite implements [Bridge].
func (l *Local) CheckWrite(ctx context.Context, name string) error {
	s, err := l.slot(ctx, "write", name, true)
	if err != nil {
		return err
	}
	defer s.dir.Close()
	return l.checkReplace("write", name, s)
}

// WriteFile implements [Bridge]: the data goes to a temporary file in the
// same directory, which is synced and renamed over the target.
func (l *Local) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	s, err := l.slot(ctx, "write", name, true)
	if err != nil {
		return err
	}
	defer s.dir.Close()
	if err := l.checkReplace("write", name, s); err != nil {
		return err
	}
	if err := writeAtomic(ctx, s, data, perm.Perm()); err != nil {
		return l.osErr("write", name, err)
	}
	return nil
}

// writeAtomic writes data to a new temporary file beside s.base and renames
// it over s.base. An existing file's mode (and, for root, owner) is kept.
func writeAtomic(ctx context.Context, s *slot, data []byte, perm fs.FileMode) (err error) {
	tmp := tempName(s.base)
	createPerm := perm
	if s.info != nil {
		createPerm = 0o600 // set exactly below
	}
	f, err := s.dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, createPerm)
	if err != nil {
		return err
	}
	// The lock tells RemoveStaleTemp in another process that this file is
	// being written; it is held until the file is in place.
	lockTemp(f)
	closed := false
	defer func() {
		if !closed {
			_ = f.Close()
		}
		if err != nil {
			_ = s.dir.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil && s.info != nil {
		err = f.Chmod(s.info.Mode().Perm())
		keepOwner(f, s.info)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return err
	}
	if !renameOpenFiles {
		closed = true
		if err = f.Close(); err != nil {
			return err
		}
	}
	if err = s.dir.Rename(tmp, s.base); err != nil {
		return err
	}
	if !closed {
		closed = true
		_ = f.Close() // the data is synced and in place
	}
	if d, err := s.dir.Open("."); err == nil {
		_ = d.Sync() // make the rename durable; not every file system supports it
		d.Close()
	}
	return nil
}

// tempName returns a fresh name for a temporary file beside base.
func tempName(base string) string {
	if len(base) > 200 {
		base = base[:200]
	}
	return "." + base + randid.New(".toolbelt-", 6) + ".tmp"
}

// MkdirAll implements [Bridge]. Every directory it would create is checked
// against the protected-path list.
func (l *Local) MkdirAll(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, clean, err := l.input("mkdir", name)
	if err != nil {
		return err
	}
	if err := l.prot.check("mkdir", name, clean); err != nil {
		return err
	}
	r, err := l.resolve("mkdir", name, raw, true)
	if err != nil {
		return err
	}
	if l.concealed(clean) || l.concealed(r.canon) {
		return l.refuseConcealed("mkdir", name)
	}
	if r.firstMissing < 0 {
		fi, err := l.root.Stat(r.canon)
		if err != nil {
			return l.osErr("mkdir", name, err)
		}
		if !fi.IsDir() {
			return pathErr("mkdir", name, ErrNotDir)
		}
		return nil
	}
	elems := splitPath(r.canon)
	for i := r.firstMissing; i < len(elems); i++ {
		if err := l.prot.check("mkdir", name, joinPath(elems[:i+1])); err != nil {
			return err
		}
	}
	if err := l.root.MkdirAll(r.canon, 0o755); err != nil {
		return l.osErr("mkdir", name, err)
	}
	return nil
}

// Remove implements [Bridge].
func (l *Local) Remove(ctx context.Context, name string) error {
	s, err := l.slot(ctx, "remove", name, false)
	if err != nil {
		return err
	}
	defer s.dir.Close()
	if s.info == nil {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if err := s.dir.Remove(s.base); err != nil {
		return l.osErr("remove", name, err)
	}
	return nil
}

// Rename implements [Bridge]. Moving a directory is refused when anything
// below it is protected, at its old place or its new one.
func (l *Local) Rename(ctx context.Context, oldName, newName string) error {
	from, err := l.slot(ctx, "move", oldName, false)
	if err != nil {
		return err
	}
	defer from.dir.Close()
	if from.info == nil {
		return pathErr("move", oldName, fs.ErrNotExist)
	}
	to, err := l.slot(ctx, "move", newName, false)
	if err != nil {
		return err
	}
	defer to.dir.Close()
	if to.info != nil && to.info.IsDir() {
		return pathErr("move", newName, ErrIsDir)
	}
	if from.info.IsDir() {
		if err := l.checkTree(ctx, oldName, from.canon, to.canon); err != nil {
			return err
		}
	}
	if err := l.root.Rename(from.canon, to.canon); err != nil {
		return l.osErr("move", oldName, err)
	}
	return nil
}

// checkTree refuses moving the directory canon to dest when a path below it
// is protected at either place.
func (l *Local) checkTree(ctx context.Context, given, canon, dest string) error {
	if l.holdsConcealed(canon) {
		return l.refuseConcealed("move", given)
	}
	return l.WalkDir(ctx, canon, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, canon), "/")
		if rel == "" {
			return nil
		}
		return l.prot.check("move", given, p, dest+"/"+rel)
	})
}
