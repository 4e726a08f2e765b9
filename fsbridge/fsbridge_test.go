package fsbridge_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolbelt/toolbelt/fsbridge"
)

// bridges returns a fresh bridge of each kind, with the default options
// plus opts, and a function that creates a file in it directly.
func bridges(t *testing.T, opts ...fsbridge.Option) map[string]fsbridge.Bridge {
	t.Helper()
	local, err := fsbridge.OpenLocal(t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	mem, err := fsbridge.NewMemory(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]fsbridge.Bridge{"local": local, "memory": mem}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestBridgeBasics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, b := range bridges(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			must(t, b.MkdirAll(ctx, "src/pkg"))
			must(t, b.MkdirAll(ctx, "src/pkg")) // idempotent
			must(t, b.WriteFile(ctx, "src/pkg/a.go", []byte("package a\n"), 0o644))
			must(t, b.WriteFile(ctx, "src/b.txt", []byte("b"), 0o600))
			must(t, b.WriteFile(ctx, "top.txt", []byte("top"), 0o644))

			got, err := b.ReadFile(ctx, "./src/pkg/../pkg/a.go")
			must(t, err)
			if string(got) != "package a\n" {
				t.Fatalf("ReadFile = %q", got)
			}
			f, err := b.Open(ctx, "src/b.txt")
			must(t, err)
			body, _ := io.ReadAll(f)
			f.Close()
			if string(body) != "b" {
				t.Fatalf("Open read %q", body)
			}

			// A rewrite keeps the mode.
			must(t, b.WriteFile(ctx, "src/b.txt", []byte("bb"), 0o666))
			st, err := b.Stat(ctx, "src/b.txt")
			must(t, err)
			if st.Mode().Perm() != 0o600 || st.Size() != 2 {
				t.Fatalf("after rewrite: mode %v size %d, want 0600 and 2", st.Mode().Perm(), st.Size())
			}

			entries, err := b.ReadDir(ctx, "src")
			must(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{"b.txt", "pkg"}) {
				t.Fatalf("ReadDir = %v", names)
			}

			var walked []string
			must(t, b.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				walked = append(walked, p)
				return nil
			}))
			want := []string{".", "src", "src/b.txt", "src/pkg", "src/pkg/a.go", "top.txt"}
			if !slices.Equal(walked, want) {
				t.Fatalf("WalkDir = %v, want %v", walked, want)
			}
			walked = nil
			must(t, b.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
				walked = append(walked, p)
				if p == "src" {
					return fs.SkipDir
				}
				return nil
			}))
			if !slices.Equal(walked, []string{".", "src", "top.txt"}) {
				t.Fatalf("WalkDir with SkipDir = %v", walked)
			}

			must(t, b.Rename(ctx, "src/b.txt", "src/pkg/c.txt"))
			if _, err := b.Stat(ctx, "src/b.txt"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("old name after rename: %v", err)
			}
			must(t, b.Rename(ctx, "src/pkg", "lib"))
			if got, err := b.ReadFile(ctx, "lib/c.txt"); err != nil || string(got) != "bb" {
				t.Fatalf("after moving the directory: %q, %v", got, err)
			}
			must(t, b.Remove(ctx, "lib/c.txt"))
			must(t, b.Remove(ctx, "lib/a.go"))
			must(t, b.Remove(ctx, "lib"))
			if _, err := b.Stat(ctx, "lib"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("removed directory: %v", err)
			}

			// What cannot be done fails with the errors tools tell apart.
			if err := b.WriteFile(ctx, "src", []byte("x"), 0o644); !errors.Is(err, fsbridge.ErrIsDir) {
				t.Errorf("writing a directory: %v, want ErrIsDir", err)
			}
			if err := b.WriteFile(ctx, "missing/x.txt", []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("writing into a missing directory: %v, want ErrNotExist", err)
			}
			if err := b.MkdirAll(ctx, "top.txt/sub"); !errors.Is(err, fsbridge.ErrNotDir) {
				t.Errorf("mkdir below a file: %v, want ErrNotDir", err)
			}
			if _, err := b.ReadFile(ctx, "nope.txt"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("reading a missing file: %v", err)
			}
			if canon, err := b.Resolve(ctx, "./src//x/../y"); err != nil || canon != "src/y" {
				t.Errorf("Resolve = %q, %v; want src/y", canon, err)
			}
		})
	}
}

// TestBridgeRefusesPaths: paths that leave the root, or that no file can
// have, are refused with a RefusedError for every operation, on every bridge.
func TestBridgeRefusesPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	outside := t.TempDir()
	cases := []struct {
		name, path, reason string
	}{
		{"empty", "", "empty"},
		{"NUL byte", "a\x00b", "NUL"},
		{"dot-dot", "../../etc/passwd", "climbs above"},
		{"dot-dot inside", "a/../../x", "climbs above"},
		{"absolute outside", filepath.Join(outside, "x"), "outside"},
		{"etc passwd", "/etc/passwd", "outside"},
		{"tilde", "~/.ssh/id_rsa", "not expanded"},
	}
	for name, b := range bridges(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				ops := map[string]error{}
				_, ops["stat"] = b.Stat(ctx, c.path)
				_, ops["open"] = b.Open(ctx, c.path)
				_, ops["read"] = b.ReadFile(ctx, c.path)
				_, ops["readdir"] = b.ReadDir(ctx, c.path)
				_, ops["resolve"] = b.Resolve(ctx, c.path)
				ops["check"] = b.CheckWrite(ctx, c.path)
				ops["write"] = b.WriteFile(ctx, c.path, []byte("x"), 0o644)
				ops["mkdir"] = b.MkdirAll(ctx, c.path)
				ops["remove"] = b.Remove(ctx, c.path)
				ops["rename"] = b.Rename(ctx, c.path, "y")
				ops["walk"] = b.WalkDir(ctx, c.path, func(_ string, _ fs.DirEntry, err error) error { return err })
				for op, err := range ops {
					var re *fsbridge.RefusedError
					if !errors.As(err, &re) || !errors.Is(err, fsbridge.ErrRefused) {
						t.Errorf("%s(%q) = %v, want a refusal", op, c.path, err)
						continue
					}
					if !strings.Contains(err.Error(), c.reason) {
						t.Errorf("%s(%q): %q does not say %q", op, c.path, err, c.reason)
					}
				}
			})
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Fatalf("files appeared outside: %v", entries)
	}
}

// TestBridgeProtectedPaths: every write operation refuses protected paths,
// existing or not, however they are spelled.
func TestBridgeProtectedPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	paths := []string{
		".git/config",
		"./a/../.git/config",
		".GIT/Config",
		".git\u200c/config",
		".git./config",
		".git/hooks/pre-commit",
		".git/hooks",
		"vendor/x/.git/config",
		".git",
		"sub/.git",
		// All git metadata, at any depth, and what redirects git or makes
		// a directory a repository.
		".git/commondir",
		".git/HEAD",
		".git/objects/ab/cdef",
		".git/refs/heads/main",
		".git/info/attributes",
		".git/worktrees/w/gitdir",
		"deep/er/.git/config",
		"deep/.git/hooks/post-checkout",
		"commondir",
		"x/commondir",
		"x/gitdir",
		"bare/HEAD",
		"HEAD",
		"evil.git/config",
		"evil.git/objects/x",
		"sub/evil.GIT/HEAD",
		".gitmodules",
		"sub/.gitmodules",
		".toolbelt/state.db",
		"toolbelt.yaml",
		".mcp.json",
		".claude/settings.json",
		".codex/config.toml",
		"pkg/.claude/settings.json",
		// Agent clients' and editors' project files that start programs,
		// and the instructions agents load, by every spelling.
		".cursor/mcp.json",
		".Cursor/MCP.json",
		".cursor/rules/x.mdc",
		".vscode/mcp.json",
		".vscode/tasks.json",
		".vscode\u200d/settings.json",
		"a/../.vscode/mcp.json",
		"app/.vscode/mcp.json",
		".gemini/settings.json",
		".continue/config.yaml",
		".windsurf/rules/r.md",
		".roo/mcp.json",
		".kiro/hooks/h.json",
		".zed/settings.json",
		".idea/workspace.xml",
		".junie/guidelines.md",
		".amazonq/mcp.json",
		".opencode/plugin/p.js",
		"opencode.json",
		"opencode.jsonc",
		".aider.conf.yml",
		".devcontainer/devcontainer.json",
		".devcontainer.json",
		".envrc",
		"sub/.envrc",
		"AGENTS.md",
		"agents.md",
		"AGENTS.md.",
		"pkg/AGENTS.md",
		"AGENTS.override.md",
		"CLAUDE.md",
		"CLAUDE.local.md",
		"GEMINI.md",
		".cursorrules",
		".windsurfrules",
		".clinerules",
		".clinerules/style.md",
		".roorules",
		".roomodes",
		".goosehints",
		".rules",
		".github/copilot-instructions.md",
		".github/instructions/go.instructions.md",
	}
	for name, b := range bridges(t) {
		// Some of the protected files exist already; the rest do not.
		if l, ok := b.(*fsbridge.Local); ok {
			for _, p := range []string{".git/hooks", ".claude", "a", "vendor/x/.git", "pkg", ".vscode", ".github"} {
				must(t, os.MkdirAll(filepath.Join(l.Root(), p), 0o755))
			}
			must(t, os.WriteFile(filepath.Join(l.Root(), ".git/config"), []byte("[core]\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(l.Root(), ".mcp.json"), []byte("{}"), 0o644))
		} else {
			must(t, b.MkdirAll(ctx, "a"))
			must(t, b.MkdirAll(ctx, "vendor/x"))
			must(t, b.MkdirAll(ctx, "pkg"))
			must(t, b.MkdirAll(ctx, ".github"))
		}
		for _, p := range paths {
			t.Run(name+"/"+p, func(t *testing.T) {
				t.Parallel()
				ops := map[string]error{
					"check":       b.CheckWrite(ctx, p),
					"write":       b.WriteFile(ctx, p, []byte("pwned"), 0o644),
					"mkdir":       b.MkdirAll(ctx, p),
					"remove":      b.Remove(ctx, p),
					"rename from": b.Rename(ctx, p, "elsewhere"),
					"rename to":   b.Rename(ctx, "a", p),
				}
				for op, err := range ops {
					if !errors.Is(err, fsbridge.ErrRefused) || !strings.Contains(err.Error(), "protected path") {
						t.Errorf("%s %q: %v, want a protected-path refusal", op, p, err)
					}
				}
			})
		}
	}
}

// TestProtectOption: the list is configurable, and absolute entries protect
// a location inside the root.
func TestProtectOption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "state")
	l, err := fsbridge.OpenLocal(dir, fsbridge.Protect("secrets/", "*.pem", data, "/outside/elsewhere"))
	must(t, err)
	defer l.Close()
	for _, p := range []string{"secrets/a", "x/key.pem", "state/db", "state"} {
		if err := l.WriteFile(ctx, p, nil, 0o644); !errors.Is(err, fsbridge.ErrRefused) {
			t.Errorf("write %s: %v, want refused", p, err)
		}
	}
	// The defaults are replaced: .git/config is writable now.
	must(t, l.MkdirAll(ctx, ".git"))
	must(t, l.WriteFile(ctx, ".git/config", []byte("x"), 0o644))

	if _, err := fsbridge.OpenLocal(dir, fsbridge.Protect("a/../b")); err == nil {
		t.Error("a pattern with .. was accepted")
	}
	if _, err := fsbridge.NewMemory(fsbridge.Protect("[")); err == nil {
		t.Error("a malformed pattern was accepted")
	}
	open, err := fsbridge.NewMemory(fsbridge.Protect())
	must(t, err)
	must(t, open.WriteFile(ctx, ".mcp.json", []byte("{}"), 0o644))
}

func TestOpenLocalErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, p := range []string{filepath.Join(dir, "missing"), file} {
		if _, err := fsbridge.OpenLocal(p); err == nil {
			t.Errorf("OpenLocal(%s) succeeded", p)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, b := range bridges(t) {
		if _, err := b.ReadFile(ctx, "x"); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: ReadFile with a cancelled context: %v", name, err)
		}
		if err := b.WriteFile(ctx, "x", nil, 0o644); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: WriteFile with a cancelled context: %v", name, err)
		}
	}
}

func TestMemoryLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, err := fsbridge.NewMemory()
	must(t, err)
	must(t, m.Load(fstest.MapFS{
		".git/config": {Data: []byte("[core]\n"), Mode: 0o600},
		"src/a.go":    {Data: []byte("package a\n")},
	}))
	if b, err := m.ReadFile(ctx, ".git/config"); err != nil || string(b) != "[core]\n" {
		t.Fatalf("loaded protected file: %q, %v", b, err)
	}
	if st, err := m.Stat(ctx, ".git/config"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v, %v", st, err)
	}
	if st, err := m.Stat(ctx, "src"); err != nil || !st.IsDir() {
		t.Fatalf("src: %v, %v", st, err)
	}
	// What was loaded is still protected from writes.
	if err := m.WriteFile(ctx, ".git/config", nil, 0o644); !errors.Is(err, fsbridge.ErrRefused) {
		t.Fatalf("write after load: %v", err)
	}
}

// TestWalkOpener: walk entries open their files and the files beside
// them, find no file their directory's listing does not hold, and refuse
// names that are not one file name.
func TestWalkOpener(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, b := range bridges(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			must(t, b.MkdirAll(ctx, "d/e"))
			must(t, b.WriteFile(ctx, "d/f.txt", []byte("file"), 0o644))
			must(t, b.WriteFile(ctx, "d/e/.gitignore", []byte("*.log"), 0o644))
			must(t, b.WriteFile(ctx, "d/e/a.txt", []byte("a"), 0o644))
			got := map[string]string{}
			must(t, b.WalkDir(ctx, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				o, ok := d.(fsbridge.Opener)
				if !ok {
					t.Fatalf("%s: entry %T is not an Opener", p, d)
				}
				var f fs.File
				switch p {
				case "d/f.txt":
					f, err = o.Open()
				case "d/e/a.txt":
					f, err = o.OpenSibling(".gitignore")
					for _, bad := range []string{"", ".", "..", "../f.txt", "a/b", "x\x00"} {
						if _, err := o.OpenSibling(bad); !errors.Is(err, fsbridge.ErrRefused) {
							t.Errorf("OpenSibling(%q): %v", bad, err)
						}
					}
					if _, err := o.OpenSibling("missing.txt"); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("OpenSibling of a missing file: %v", err)
					}
				default:
					return nil
				}
				must(t, err)
				defer f.Close()
				data, err := io.ReadAll(f)
				must(t, err)
				got[p] = string(data)
				return nil
			}))
			if got["d/f.txt"] != "file" || got["d/e/a.txt"] != "*.log" {
				t.Fatalf("opened: %v", got)
			}
		})
	}
}

// TestProtection: the list a bridge applies, as tools that reach files
// without it (the sandbox) get it: the same matching, and the names that
// can be created, as written, once each, with what the list names by an
// absolute path inside the root.
func TestProtection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := fsbridge.OpenLocal(dir, fsbridge.Protect(".git/", "*.git/", "AGENTS.md", ".github/instructions/", "toolbelt.yaml",
		filepath.Join(dir, "tools"), filepath.Join(dir, "prompts", "System.md"), "/outside/elsewhere", "AGENTS.md"))
	must(t, err)
	defer l.Close()
	p := l.Protection()
	for rel, want := range map[string]bool{
		".git": true, "a/b/.GIT/config": true, "x.git/HEAD": true, "agents.md": true, "pkg/AGENTS.md": true,
		".github/instructions/a.md": true, "tools/greet/run.sh": true, "prompts/system.md": true,
		".": false, "src/main.go": false, ".github/workflows/ci.yml": false, "tool/x": false, "prompts/other.md": false,
	} {
		if got := p.Match(rel); got != want {
			t.Errorf("Match(%q) = %v, want %v", rel, got, want)
		}
	}
	want := []string{".git", "AGENTS.md", ".github/instructions", "toolbelt.yaml", "tools", "prompts/System.md"}
	if got := p.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}
