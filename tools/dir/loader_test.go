package dir

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/registry"
)

func TestLoaderReloadsChangedFolders(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	shTool(t, src, "one", `echo '{"success":true,"result":"v1"}'`, nil)
	reg := registry.New()
	changes := make(chan struct{}, 100)
	reg.Watch(func() { changes <- struct{}{} })
	var problems []Problem
	l := NewLoader(reg, []Source{{Path: src, Trusted: true}}, Options{}, func(p Problem) { problems = append(problems, p) })
	if p := l.Load(); len(p) != 0 || !reg.Has("one") {
		t.Fatalf("first load: %v, has one %v", p, reg.Has("one"))
	}
	if dt, ok := l.Tool("one"); !ok || filepath.Base(dt.Dir) != "one" {
		t.Errorf("Tool(one) = %v, %v", dt, ok)
	}
	for len(changes) > 0 {
		<-changes
	}
	// Nothing changed: nothing is re-registered.
	l.Load()
	if len(changes) != 0 {
		t.Errorf("an unchanged folder was registered again")
	}

	ctx := context.Background()
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Stop(ctx)

	// wait waits until cond holds after registry changes.
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for !cond() {
			select {
			case <-changes:
			case <-deadline:
				t.Fatalf("%s never happened; registry holds %v", what, names(reg))
			}
		}
	}
	// The watcher may start after the first change; keep touching until seen.
	shTool(t, src, "two", `echo '{"success":true}'`, nil)
	wait("adding two", func() bool {
		if !reg.Has("two") {
			_ = os.WriteFile(filepath.Join(src, "two", "touch"), nil, 0o644)
			time.Sleep(50 * time.Millisecond)
		}
		return reg.Has("two")
	})

	// Breaking a tool unregisters it and reports why.
	if err := os.WriteFile(filepath.Join(src, "one", "metadata.json"), []byte(`{"name":"one","descripton":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wait("unregistering broken one", func() bool { return !reg.Has("one") })

	// Removing a folder unregisters its tool.
	if err := os.RemoveAll(filepath.Join(src, "two")); err != nil {
		t.Fatal(err)
	}
	wait("removing two", func() bool { return !reg.Has("two") })
	if err := l.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	if !strings.Contains(strings.Join(msgs, "\n"), `unknown field "descripton"`) {
		t.Errorf("problems = %v", msgs)
	}
}

func names(reg *registry.Registry) []string {
	var out []string
	for _, m := range reg.List() {
		out = append(out, m.ID)
	}
	slices.Sort(out)
	return out
}
