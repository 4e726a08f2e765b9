// Package dir loads tools from folders: tools/<name>/metadata.json (what
// the tool is), schema.json (its parameters) and a handler program in any
// language, which gets one JSON request on standard input and answers with
// one JSON response on standard output. See docs/directory-tools.md.
//
// Handlers run with exec's protections (see package shell): a scrubbed
// environment, a process group of their own ended as a whole on timeout or
// cancellation, bounded output, and bubblewrap when the metadata or the
// caller asks for the sandbox.
//
//	set := dir.LoadDirs([]dir.Source{{Path: "tools", Trusted: false}}, dir.Options{})
//	for _, p := range set.Problems { log.Print(p) } // broken tools are skipped
//	problems := set.Register(reg)
package dir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// The files of a tool folder.
const (
	MetadataFile = "metadata.json"
	SchemaFile   = "schema.json"
)

// handlerNames are the handler files looked for, in order, when the
// metadata does not name one.
var handlerNames = []string{"handler", "handler.py", "handler.js", "handler.mjs", "handler.ts", "handler.sh"}

// Options tune how handlers run. Zero fields take defaults.
type Options struct {
	// Trusted says the folder is one the agent cannot write. Tools from
	// other folders are never low risk, read-only or owner-only, whatever
	// their metadata says.
	Trusted bool
	// MaxOutput bounds a handler's standard output in bytes; default 4 MiB.
	MaxOutput int
	// KillGrace is the time between SIGTERM and SIGKILL; default 2 s.
	KillGrace time.Duration
	// EnvAllow lists secret-looking variables every handler may see
	// (besides those its metadata lists).
	EnvAllow []string
	// Bwrap is the bubblewrap executable for sandboxed handlers (default:
	// bwrap from PATH).
	Bwrap string
}

// DefaultMaxOutput bounds a handler's standard output when Options do not.
const DefaultMaxOutput = 4 << 20

// Tool is a tool loaded from a folder.
type Tool struct {
	// Dir is the tool's folder (absolute).
	Dir string
	// Metadata is its metadata.json.
	Metadata Metadata
	// Meta is what the registry and the pipeline see.
	Meta tool.Meta
	// Parameters is its schema.json (nil when there is none: no arguments).
	Parameters *jsonschema.Schema
	// Handler is the handler file; Argv runs it (interpreter first, when
	// it has one).
	Handler string
	Argv    []string

	opts Options
	pers *persistent // set for a persistent handler
}

// Close stops the tool's persistent handler, if it has one running.
func (t *Tool) Close() {
	if t.pers != nil {
		t.pers.Close(cmpDur(t.opts.KillGrace, 2*time.Second))
	}
}

func cmpDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Load reads and checks the tool in folder. Its error names the file and,
// where it can, the line.
func Load(folder string, opts Options) (*Tool, error) {
	abs, err := filepath.Abs(folder)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // the sandbox binds real paths
	}
	mpath := filepath.Join(abs, MetadataFile)
	b, err := os.ReadFile(mpath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s: a tool folder needs %s (what the tool is), %s (its parameters) and a handler", abs, MetadataFile, MetadataFile, SchemaFile)
		}
		return nil, err
	}
	md, err := ParseMetadata(mpath, b)
	if err != nil {
		return nil, err
	}
	t := &Tool{Dir: abs, Metadata: md, Meta: md.meta(opts.Trusted), opts: opts}
	if md.Persistent {
		t.pers = newPersistent()
	}
	if t.Parameters, err = loadSchema(filepath.Join(abs, SchemaFile)); err != nil {
		return nil, err
	}
	if t.Handler, t.Argv, err = findHandler(abs, md); err != nil {
		return nil, err
	}
	tt := t.Tool()
	if err := tt.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(abs, SchemaFile), err)
	}
	return t, nil
}

// loadSchema reads schema.json and checks that it compiles; a missing file
// means the tool takes no arguments.
func loadSchema(path string) (*jsonschema.Schema, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var probe any
	if err := json.Unmarshal(b, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &FileError{Path: path, Line: lineAt(b, se.Offset), Msg: "not valid JSON: " + err.Error()}
		}
		return nil, &FileError{Path: path, Msg: "not valid JSON: " + err.Error()}
	}
	if _, ok := probe.(map[string]any); !ok {
		return nil, &FileError{Path: path, Msg: `the parameters schema must be a JSON object, like {"type": "object", "properties": {…}}`}
	}
	if _, err := schema.CompileJSON(b); err != nil {
		return nil, &FileError{Path: path, Msg: "the schema does not compile: " + err.Error()}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, &FileError{Path: path, Msg: "the schema cannot be read: " + err.Error()}
	}
	return &s, nil
}

// interpreters are the programs that run a handler, by extension, first
// found on PATH wins.
var interpreters = map[string][][]string{
	".py":  {{"python3"}, {"python"}},
	".js":  {{"node"}},
	".mjs": {{"node"}},
	".ts":  {{"tsx"}, {"bun", "run"}, {"deno", "run", "--allow-all"}, {"node", "--experimental-strip-types"}},
	".sh":  {{"bash"}, {"sh"}},
}

// probed remembers whether an interpreter accepts its options, by command
// line: "node --experimental-strip-types" needs Node.js 22.6 or later.
var probed sync.Map // string → bool

// accepts reports whether the interpreter at path starts with the options
// (trivially true without options other than run): it is run once, with
// nothing to do.
func accepts(path string, opts []string) bool {
	if !slices.ContainsFunc(opts, func(o string) bool { return strings.HasPrefix(o, "--experimental") }) {
		return true
	}
	key := path + "\x00" + strings.Join(opts, "\x00")
	if ok, seen := probed.Load(key); seen {
		return ok.(bool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok := exec.CommandContext(ctx, path, append(append([]string(nil), opts...), "-e", "0")...).Run() == nil
	probed.Store(key, ok)
	return ok
}

// findHandler finds the handler file of the tool in dir and how to run it.
func findHandler(dir string, md Metadata) (string, []string, error) {
	var file string
	if md.Handler != "" {
		file = filepath.Join(dir, md.Handler)
		if st, err := os.Stat(file); err != nil || st.IsDir() {
			return "", nil, fmt.Errorf("%s: the handler %q that metadata.json names is not a file in the tool's folder", dir, md.Handler)
		}
	} else {
		var found []string
		for _, n := range handlerNames {
			if st, err := os.Stat(filepath.Join(dir, n)); err == nil && !st.IsDir() {
				found = append(found, n)
			}
		}
		switch len(found) {
		case 0:
			return "", nil, fmt.Errorf("%s: no handler: add one of %s, or name the file in metadata.json's \"handler\"", dir, strings.Join(handlerNames, ", "))
		case 1:
			file = filepath.Join(dir, found[0])
		default:
			return "", nil, fmt.Errorf("%s: several handlers (%s): name the one to run in metadata.json's \"handler\"", dir, strings.Join(found, ", "))
		}
	}
	if md.Interpreter != "" {
		fields := strings.Fields(md.Interpreter)
		p, err := exec.LookPath(fields[0])
		if err != nil {
			return "", nil, fmt.Errorf("%s: the interpreter %q that metadata.json names is not on PATH", dir, fields[0])
		}
		return file, append(append([]string{p}, fields[1:]...), file), nil
	}
	ext := filepath.Ext(file)
	if cands, ok := interpreters[ext]; ok {
		for _, c := range cands {
			if p, err := exec.LookPath(c[0]); err == nil && accepts(p, c[1:]) {
				return file, append(append([]string{p}, c[1:]...), file), nil
			}
		}
		names := make([]string, len(cands))
		for i, c := range cands {
			names[i] = c[0]
			if slices.Contains(c, "--experimental-strip-types") {
				names[i] = "node 22.6 or later"
			}
		}
		return "", nil, fmt.Errorf("%s: %s needs %s, and none is on PATH (or accepts those options): install one, or name the interpreter in metadata.json's \"interpreter\"", dir, filepath.Base(file), strings.Join(names, " or "))
	}
	st, err := os.Stat(file)
	if err != nil {
		return "", nil, err
	}
	if st.Mode()&0o111 == 0 {
		return "", nil, fmt.Errorf("%s: %s is not executable: chmod +x it, or name its interpreter in metadata.json's \"interpreter\"", dir, filepath.Base(file))
	}
	return file, []string{file}, nil
}

// Tool returns the tool as the registry holds it.
func (t *Tool) Tool() tool.Tool {
	tt := tool.Tool{
		Name: t.Meta.ID, Label: t.Meta.Label, Description: t.Meta.Description,
		Parameters: t.Parameters, Meta: t.Meta, Execute: t.execute,
		MapError: mapError, Preview: t.preview,
	}
	if t.Metadata.Async {
		spec := t.Metadata.asyncSpec()
		tt.Async, tt.Handler, tt.Execute = &spec, asyncHandler{t}, nil
		tt.Meta.Async = true
	}
	return tt
}

// Source is a folder of tool folders.
type Source struct {
	// Path is the folder; each sub-folder with a metadata.json is a tool.
	Path string
	// Trusted says the agent cannot write the folder (see Options.Trusted).
	Trusted bool
	// Optional folders may be missing (the defaults); a configured folder
	// that is missing is a problem.
	Optional bool
}

// Problem is a tool folder that could not be loaded, and why.
type Problem struct {
	Dir string
	Err error
}

func (p Problem) Error() string { return p.Err.Error() }

// Set is the tools loaded from some folders, and the folders that failed.
type Set struct {
	Tools    []*Tool
	Problems []Problem
}

// LoadDirs loads every tool folder of every source. Broken tools are
// reported in Problems and skipped; a name already taken by an earlier
// folder is a problem too.
func LoadDirs(sources []Source, opts Options) Set {
	var set Set
	byName := map[string]string{}
	for _, src := range sources {
		entries, err := os.ReadDir(src.Path)
		if err != nil {
			if !(src.Optional && errors.Is(err, fs.ErrNotExist)) {
				set.Problems = append(set.Problems, Problem{Dir: src.Path, Err: fmt.Errorf("tool folder %s: %w", src.Path, err)})
			}
			continue
		}
		o := opts
		o.Trusted = src.Trusted
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			folder := filepath.Join(src.Path, e.Name())
			if _, err := os.Stat(filepath.Join(folder, MetadataFile)); errors.Is(err, fs.ErrNotExist) {
				continue // not a tool folder
			}
			t, err := Load(folder, o)
			if err != nil {
				set.Problems = append(set.Problems, Problem{Dir: folder, Err: err})
				continue
			}
			if prev, dup := byName[t.Meta.ID]; dup {
				set.Problems = append(set.Problems, Problem{Dir: folder, Err: fmt.Errorf("%s: the name %q is already taken by the tool in %s: rename one of them", folder, t.Meta.ID, prev)})
				continue
			}
			byName[t.Meta.ID] = t.Dir
			set.Tools = append(set.Tools, t)
		}
	}
	return set
}

// Register adds the set's tools to reg. A tool whose name is taken by a
// tool already registered is skipped and reported.
func (s Set) Register(reg *registry.Registry) []Problem {
	var problems []Problem
	for _, t := range s.Tools {
		if reg.Has(t.Meta.ID) {
			problems = append(problems, Problem{Dir: t.Dir, Err: fmt.Errorf("%s: the name %q is taken by a tool already registered (%s): rename the directory tool", t.Dir, t.Meta.ID, sourceOf(reg, t.Meta.ID))})
			continue
		}
		if err := reg.Register(t.Tool()); err != nil {
			problems = append(problems, Problem{Dir: t.Dir, Err: fmt.Errorf("%s: %w", t.Dir, err)})
		}
	}
	return problems
}

func sourceOf(reg *registry.Registry, id string) string {
	if m, ok := reg.Meta(id); ok {
		return string(m.Source)
	}
	return "unknown"
}

// Names returns the names of the set's tools, sorted.
func (s Set) Names() []string {
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = t.Meta.ID
	}
	slices.Sort(names)
	return names
}
