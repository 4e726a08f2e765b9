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
// A tool the agent may have written or changed — from a folder not
// trusted, or one that reaches a directory the agent can write — is
// untrusted: its handler runs contained (bubblewrap: the workspace
// read-only, no network) unless a person approved the call, and an
// approved call runs from a private copy of its folder whose fingerprint
// is what the person approved. It never takes a trusted tool's name.
//
//	set := dir.LoadDirs([]dir.Source{{Path: "tools", Trusted: false}}, dir.Options{})
//	for _, p := range set.Problems { log.Print(p) } // broken tools are skipped
//	problems := set.Register(reg)
package dir

import (
	"cmp"
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
	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// The files of a tool folder.
const (
	MetadataFile = "metadata.json"
	SchemaFile   = "schema.json"
	// OutputFile, optional, is the schema of the handler's result.
	OutputFile = "output.json"
)

// handlerNames are the handler files looked for, in order, when the
// metadata does not name one.
var handlerNames = []string{"handler", "handler.py", "handler.js", "handler.mjs", "handler.ts", "handler.sh"}

// Options tune how handlers run. Zero fields take defaults.
type Options struct {
	// Trusted says the folder is one the agent cannot write. Tools from
	// other folders are untrusted: never low risk, read-only or in a
	// section or profile of their choosing, whatever their metadata says;
	// refused when they ask to be owner-only, async or to see secret
	// variables, or take a name reserved for other tools; run contained
	// unless a person approves the call.
	Trusted bool
	// Writable lists the directories the agent can write (its workspaces).
	// A tool of a trusted folder is untrusted all the same when it reaches
	// one of them: its folder lies in one or holds one, a link in it or
	// its interpreter leads into one.
	Writable []string
	// Reserved lists name prefixes kept for other tools (an imported MCP
	// server's "github__"): an untrusted tool may not take such a name.
	Reserved []string
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
	// Settings are the tools' settings by tool name (tools.<name> in
	// toolbelt.yaml): a tool whose metadata declares settings gets its own
	// in every request, once they match what it declares.
	Settings tool.Config
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
	// Output is its output.json (nil when there is none): the schema of
	// the handler's result, the tool's structured content.
	Output *jsonschema.Schema
	// Handler is the handler file; Argv runs it (interpreter first, when
	// it has one).
	Handler string
	Argv    []string
	// Untrusted says why the agent could have written or changed the tool
	// ("" for a trusted tool).
	Untrusted string

	// settings are the settings its handler gets, when its metadata
	// declares some; settingsErr says why they cannot be used (they do
	// not match the declaration), which fails every request.
	settings    json.RawMessage
	settingsErr error

	opts     Options
	pers     *persistent // set for a persistent handler
	approved codes       // the fingerprints of folders shown for approval, by call
	boxes    sync.Map    // workspace root → *sandbox.Bwrap that can contain there
}

// Close stops the tool's persistent handler, if it has one running, at
// once: a call under way on it is cut.
func (t *Tool) Close() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.stop(ctx)
}

// stop stops the tool's persistent handler, if it has one running: a call
// under way on it has until ctx ends to finish.
func (t *Tool) stop(ctx context.Context) {
	if t.pers != nil {
		t.pers.Close(ctx, cmpDur(t.opts.KillGrace, 2*time.Second))
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
	t := &Tool{Dir: abs, Metadata: md, opts: opts}
	if md.Persistent {
		t.pers = newPersistent()
	}
	if t.Parameters, err = loadSchema(filepath.Join(abs, SchemaFile), "parameters"); err != nil {
		return nil, err
	}
	if t.Output, err = loadSchema(filepath.Join(abs, OutputFile), "output"); err != nil {
		return nil, err
	}
	if t.Output != nil && t.Output.Type != "object" {
		return nil, &FileError{Path: filepath.Join(abs, OutputFile), Msg: `the output schema must describe an object, like {"type": "object", "properties": {…}}: the handler's result is the tool's structured content`}
	}
	if t.Handler, t.Argv, err = findHandler(abs, md); err != nil {
		return nil, err
	}
	t.Untrusted = "its folder is not one declared trusted"
	if opts.Trusted {
		t.Untrusted = t.reach(opts.Writable)
	}
	t.Meta = md.meta(t.Untrusted == "")
	if t.Untrusted != "" {
		if err := t.checkUntrusted(); err != nil {
			return nil, fmt.Errorf("%s: not loaded: %s; the agent could have written it (%s). Declare its folder trusted in toolbelt.yaml (tools.dirs: [{path: …, trusted: true}]) if it is yours", abs, err, t.Untrusted)
		}
	}
	if s, ok := t.Meta.Settings.(*jsonschema.Schema); ok {
		v, err := schema.Compile(s)
		if err != nil {
			return nil, &FileError{Path: mpath, Line: lineAt(b, keyOffset(b, "settings")), Msg: "settings: the schema does not compile: " + err.Error()}
		}
		t.settings, t.settingsErr = t.settingsOf(v, opts.Settings[md.Name])
	}
	tt := t.Tool()
	if err := tt.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(abs, SchemaFile), err)
	}
	return t, nil
}

// maxReachFiles bounds the files of a trusted tool's folder searched for
// links into the directories the agent can write.
const maxReachFiles = 10000

// reach says how the agent could change the tool, given the directories
// it can write (real paths): its folder lies in one or holds one, a
// symbolic link in the folder leads into one (or nowhere yet), or its
// interpreter lies in one. It is "" when none of that holds.
func (t *Tool) reach(writable []string) string {
	if len(writable) == 0 {
		return ""
	}
	into := func(p string) string {
		for _, w := range writable {
			if within(p, w) || within(w, p) {
				return w
			}
		}
		return ""
	}
	for _, w := range writable {
		switch {
		case within(t.Dir, w):
			return fmt.Sprintf("its folder lies in %s, which the agent can write", w)
		case within(w, t.Dir):
			return fmt.Sprintf("its folder holds %s, which the agent can write", w)
		}
	}
	if real, err := filepath.EvalSymlinks(t.Argv[0]); err == nil && t.Argv[0] != t.Handler && into(real) != "" {
		return fmt.Sprintf("its interpreter %s lies in %s, which the agent can write", real, into(real))
	}
	why, n := "", 0
	err := filepath.WalkDir(t.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxReachFiles {
			return fmt.Errorf("its folder holds more than %d files, too many to check for links into the directories the agent can write", maxReachFiles)
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			why = fmt.Sprintf("%s is a symbolic link that leads nowhere yet", p)
			return fs.SkipAll
		}
		if w := into(real); w != "" {
			why = fmt.Sprintf("%s is a symbolic link into %s, which the agent can write", p, w)
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return err.Error()
	}
	return why
}

// within reports whether the clean absolute path p is root or below it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// checkUntrusted refuses what an untrusted tool may not have: the owner's
// standing, secret variables, steps that run outside any call (async), an
// interpreter the agent could change outside the folder's fingerprint, a
// built-in tool's name or one reserved for imported tools.
func (t *Tool) checkUntrusted() error {
	md, name := t.Metadata, strings.ToLower(t.Metadata.Name)
	switch {
	case md.OwnerOnly:
		return errors.New(`"ownerOnly" is refused for a tool from a folder the agent can write: owner-only marks Toolbelt's administrative tools, and a tool the agent wrote does not get it`)
	case md.Async:
		return errors.New(`"async" is refused for a tool from a folder the agent can write: an async tool's steps run after the call, outside any sandbox, with no one to approve them`)
	case md.Settings != nil:
		return errors.New(`"settings" is refused for a tool from a folder the agent can write: it would hand what toolbelt.yaml holds for the tool (keys, addresses) to code the agent wrote`)
	case len(md.Env) > 0:
		return fmt.Errorf(`"env" (%s) is refused for a tool from a folder the agent can write: it would hand secrets to code the agent wrote. List the variables in tools.exec.envAllow if every handler may see them (an untrusted one sees them only in calls a person approved)`, strings.Join(md.Env, ", "))
	}
	if t.Argv[0] != t.Handler {
		if real, err := filepath.EvalSymlinks(t.Argv[0]); err == nil && !within(real, t.Dir) {
			for _, w := range t.opts.Writable {
				if within(real, w) {
					return fmt.Errorf("its interpreter %s lies in %s, which the agent can write, outside the tool's folder", real, w)
				}
			}
		}
	}
	if _, _, ok := catalog.Lookup(name); ok {
		return fmt.Errorf("%q is the name of a built-in tool", md.Name)
	}
	if id, ok := catalog.Alias(name); ok {
		return fmt.Errorf("%q is a name of the built-in tool %s", md.Name, id)
	}
	for _, p := range t.opts.Reserved {
		if strings.HasPrefix(name, strings.ToLower(p)) {
			return fmt.Errorf("the name %q starts with %q, which is kept for the tools of an imported MCP server", md.Name, p)
		}
	}
	return nil
}

// loadSchema reads a schema file (schema.json, output.json: the what
// schema) and checks that it compiles; a missing file gives nil (for
// schema.json: the tool takes no arguments).
func loadSchema(path, what string) (*jsonschema.Schema, error) {
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
		return nil, &FileError{Path: path, Msg: "the " + what + ` schema must be a JSON object, like {"type": "object", "properties": {…}}`}
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
		Parameters: t.Parameters, Output: t.Output, Meta: t.Meta, Execute: t.execute,
		MapError: mapError, Preview: t.preview,
	}
	if t.Metadata.Undo {
		tt.Undo = t.undo
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
	// Trusted says the agent cannot write the folder (see Options.Trusted);
	// a tool in it that reaches a directory of Options.Writable is
	// untrusted all the same.
	Trusted bool
	// Vouched says a person declared the folder trusted (tools.dirs
	// "trusted: true"): its tools are trusted wherever they lie.
	Vouched bool
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
// reported in Problems and skipped. A name already taken is a problem too:
// among trusted tools, or among untrusted ones, the earlier folder's tool
// keeps it; a trusted tool always keeps its name against an untrusted one,
// whatever the order of the folders, and an untrusted tool may not take a
// name that differs from another's only in case.
func LoadDirs(sources []Source, opts Options) Set {
	var set Set
	var loaded []*Tool
	for _, src := range sources {
		entries, err := os.ReadDir(src.Path)
		if err != nil {
			if !(src.Optional && errors.Is(err, fs.ErrNotExist)) {
				set.Problems = append(set.Problems, Problem{Dir: src.Path, Err: fmt.Errorf("tool folder %s: %w", src.Path, err)})
			}
			continue
		}
		o := opts
		o.Trusted = src.Trusted || src.Vouched
		if src.Vouched {
			o.Writable = nil
		}
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
			loaded = append(loaded, t)
		}
	}
	// Trusted tools first: they keep their names.
	slices.SortStableFunc(loaded, func(a, b *Tool) int { return cmp.Compare(untrusted(a), untrusted(b)) })
	for _, t := range loaded {
		if err := set.clash(t); err != nil {
			set.Problems = append(set.Problems, Problem{Dir: t.Dir, Err: err})
			continue
		}
		set.Tools = append(set.Tools, t)
	}
	return set
}

func untrusted(t *Tool) int {
	if t.Untrusted != "" {
		return 1
	}
	return 0
}

// clash says why t may not join the set's tools, or nil: its name is
// taken (ignoring case, for an untrusted tool).
func (s Set) clash(t *Tool) error {
	for _, prev := range s.Tools {
		same := prev.Meta.ID == t.Meta.ID || t.Untrusted != "" && strings.EqualFold(prev.Meta.ID, t.Meta.ID)
		switch {
		case !same:
		case prev.Untrusted == "" && t.Untrusted != "":
			return fmt.Errorf("%s: the name %q is already taken by the tool in %s, which is trusted: a tool from a folder the agent can write (%s) never replaces a trusted one, whatever the order of the folders; rename it", t.Dir, t.Meta.ID, prev.Dir, t.Untrusted)
		default:
			return fmt.Errorf("%s: the name %q is already taken by the tool in %s: rename one of them", t.Dir, t.Meta.ID, prev.Dir)
		}
	}
	return nil
}

// Register adds the set's tools to reg. A tool whose name is taken by a
// tool already registered is skipped and reported; so is an untrusted tool
// whose name differs from a registered tool's only in case.
func (s Set) Register(reg *registry.Registry) []Problem {
	var problems []Problem
	for _, t := range s.Tools {
		if id, taken := registered(reg, t); taken {
			problems = append(problems, Problem{Dir: t.Dir, Err: fmt.Errorf("%s: the name %q is taken by a tool already registered (%s %s): rename the directory tool", t.Dir, t.Meta.ID, sourceOf(reg, id), id)})
			continue
		}
		if err := reg.Register(t.Tool()); err != nil {
			problems = append(problems, Problem{Dir: t.Dir, Err: fmt.Errorf("%s: %w", t.Dir, err)})
		}
	}
	return problems
}

// registered returns the name of the registered tool whose name t would
// take: its own, or for an untrusted tool one that differs only in case.
func registered(reg *registry.Registry, t *Tool) (string, bool) {
	if reg.Has(t.Meta.ID) {
		return t.Meta.ID, true
	}
	found := ""
	if t.Untrusted != "" {
		reg.Any(func(m *tool.Meta) bool {
			if strings.EqualFold(m.ID, t.Meta.ID) {
				found = m.ID
			}
			return found != ""
		})
	}
	return found, found != ""
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
