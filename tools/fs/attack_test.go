package fs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/tool"
)

// attackCalls are the arguments each file tool gets to reach path p.
var attackCalls = []struct {
	tool string
	args func(p string) any
}{
	{"read", func(p string) any { return map[string]any{"path": p} }},
	{"write", func(p string) any { return map[string]any{"path": p, "content": "PWNED"} }},
	{"edit", func(p string) any {
		return map[string]any{"path": p, "edits": []map[string]any{{"oldText": "CANARY", "newText": "PWNED"}}}
	}},
	{"apply_patch", func(p string) any {
		return map[string]any{"patch": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-" + canaryText + "\n+PWNED\n*** End Patch"}
	}},
	{"apply_patch", func(p string) any {
		return map[string]any{"patch": "*** Begin Patch\n*** Add File: " + p + "\n+PWNED\n*** End Patch"}
	}},
	{"apply_patch", func(p string) any {
		return map[string]any{"patch": "*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch"}
	}},
	{"ls", func(p string) any { return map[string]any{"path": p} }},
	{"find", func(p string) any { return map[string]any{"pattern": "*", "path": p} }},
	{"grep", func(p string) any { return map[string]any{"pattern": "CANARY", "path": p} }},
}

// TestAttackPaths: every file tool, through the pipeline, refuses paths that
// leave the workspace, with a clear error result, and neither reads nor
// changes anything outside it.
func TestAttackPaths(t *testing.T) {
	t.Parallel()
	type attack struct {
		name  string
		setup func(t *testing.T, e *env) // local workspaces only
		paths func(e *env) []string
		// want lists words one of which the refusal must contain.
		want []string
	}
	link := func(target, name string) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) {
			t.Helper()
			if err := os.Symlink(target, filepath.Join(e.root, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	attacks := []attack{
		{"dot-dot", nil, func(e *env) []string {
			return []string{"../../etc/passwd", "../outside/canary.txt", "sub/../../outside/canary.txt", "../outside"}
		}, []string{"climbs above the workspace"}},
		{"absolute outside", nil, func(e *env) []string {
			ps := []string{"/etc/passwd", "/etc"}
			if e.kind == "local" {
				ps = append(ps, e.canary, e.outside, filepath.Join(e.root, "..", "outside", "canary.txt"))
			}
			return ps
		}, []string{"outside"}},
		{"NUL byte", nil, func(e *env) []string {
			return []string{"canary.txt\x00", "a\x00/../../outside/canary.txt"}
		}, []string{"NUL byte"}},
		{"sibling sharing the root's prefix", func(t *testing.T, e *env) {
			sib := e.root + "2"
			if err := os.Mkdir(sib, 0o755); err != nil {
				t.Fatal(err)
			}
			// The sibling's canary is the same text; it must stay unread.
			if err := os.WriteFile(filepath.Join(sib, "canary.txt"), []byte(canaryText), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if b, err := os.ReadFile(filepath.Join(sib, "canary.txt")); err != nil || string(b) != canaryText {
					t.Errorf("the sibling's canary changed: %q %v", b, err)
				}
				if entries, _ := os.ReadDir(sib); len(entries) != 1 {
					t.Errorf("files appeared in the sibling: %v", entries)
				}
			})
		}, func(e *env) []string {
			return []string{e.root + "2/canary.txt", e.root + "2", "../proj2/canary.txt"}
		}, []string{"outside the workspace", "climbs above the workspace"}},
		{"symlink to an outside file", nil, nil, []string{"symbolic link"}},
		{"symlink to an outside directory", nil, nil, []string{"symbolic link"}},
		{"symlink followed by dot-dot", nil, nil, []string{"symbolic link"}},
		{"relative symlink out", nil, nil, []string{"symbolic link"}},
		{"dangling symlink out", nil, nil, []string{"symbolic link"}},
	}
	// The link attacks set up links, then use them.
	for i := range attacks {
		a := &attacks[i]
		switch a.name {
		case "symlink to an outside file":
			a.setup = func(t *testing.T, e *env) { link(e.canary, "link-file")(t, e) }
			a.paths = func(*env) []string { return []string{"link-file"} }
		case "symlink to an outside directory":
			a.setup = func(t *testing.T, e *env) { link(e.outside, "link-dir")(t, e) }
			a.paths = func(*env) []string { return []string{"link-dir", "link-dir/canary.txt", "link-dir/new.txt"} }
		case "symlink followed by dot-dot":
			a.setup = func(t *testing.T, e *env) {
				deep := filepath.Join(filepath.Dir(e.outside), "deep")
				if err := os.Mkdir(deep, 0o755); err != nil {
					t.Fatal(err)
				}
				link(deep, "link-deep")(t, e)
			}
			a.paths = func(*env) []string {
				return []string{"link-deep/../outside/canary.txt", "link-deep/..", "link-deep/../outside/new.txt"}
			}
		case "relative symlink out":
			a.setup = link("../outside", "rel-out")
			a.paths = func(*env) []string { return []string{"rel-out/canary.txt", "rel-out"} }
		case "dangling symlink out":
			a.setup = func(t *testing.T, e *env) {
				link(filepath.Join(e.outside, "created-through-link.txt"), "dangling")(t, e)
				link("../outside/created-through-rel-link.txt", "dangling-rel")(t, e)
			}
			a.paths = func(*env) []string { return []string{"dangling", "dangling-rel"} }
		}
	}
	for _, kind := range []string{"local", "memory"} {
		for _, a := range attacks {
			if kind == "memory" && a.setup != nil {
				continue // links and siblings exist only on disk
			}
			t.Run(kind+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				var e *env
				if kind == "local" {
					e = localEnv(t)
				} else {
					e = memoryEnv(t)
				}
				e.put(t, map[string]string{"inside.txt": "inside"})
				if a.setup != nil {
					a.setup(t, e)
				}
				before := e.tree(t)
				for _, p := range a.paths(e) {
					for _, c := range attackCalls {
						msg := e.call(t, c.tool, c.args(p))
						got := text(msg)
						if !msg.IsError {
							t.Errorf("%s %q succeeded: %s", c.tool, p, got)
							continue
						}
						if leaked(got, c.args(p)) {
							t.Errorf("%s %q leaked the canary: %s", c.tool, p, got)
						}
						if !strings.Contains(got, "efused") || !containsAny(got, a.want) {
							t.Errorf("%s %q: %s\nwant a refusal that mentions %q", c.tool, p, got, a.want)
						}
					}
				}
				e.outsideIntact(t)
				if after := e.tree(t); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
				}
			})
		}
	}
}

// TestAttackHardLink: a hard link to a file outside is neither read nor
// written through, by any file tool: read, grep, edit and apply_patch
// refuse it by name; a grep over the tree skips it and says so; a
// workspace that allows hard links (fsbridge.AllowHardLinks) reads it.
func TestAttackHardLink(t *testing.T) {
	t.Parallel()
	e := localEnv(t)
	e.put(t, map[string]string{"plain.txt": "CANARY inside"})
	if err := os.Link(e.canary, filepath.Join(e.root, "hard.txt")); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	for _, c := range attackCalls {
		if c.tool == "ls" || c.tool == "find" {
			continue // they list names, and read nothing
		}
		got := e.fails(t, c.tool, c.args("hard.txt"))
		if leaked(got, c.args("hard.txt")) {
			t.Errorf("%s leaked the file outside: %s", c.tool, got)
		}
		if strings.Contains(got, "already exists") {
			continue // Add File refuses an existing file before looking further
		}
		contains(t, got, "efused", "hard links")
	}
	for _, args := range []map[string]any{{"pattern": "CANARY"}, {"pattern": "CANARY", "glob": "*.txt"}, {"pattern": ".", "context": 1}} {
		got := e.ok(t, "grep", args)
		if leaked(got, args) || !strings.Contains(got, "plain.txt") {
			t.Errorf("grep %v: %s", args, got)
		}
		contains(t, got, "1 file with several hard links skipped", "hard.txt")
	}
	e.outsideIntact(t)

	allowed := localEnv(t, fsbridge.AllowHardLinks())
	if err := os.Link(allowed.canary, filepath.Join(allowed.root, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	contains(t, allowed.ok(t, "read", map[string]any{"path": "hard.txt"}), canaryMarker)
}

// TestAttackWalksStayInside: listing and searching the whole workspace never
// follows links out of it.
func TestAttackWalksStayInside(t *testing.T) {
	t.Parallel()
	e := localEnv(t)
	e.put(t, map[string]string{"a.txt": "inside"})
	for name, target := range map[string]string{"out-file": e.canary, "out-dir": e.outside, "rel-dir": "../outside"} {
		if err := os.Symlink(target, filepath.Join(e.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		tool string
		args any
	}{
		{"grep", map[string]any{"pattern": "CANARY"}},
		{"grep", map[string]any{"pattern": ".", "context": 2}},
		{"find", map[string]any{"pattern": "**"}},
		{"ls", map[string]any{"depth": 5}},
	} {
		got := e.ok(t, c.tool, c.args)
		if leaked(got, c.args) || strings.Contains(got, "canary.txt") {
			t.Errorf("%s %v reached outside: %s", c.tool, c.args, got)
		}
	}
}

// TestAttackProtectedPaths: write tools refuse protected paths, whether the
// file exists or not and however the path is spelled, and change nothing.
func TestAttackProtectedPaths(t *testing.T) {
	t.Parallel()
	paths := []string{
		".git/config", "./a/../.git/config", ".GIT/CONFIG", ".git\u200d/config",
		".git/hooks/pre-commit", ".git/hooks/post-merge", "sub/.git/config", ".git",
		".toolbelt/state.json", "toolbelt.yaml", ".mcp.json", ".claude/settings.json",
		".claude/new.json", ".codex/config.toml",
	}
	writes := []struct {
		tool string
		args func(p string) any
	}{
		{"write", func(p string) any { return map[string]any{"path": p, "content": "PWNED"} }},
		{"edit", func(p string) any {
			return map[string]any{"path": p, "edits": []map[string]any{{"oldText": "ORIGINAL", "newText": "PWNED"}}}
		}},
		{"apply_patch", func(p string) any {
			return map[string]any{"patch": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-ORIGINAL\n+PWNED\n*** End Patch"}
		}},
		{"apply_patch", func(p string) any {
			return map[string]any{"patch": "*** Begin Patch\n*** Add File: " + p + "\n+PWNED\n*** End Patch"}
		}},
		{"apply_patch", func(p string) any {
			return map[string]any{"patch": "*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch"}
		}},
		{"apply_patch", func(p string) any {
			return map[string]any{"patch": "*** Begin Patch\n*** Update File: a/plain.txt\n*** Move to: " + p + "\n@@\n-ORIGINAL\n+PWNED\n*** End Patch"}
		}},
	}
	bothEnvs(t, func(t *testing.T, e *env) {
		// Some protected files exist, with content an edit could target.
		e.put(t, map[string]string{
			".git/config":           "ORIGINAL",
			".git/hooks/post-merge": "ORIGINAL",
			".mcp.json":             "ORIGINAL",
			".claude/settings.json": "ORIGINAL",
			"a/plain.txt":           "ORIGINAL",
			"sub/readme":            "ORIGINAL",
		})
		paths := paths
		if e.kind == "local" {
			// And a link inside the workspace points at .git.
			if err := os.Symlink(".git", filepath.Join(e.root, "g")); err != nil {
				t.Fatal(err)
			}
			paths = append(paths[:len(paths):len(paths)], "g/config", "g/hooks/pre-push")
		}
		before := e.tree(t)
		for _, p := range paths {
			for _, w := range writes {
				got := e.fails(t, w.tool, w.args(p))
				if containsAny(got, []string{"does not exist", "no such file", "already exists", "is a directory"}) {
					continue // these fail before the check: nothing to update, or something in the way
				}
				if !strings.Contains(got, "protected path") {
					t.Errorf("%s %q: %s\nwant a protected-path refusal", w.tool, p, got)
				}
			}
			// write must refuse with the protected-path reason, existing or not.
			contains(t, e.fails(t, "write", map[string]any{"path": p, "content": "x"}), "protected path")
		}
		if after := e.tree(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
		}
	})
}

// TestAttackSwapRace: while one goroutine keeps swapping a file and a
// directory for symbolic links out of the workspace, others read, write,
// edit, patch and search through them. Nothing outside is ever read or
// changed.
func TestAttackSwapRace(t *testing.T) {
	t.Parallel()
	e := localEnv(t)
	root := e.root
	f, d := filepath.Join(root, "f"), filepath.Join(root, "d")
	e.put(t, map[string]string{"f": "inside", "d/canary.txt": "inside"})
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		links := []string{e.canary, "../outside/canary.txt"}
		dirLinks := []string{e.outside, "../outside"}
		for i := 0; !stop.Load(); i++ {
			// f: a regular file, then a link out, atomically replaced.
			tmp := filepath.Join(root, ".swap")
			if i%2 == 0 {
				os.WriteFile(tmp, []byte("inside"), 0o644)
			} else {
				os.Symlink(links[i/2%2], tmp)
			}
			os.Rename(tmp, f)
			// d: a directory, then a link out.
			if i%2 == 0 {
				os.Remove(d)
				os.Rename(d+".dir", d)
			} else {
				os.Rename(d, d+".dir")
				os.Symlink(dirLinks[i/2%2], d)
			}
		}
	})
	calls := []struct {
		tool string
		args any
	}{
		{"read", map[string]any{"path": "f"}},
		{"read", map[string]any{"path": "d/canary.txt"}},
		{"write", map[string]any{"path": "f", "content": "PWNED"}},
		{"write", map[string]any{"path": "d/canary.txt", "content": "PWNED"}},
		{"edit", map[string]any{"path": "f", "edits": []map[string]any{{"oldText": "CANARY: outside", "newText": "PWNED"}}}},
		{"edit", map[string]any{"path": "d/canary.txt", "edits": []map[string]any{{"oldText": "CANARY", "newText": "PWNED"}}}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: f\n@@\n-" + canaryText + "\n+PWNED\n*** End Patch"}},
		{"grep", map[string]any{"pattern": "CANARY"}},
		{"grep", map[string]any{"pattern": "CANARY", "path": "d"}},
		{"ls", map[string]any{"path": "d"}},
	}
	var leaks atomic.Int64
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Go(func() {
			for i := range 150 {
				c := calls[(i+w)%len(calls)]
				msg := e.call(t, c.tool, c.args)
				if got := text(msg); leaked(got, c.args) {
					leaks.Add(1)
					t.Errorf("%s %v reached outside: %s", c.tool, c.args, got)
				}
			}
		})
	}
	workers.Wait()
	stop.Store(true)
	wg.Wait()
	e.outsideIntact(t)
	if leaks.Load() > 0 {
		t.Fatalf("%d calls reached outside the workspace", leaks.Load())
	}
}

// TestUnavailableWithoutBridge: without a bridge the tools are not offered,
// and the reason says why.
func TestUnavailableWithoutBridge(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tc   *tool.Context
		want string
	}{
		{&tool.Context{}, "no workspace directory is set"},
		{&tool.Context{Identity: tool.Identity{Workspace: missing}}, "no such file or directory"},
		{&tool.Context{Identity: tool.Identity{Workspace: file}}, "is not a directory"},
		{&tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, "no file bridge is open"},
	} {
		r := newRunner(t, c.tc)
		reasons := map[string]string{}
		if tools := r.Tools(func(id string, err error) { reasons[id] = err.Error() }); len(tools) != 0 {
			t.Errorf("%+v: %d tools offered", c.tc, len(tools))
		}
		for _, id := range []string{"read", "write", "edit", "apply_patch", "ls", "find", "grep"} {
			if !strings.HasPrefix(reasons[id], "fs tools need a workspace: ") || !strings.Contains(reasons[id], c.want) {
				t.Errorf("%s: reason %q, want %q", id, reasons[id], c.want)
			}
		}
		msg := r.Run(context.Background(), tool.Call{ID: "1", Name: "read", Arguments: []byte(`{"path":"x"}`)})
		if !msg.IsError {
			t.Errorf("read ran without a bridge: %s", text(msg))
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
