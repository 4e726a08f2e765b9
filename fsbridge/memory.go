package fsbridge

import (
	"bytes"
	"context"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a [Bridge] that keeps files in memory, for tests and for programs
// that embed Toolbelt without giving it a disk. It has no symbolic or hard
// links; paths are resolved lexically, and the same path checks and
// protected-path list apply as for [Local].
type Memory struct {
	mu    sync.RWMutex
	nodes map[string]*memNode // by canonical path; "." is the root
	prot  protector
}

var _ Bridge = (*Memory)(nil)

type memNode struct {
	data []byte
	mode fs.FileMode // includes fs.ModeDir for directories
	mod  time.Time
}

// NewMemory returns an empty in-memory bridge. It fails only when a
// protected-path pattern given with [Protect] is malformed.
func NewMemory(opts ...Option) (*Memory, error) {
	o := newOptions(opts)
	prot, err := newProtector(o.protected)
	if err != nil {
		return nil, err
	}
	return &Memory{
		nodes: map[string]*memNode{".": {mode: fs.ModeDir | 0o755, mod: time.Now()}},
		prot:  prot,
	}, nil
}

// Load copies the files and directories of fsys into m, replacing files of
// the same names. It is how a program gives an in-memory workspace its
// content: the protected-path list does not apply to it.
func (m *Memory) Load(fsys fs.FS) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := &memNode{mode: info.Mode(), mod: info.ModTime()}
		if !d.IsDir() {
			if n.data, err = fs.ReadFile(fsys, p); err != nil {
				return err
			}
			n.mode = info.Mode().Perm()
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if old, ok := m.nodes[p]; ok && old.mode.IsDir() && d.IsDir() {
			return nil
		}
		m.nodes[p] = n
		return nil
	})
}

// Root returns "memory".
func (m *Memory) Root() string { return "memory" }

// canonical checks a path as given and returns it cleaned.
func (m *Memory) canonical(ctx context.Context, op, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if _, err := checkName(op, name); err != nil {
		return "", err
	}
	if path.IsAbs(name) {
		return "", refuse(op, name, "absolute paths are outside this in-memory workspace: give a path relative to its root")
	}
	return lexical(op, name, name)
}

// Resolve implements [Bridge].
func (m *Memory) Resolve(ctx context.Context, name string) (string, error) {
	return m.canonical(ctx, "use", name)
}

// lookup returns the node at canonical path p; the caller holds m.mu. A file
// used as a directory on the way is reported as [ErrNotDir].
func (m *Memory) lookup(op, given, p string) (*memNode, error) {
	if n, ok := m.nodes[p]; ok {
		return n, nil
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if n, ok := m.nodes[dir]; ok && !n.mode.IsDir() {
			return nil, pathErr(op, given, ErrNotDir)
		}
	}
	return nil, pathErr(op, given, fs.ErrNotExist)
}

// Stat implements [Bridge].
func (m *Memory) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p, err := m.canonical(ctx, "stat", name)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("stat", name, p)
	if err != nil {
		return nil, err
	}
	return memInfo{path.Base(p), *n}, nil
}

// Open implements [Bridge]. The file is a snapshot: later writes do not
// change what it reads.
func (m *Memory) Open(ctx context.Context, name string) (fs.File, error) {
	p, err := m.canonical(ctx, "read", name)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("read", name, p)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(n.data), info: memInfo{path.Base(p), *n}}, nil
}

// ReadFile implements [Bridge].
func (m *Memory) ReadFile(ctx context.Context, name string) ([]byte, error) {
	p, err := m.canonical(ctx, "read", name)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("read", name, p)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return nil, pathErr("read", name, ErrIsDir)
	}
	return bytes.Clone(n.data), nil
}

// changing checks a path a write operation names and returns it cleaned: it
// must not be the root or protected.
func (m *Memory) changing(ctx context.Context, op, name string) (string, error) {
	p, err := m.canonical(ctx, op, name)
	if err != nil {
		return "", err
	}
	if p == "." {
		return "", refuse(op, name, rootItself)
	}
	return p, m.prot.check(op, name, p)
}

// writable checks that a file may be put at p, checked by changing: its
// parent is a directory, and no directory is in the way. It returns the
// existing file, if any; the caller holds m.mu.
func (m *Memory) writable(op, given, p string) (*memNode, error) {
	parent, err := m.lookup(op, given, path.Dir(p))
	if err != nil {
		return nil, err
	}
	if !parent.mode.IsDir() {
		return nil, pathErr(op, given, ErrNotDir)
	}
	n := m.nodes[p]
	if n != nil && n.mode.IsDir() {
		return nil, pathErr(op, given, ErrIsDir)
	}
	return n, nil
}

// CheckWrite implements [Bridge].
func (m *Memory) CheckWrite(ctx context.Context, name string) error {
	p, err := m.changing(ctx, "write", name)
	if err != nil {
		return err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, err = m.writable("write", name, p)
	return err
}

// WriteFile implements [Bridge].
func (m *Memory) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := m.changing(ctx, "write", name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, err := m.writable("write", name, p)
	if err != nil {
		return err
	}
	mode := perm.Perm()
	if old != nil {
		mode = old.mode
	}
	m.nodes[p] = &memNode{data: bytes.Clone(data), mode: mode, mod: time.Now()}
	return nil
}

// MkdirAll implements [Bridge].
func (m *Memory) MkdirAll(ctx context.Context, name string) error {
	p, err := m.canonical(ctx, "mkdir", name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	elems := splitPath(p)
	if p == "." {
		elems = nil
	}
	for i := range elems {
		dir := joinPath(elems[:i+1])
		n, ok := m.nodes[dir]
		if ok && !n.mode.IsDir() {
			return pathErr("mkdir", name, ErrNotDir)
		}
		if !ok {
			if err := m.prot.check("mkdir", name, dir); err != nil {
				return err
			}
		}
	}
	now := time.Now()
	for i := range elems {
		dir := joinPath(elems[:i+1])
		if _, ok := m.nodes[dir]; !ok {
			m.nodes[dir] = &memNode{mode: fs.ModeDir | 0o755, mod: now}
		}
	}
	return nil
}

// children returns the names directly below the directory p, sorted; the
// caller holds m.mu.
func (m *Memory) children(p string) []string {
	prefix := p + "/"
	if p == "." {
		prefix = ""
	}
	var names []string
	for q := range m.nodes {
		if q == "." || !strings.HasPrefix(q, prefix) {
			continue
		}
		if rest := q[len(prefix):]; !strings.Contains(rest, "/") {
			names = append(names, rest)
		}
	}
	slices.Sort(names)
	return names
}

// ReadDir implements [Bridge].
func (m *Memory) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	p, err := m.canonical(ctx, "list", name)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("list", name, p)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, pathErr("list", name, ErrNotDir)
	}
	var out []fs.DirEntry
	for _, c := range m.children(p) {
		out = append(out, fs.FileInfoToDirEntry(memInfo{c, *m.nodes[childPath(p, c)]}))
	}
	return out, nil
}

// WalkDir implements [Bridge]. It walks a snapshot of the tree taken when it
// starts.
func (m *Memory) WalkDir(ctx context.Context, name string, fn fs.WalkDirFunc) error {
	p, err := m.canonical(ctx, "walk", name)
	if err != nil {
		return fn(name, nil, err)
	}
	m.mu.RLock()
	n, err := m.lookup("walk", name, p)
	var tree map[string][]fs.DirEntry
	if err == nil && n.mode.IsDir() {
		tree = map[string][]fs.DirEntry{}
		prefix := p + "/"
		for q, qn := range m.nodes {
			if qn.mode.IsDir() && (q == p || p == "." || strings.HasPrefix(q, prefix)) {
				for _, c := range m.children(q) {
					cp := childPath(q, c)
					tree[q] = append(tree[q], memEntry{fs.FileInfoToDirEntry(memInfo{c, *m.nodes[cp]}), m, cp})
				}
			}
		}
	}
	var top fs.DirEntry
	if n != nil {
		top = memEntry{fs.FileInfoToDirEntry(memInfo{path.Base(p), *n}), m, p}
	}
	m.mu.RUnlock()
	if err != nil {
		return fn(p, nil, err)
	}
	if err := fn(p, top, nil); err != nil || tree == nil {
		return skipped(err)
	}
	return skipped(walkTree(ctx, tree, p, fn))
}

func walkTree(ctx context.Context, tree map[string][]fs.DirEntry, dir string, fn fs.WalkDirFunc) error {
	for _, e := range tree[dir] {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := childPath(dir, e.Name())
		err := fn(p, e, nil)
		switch {
		case err == nil && e.IsDir():
			if err := walkTree(ctx, tree, p, fn); err != nil {
				return err
			}
		case err == fs.SkipDir && e.IsDir():
		case err == fs.SkipDir:
			return nil
		case err != nil:
			return err
		}
	}
	return nil
}

// Remove implements [Bridge].
func (m *Memory) Remove(ctx context.Context, name string) error {
	p, err := m.changing(ctx, "remove", name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("remove", name, p)
	if err != nil {
		return err
	}
	if n.mode.IsDir() && len(m.children(p)) > 0 {
		return pathErr("remove", name, errNotEmpty)
	}
	delete(m.nodes, p)
	return nil
}

// Rename implements [Bridge].
func (m *Memory) Rename(ctx context.Context, oldName, newName string) error {
	from, err := m.changing(ctx, "move", oldName)
	if err != nil {
		return err
	}
	to, err := m.changing(ctx, "move", newName)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("move", oldName, from)
	if err != nil {
		return err
	}
	if old, err := m.writable("move", newName, to); err != nil {
		return err
	} else if old != nil && n.mode.IsDir() {
		return pathErr("move", newName, ErrNotDir)
	}
	if from == to {
		return nil
	}
	if !n.mode.IsDir() {
		m.nodes[to] = n
		delete(m.nodes, from)
		return nil
	}
	if strings.HasPrefix(to, from+"/") {
		return pathErr("move", newName, errIntoItself)
	}
	moves := map[string]string{}
	for q := range m.nodes {
		if q == from || strings.HasPrefix(q, from+"/") {
			dest := to + q[len(from):]
			if err := m.prot.check("move", oldName, q, dest); err != nil {
				return err
			}
			moves[q] = dest
		}
	}
	moved := make(map[string]*memNode, len(moves))
	for q := range moves {
		moved[moves[q]] = m.nodes[q]
		delete(m.nodes, q)
	}
	for q, n := range moved {
		m.nodes[q] = n
	}
	return nil
}

var (
	errNotEmpty   = pathError("directory not empty")
	errIntoItself = pathError("cannot move a directory into itself")
)

// pathError is a plain error message for a [fs.PathError].
type pathError string

func (e pathError) Error() string { return string(e) }

// memEntry is a directory entry of a walk.
type memEntry struct {
	fs.DirEntry
	m    *Memory
	path string
}

// Open implements [Opener].
func (e memEntry) Open() (fs.File, error) { return e.m.Open(context.Background(), e.path) }

// OpenSibling implements [Opener].
func (e memEntry) OpenSibling(name string) (fs.File, error) {
	if err := checkChild(name); err != nil {
		return nil, err
	}
	return e.m.Open(context.Background(), childPath(path.Dir(e.path), name))
}

// memInfo describes a memory node.
type memInfo struct {
	name string
	n    memNode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return int64(len(i.n.data)) }
func (i memInfo) Mode() fs.FileMode  { return i.n.mode }
func (i memInfo) ModTime() time.Time { return i.n.mod }
func (i memInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

// memFile is an open memory file.
type memFile struct {
	*bytes.Reader
	info memInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }

func (f *memFile) Read(p []byte) (int, error) {
	if f.info.IsDir() {
		return 0, pathErr("read", f.info.name, ErrIsDir)
	}
	return f.Reader.Read(p)
}

func (f *memFile) Close() error { return nil }
