package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func mk(name string) tool.Tool {
	return tool.Tool{Name: name, Description: "the " + name + " tool", Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
		return tool.Text(name), nil
	}}
}

func core(name string) tool.Tool {
	t := mk(name)
	t.Meta.Source = tool.SourceCore
	return t
}

func ids(tools []tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func metaIDs(metas []tool.Meta) []string {
	out := make([]string, len(metas))
	for i, m := range metas {
		out[i] = m.ID
	}
	return out
}

func mustRegister(t *testing.T, r *registry.Registry, tools ...tool.Tool) {
	t.Helper()
	for _, tt := range tools {
		if err := r.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, core("read"))
	m, ok := r.Meta("read")
	if !ok || m.Section != "fs" || !slices.Equal(m.Profiles, []string{"coding"}) || m.Label != "Read" || m.Description != "the read tool" || m.Risk != tool.RiskMedium {
		t.Errorf("catalog placement not applied: %+v", m)
	}
	for _, tc := range []struct {
		t    tool.Tool
		meta []tool.Meta
		want string
	}{
		{core("read"), nil, `"read" is already registered (source core)`},
		{mk("bad.name"), nil, "'.'"},
		{tool.Tool{Name: "noexec"}, nil, "no Execute"},
		{mk("x"), []tool.Meta{{ID: "y"}}, `metadata id "y" does not match`},
	} {
		if err := r.Register(tc.t, tc.meta...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%s) = %v, want %q", tc.t.Name, err, tc.want)
		}
	}
	// Metadata given at registration describes the tool instead of its own.
	own := mk("own")
	own.Meta = tool.Meta{Section: "web", ReadOnly: true}
	if err := r.Register(own, tool.Meta{Section: "media", Label: "Own Tool"}); err != nil {
		t.Fatal(err)
	}
	m, _ = r.Meta("own")
	if m.Section != "media" || m.Label != "Own Tool" || m.ReadOnly || m.Source != tool.SourcePlugin {
		t.Errorf("registration meta not used: %+v", m)
	}
	got, _ := r.Resolve("own", nil, nil)
	if got.Label != "Own Tool" || got.Meta.Section != "media" {
		t.Errorf("resolved tool does not carry the meta: %+v", got)
	}
}

func TestCatalogOwnerOnly(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, core("cron"), core("nodes"), core("exec"))
	for id, want := range map[string]bool{"cron": true, "nodes": true, "exec": false} {
		if m, _ := r.Meta(id); m.OwnerOnly != want {
			t.Errorf("%s owner-only = %v", id, m.OwnerOnly)
		}
	}
}

func TestRegisterFactory(t *testing.T) {
	t.Parallel()
	r := registry.New()
	ok := func(*tool.Context) (*tool.Tool, error) { t := mk("f"); return &t, nil }
	for _, tc := range []struct {
		f    registry.Factory
		meta tool.Meta
		want string
	}{
		{ok, tool.Meta{}, "needs metadata with an id"},
		{ok, tool.Meta{ID: "a b"}, "' '"},
		{nil, tool.Meta{ID: "f"}, "nil factory"},
	} {
		if err := r.RegisterFactory(tc.f, tc.meta); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RegisterFactory(%+v) = %v, want %q", tc.meta, err, tc.want)
		}
	}
	if err := r.RegisterFactory(ok, tool.Meta{ID: "f", Section: "web"}); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterFactory(ok, tool.Meta{ID: "f"}); err == nil {
		t.Error("duplicate factory registered")
	}
}

func TestFactoriesThatFail(t *testing.T) {
	t.Parallel()
	r := registry.New()
	var calls atomic.Int32
	factory := func(name string, make func(tc *tool.Context) (*tool.Tool, error)) {
		if err := r.RegisterFactory(func(tc *tool.Context) (*tool.Tool, error) {
			calls.Add(1)
			return make(tc)
		}, tool.Meta{ID: name, Section: "fs"}); err != nil {
			t.Fatal(err)
		}
	}
	factory("a_ok", func(*tool.Context) (*tool.Tool, error) { t := mk("a_ok"); return &t, nil })
	factory("b_err", func(*tool.Context) (*tool.Tool, error) { return nil, errors.New("fs tools need a root and a bridge") })
	factory("c_panic", func(*tool.Context) (*tool.Tool, error) { panic("boom") })
	factory("d_nil", func(*tool.Context) (*tool.Tool, error) { return nil, nil })
	factory("e_wrong", func(*tool.Context) (*tool.Tool, error) { t := mk("other"); return &t, nil })
	factory("f_invalid", func(*tool.Context) (*tool.Tool, error) { return &tool.Tool{Name: "f_invalid"}, nil })
	factory("g_ctx", func(tc *tool.Context) (*tool.Tool, error) {
		if tc == nil || tc.Workspace == "" {
			return nil, errors.New("needs a workspace")
		}
		t := mk("g_ctx")
		return &t, nil
	})
	mustRegister(t, r, mk("z_static"))

	if got := metaIDs(r.List()); len(got) != 8 || calls.Load() != 0 {
		t.Fatalf("List called factories (%d calls) or lost tools: %v", calls.Load(), got)
	}
	reasons := map[string]string{}
	got := r.ResolveAll(&tool.Context{Identity: tool.Identity{Workspace: "/w"}}, func(id string, err error) { reasons[id] = err.Error() })
	if want := []string{"a_ok", "g_ctx", "z_static"}; !slices.Equal(ids(got), want) {
		t.Errorf("resolved %v, want %v", ids(got), want)
	}
	want := map[string]string{
		"b_err":     "fs tools need a root and a bridge",
		"c_panic":   "factory panicked: boom",
		"d_nil":     "its factory made no tool",
		"e_wrong":   `factory made a tool named "other" instead of "e_wrong"`,
		"f_invalid": "no Execute",
	}
	for id, w := range want {
		if !strings.Contains(reasons[id], w) {
			t.Errorf("%s: reason %q, want %q", id, reasons[id], w)
		}
	}
	if len(reasons) != len(want) {
		t.Errorf("reasons: %v", reasons)
	}
	var panicErr *registry.FactoryPanic
	r.ResolveAll(nil, func(id string, err error) {
		if id == "c_panic" && !errors.As(err, &panicErr) {
			t.Errorf("panic reported as %T", err)
		}
	})
	if panicErr == nil || len(panicErr.Stack) == 0 {
		t.Error("panic carries no stack")
	}
	// The factory's tool carries the registered metadata; nil onError is fine.
	if tt, ok := r.Resolve("a_ok", nil, nil); !ok || tt.Meta.Section != "fs" || tt.Meta.ID != "a_ok" {
		t.Errorf("Resolve(a_ok) = %+v %v", tt.Meta, ok)
	}
	if _, ok := r.Resolve("b_err", nil, nil); ok {
		t.Error("failing factory resolved")
	}
	if _, ok := r.Resolve("g_ctx", nil, nil); ok {
		t.Error("context-dependent factory resolved without a workspace")
	}
}

// catalogMix registers core tools of several sections, plugin tools with and
// without sections, and MCP tools, in the given order.
func catalogMix() []tool.Tool {
	var out []tool.Tool
	for _, n := range []string{"tts", "read", "exec", "web_fetch", "grep", "session_status", "write", "message", "cron", "bash_like"} {
		out = append(out, core(n))
	}
	for _, n := range []string{"zeta", "alpha"} {
		p := mk(n)
		p.Meta.Section = "web"
		out = append(out, p)
	}
	for _, n := range []string{"gh__issue", "gh__pr", "fs__read"} {
		m := mk(n)
		server, _, _ := strings.Cut(n, "__")
		m.Meta = tool.Meta{Section: "mcp", Source: tool.SourceMCP, Groups: []string{"mcp:" + server}}
		out = append(out, m)
	}
	out = append(out, mk("loose"), mk("another"))
	return out
}

var wantOrder = []string{
	"read", "write", "grep", // fs, catalog order
	"exec",                       // runtime
	"web_fetch", "alpha", "zeta", // web: catalog first, then by id
	"session_status",                  // sessions
	"message",                         // messaging
	"cron",                            // automation
	"tts",                             // media
	"fs__read", "gh__issue", "gh__pr", // a section outside the catalog, by id
	"another", "bash_like", "loose", // no section, last, by id
}

func TestStableOrder(t *testing.T) {
	t.Parallel()
	var first []byte
	for i := range 25 {
		tools := catalogMix()
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		rng.Shuffle(len(tools), func(a, b int) { tools[a], tools[b] = tools[b], tools[a] })
		r := registry.New()
		mustRegister(t, r, tools...)
		got := r.ResolveAll(nil, nil)
		if !slices.Equal(ids(got), wantOrder) {
			t.Fatalf("order %v\nwant  %v", ids(got), wantOrder)
		}
		if !slices.Equal(metaIDs(r.List()), wantOrder) {
			t.Fatalf("List order differs: %v", metaIDs(r.List()))
		}
		b, err := json.Marshal(metasOf(got))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("registration order %d changed the resolved list", i)
		}
	}
}

func metasOf(tools []tool.Tool) []tool.Meta {
	out := make([]tool.Meta, len(tools))
	for i, t := range tools {
		out[i] = t.Meta
	}
	return out
}

func TestListBySection(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, catalogMix()...)
	var got []string
	for _, s := range r.ListBySection() {
		got = append(got, fmt.Sprintf("%s(%s):%s", s.Section.ID, s.Section.Title, strings.Join(metaIDs(s.Tools), ",")))
	}
	want := []string{
		"fs(Files):read,write,grep", "runtime(Runtime):exec", "web(Web):web_fetch,alpha,zeta",
		"sessions(Sessions):session_status", "messaging(Messaging):message", "automation(Automation):cron",
		"media(Media):tts", "mcp(mcp):fs__read,gh__issue,gh__pr", "():another,bash_like,loose",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestSelection(t *testing.T) {
	t.Parallel()
	r := registry.New()
	tools := catalogMix()
	opt := mk("optional_tool")
	opt.Meta = tool.Meta{Optional: true, Section: "web"}
	tools = append(tools, opt)
	mustRegister(t, r, tools...)
	for _, tc := range []struct {
		name string
		opts []registry.Option
		want []string
	}{
		{"profile coding", []registry.Option{registry.Profile("coding")}, []string{"read", "write", "grep", "exec", "session_status"}},
		{"profile minimal", []registry.Option{registry.Profile("minimal")}, []string{"session_status"}},
		{"profile messaging", []registry.Option{registry.Profile("messaging")}, []string{"session_status", "message"}},
		{"profile full", []registry.Option{registry.Profile("full")}, wantOrder},
		{"section", []registry.Option{registry.Section("web")}, []string{"web_fetch", "alpha", "zeta"}},
		{"include ids", []registry.Option{registry.Include("exec", "read")}, []string{"read", "exec"}},
		{"include alias", []registry.Option{registry.Include(" bash ")}, []string{"exec"}},
		{"include group", []registry.Option{registry.Include("group:fs")}, []string{"read", "write", "grep"}},
		{"include core", []registry.Option{registry.Include("group:core"), registry.Exclude("group:fs", "group:sessions")}, []string{"exec", "web_fetch", "message", "cron", "tts", "bash_like"}},
		{"include plugins", []registry.Option{registry.Include("group:plugins")}, []string{"alpha", "optional_tool", "zeta", "another", "loose"}},
		{"include mcp", []registry.Option{registry.Include("group:mcp")}, []string{"fs__read", "gh__issue", "gh__pr"}},
		{"include one server", []registry.Option{registry.Include("group:mcp:gh")}, []string{"gh__issue", "gh__pr"}},
		{"exclude wins", []registry.Option{registry.Include("group:fs"), registry.Exclude("write")}, []string{"read", "grep"}},
		{"exclude group", []registry.Option{registry.Profile("coding"), registry.Exclude("group:runtime", "group:sessions")}, []string{"read", "write", "grep"}},
		{"optional by name", []registry.Option{registry.Include("optional_tool", "alpha")}, []string{"alpha", "optional_tool"}},
		{"optional by group", []registry.Option{registry.Include("group:web")}, []string{"web_fetch", "alpha", "optional_tool", "zeta"}},
		{"profile and include", []registry.Option{registry.Profile("coding"), registry.Include("group:runtime", "message")}, []string{"exec"}},
	} {
		got := ids(r.ResolveAll(nil, nil, tc.opts...))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if list := metaIDs(r.List(tc.opts...)); !slices.Equal(list, tc.want) {
			t.Errorf("%s: List %v differs from ResolveAll", tc.name, list)
		}
	}
	if got := ids(r.ResolveByProfile("coding", nil, nil, registry.Exclude("exec"))); !slices.Equal(got, []string{"read", "write", "grep", "session_status"}) {
		t.Errorf("ResolveByProfile: %v", got)
	}
	if got := ids(r.ResolveByProfile("full", nil, nil)); !slices.Equal(got, wantOrder) {
		t.Errorf("full profile: %v", got)
	}
	m, _ := r.Meta("read")
	if !registry.Selected(&m, registry.Profile("coding")) || registry.Selected(&m, registry.Exclude("group:fs")) {
		t.Error("Selected disagrees")
	}
}

func TestUnknownRefs(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, catalogMix()...)
	got := r.Unknown([]string{"read", "bash", "group:fs", "group:ui", "group:core", "group:mcp:gh", "group:mcp:nope", "reed", "browser"})
	if want := []string{"group:mcp:nope", "reed", "browser"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, core("read"), core("exec"), core("apply_patch"), mk("Search"), mk("SEARCH"), mk("Fetch"))
	for _, tc := range []struct {
		in, want string
	}{
		{"read", "read"},
		{"  read\n", "read"},
		{"READ", "read"},
		{"bash", "exec"},
		{"Bash", "exec"},
		{"apply-patch", "apply_patch"},
		{"fetch", "Fetch"},
		{"Search", "Search"},
		{"search", ""}, // ambiguous between Search and SEARCH
		{"nope", ""},
		{"", ""},
	} {
		got, ok := r.Lookup(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	if tt, ok := r.Resolve(" BASH ", nil, nil); !ok || tt.Name != "exec" {
		t.Errorf("Resolve through an alias: %v %v", tt.Name, ok)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, catalogMix()...)
	mustRegister(t, r, core("edit"), core("ls"), core("find"))
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"raed", []string{"read"}},
		{"web-fetch", []string{"web_fetch"}},
		{"webfetch", []string{"web_fetch"}},
		{"fetch", []string{"web_fetch"}},
		{"session", []string{"session_status"}},
		{"gh_issue", []string{"gh__issue"}},
		{"edti", []string{"edit"}},
		{"completely_unrelated_name", nil},
	} {
		got := r.Suggest(tc.in, 3)
		if len(got) == 0 && tc.want == nil {
			continue
		}
		if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
			t.Errorf("Suggest(%q) = %v, want it to start with %v", tc.in, got, tc.want)
		}
		if len(got) > 3 {
			t.Errorf("Suggest(%q) returned %d names", tc.in, len(got))
		}
	}
	if got := r.Suggest("raed", 3, registry.Exclude("read")); slices.Contains(got, "read") {
		t.Errorf("suggested an excluded tool: %v", got)
	}
}

func TestHasUnregisterClearSizeVersion(t *testing.T) {
	t.Parallel()
	r := registry.New()
	v0 := r.Version()
	mustRegister(t, r, core("read"), core("write"))
	if !r.Has("read") || r.Has("bash") || r.Size() != 2 || r.Version() == v0 {
		t.Fatalf("has/size/version: %v %v %d", r.Has("read"), r.Has("bash"), r.Size())
	}
	v1 := r.Version()
	if !r.Unregister("read") || r.Unregister("read") || r.Has("read") || r.Size() != 1 || r.Version() == v1 {
		t.Fatal("unregister")
	}
	if _, ok := r.Resolve("read", nil, nil); ok {
		t.Fatal("unregistered tool resolved")
	}
	// Re-registering after unregistering works and is seen by listings.
	mustRegister(t, r, core("read"))
	if got := metaIDs(r.List()); !slices.Equal(got, []string{"read", "write"}) {
		t.Fatalf("after re-register: %v", got)
	}
	v2 := r.Version()
	r.Clear()
	if r.Size() != 0 || len(r.List()) != 0 || r.Version() == v2 {
		t.Fatal("clear")
	}
	v3 := r.Version()
	r.Clear()
	if r.Version() != v3 {
		t.Error("clearing an empty registry changed its version")
	}
	if _, ok := r.Meta("read"); ok {
		t.Error("meta after clear")
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustRegister(t, r, catalogMix()...)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				name := fmt.Sprintf("dyn_%d_%d", w, i%10)
				switch i % 5 {
				case 0:
					_ = r.Register(mk(name))
				case 1:
					_ = r.RegisterFactory(func(*tool.Context) (*tool.Tool, error) { t := mk(name + "f"); return &t, nil }, tool.Meta{ID: name + "f"})
				case 2:
					r.Unregister(name)
					r.Unregister(name + "f")
				case 3:
					all := r.ResolveAll(nil, nil)
					for j := 1; j < len(all); j++ {
						if all[j-1].Name == all[j].Name {
							t.Errorf("duplicate %s in resolved list", all[j].Name)
						}
					}
				case 4:
					r.List(registry.Profile("coding"))
					r.Lookup("bash")
					r.Resolve("read", nil, nil)
					r.Suggest("raed", 3)
					r.Has(name)
					r.Size()
				}
			}
		})
	}
	wg.Wait()
	// Whatever happened, the listing is consistent with the map.
	if got := len(r.List()); got != r.Size() {
		t.Errorf("List has %d tools, Size says %d", got, r.Size())
	}
}

func BenchmarkResolveAll100(b *testing.B) {
	r := registry.New()
	sections := []string{"fs", "runtime", "web", "memory", "sessions", "mcp", ""}
	for i := range 100 {
		t := mk(fmt.Sprintf("tool_%03d", i))
		t.Meta.Section = sections[i%len(sections)]
		if i%2 == 0 {
			if err := r.Register(t); err != nil {
				b.Fatal(err)
			}
			continue
		}
		made := t
		if err := r.RegisterFactory(func(*tool.Context) (*tool.Tool, error) { return &made, nil }, tool.Meta{ID: t.Name, Section: t.Meta.Section}); err != nil {
			b.Fatal(err)
		}
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: "/w"}}
	b.ReportAllocs()
	for b.Loop() {
		if got := r.ResolveAll(tc, nil); len(got) != 100 {
			b.Fatal(len(got))
		}
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	r := registry.New()
	var calls atomic.Int32
	stop := r.Watch(func() { calls.Add(1) })
	mustRegister(t, r, mk("a"))
	_ = r.Register(mk("a")) // refused: no change, no call
	r.Unregister("a")
	r.Unregister("a")
	mustRegister(t, r, mk("b"))
	r.Clear()
	r.Clear()
	v := r.Version()
	r.Touch() // a factory's answer changed: watchers hear it, the version moves
	if calls.Load() != 5 || r.Version() == v {
		t.Errorf("%d calls, want 5; version %d after touch, was %d", calls.Load(), r.Version(), v)
	}
	stop()
	mustRegister(t, r, mk("c"))
	if calls.Load() != 5 {
		t.Error("called after stop")
	}
}

// TestBatch: the changes made during overlapping batches reach the
// watchers once, when it ends; a Batch that changes nothing calls no one.
func TestBatch(t *testing.T) {
	t.Parallel()
	r := registry.New()
	var calls atomic.Int32
	var seen int
	defer r.Watch(func() { calls.Add(1); seen = r.Size() })()
	end := r.Batch()
	mustRegister(t, r, mk("a"), mk("b"))
	inner := r.Batch()
	mustRegister(t, r, mk("c"))
	inner()
	r.Unregister("a")
	if calls.Load() != 0 {
		t.Errorf("a watcher was called during the batch (%d calls)", calls.Load())
	}
	end()
	end() // once
	if calls.Load() != 1 || seen != 2 {
		t.Errorf("%d calls after the batch, want 1, seeing %d tools, want 2", calls.Load(), seen)
	}
	r.Batch()()
	mustRegister(t, r, mk("d"))
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2: an empty batch calls no one, a change outside one calls at once", calls.Load())
	}
}

// TestAny: Any finds a tool whose metadata matches among the tools the
// options select, as List would, and asks about the others no more once
// one matches.
func TestAny(t *testing.T) {
	r := registry.New()
	web := mk("fetch_page")
	web.Meta.Section, web.Meta.OpenWorld = "web", true
	mustRegister(t, r, mk("alpha"), mk("beta"), web)
	openWorld := func(m *tool.Meta) bool { return m.OpenWorld }
	if !r.Any(openWorld) {
		t.Error("Any misses fetch_page")
	}
	if r.Any(openWorld, registry.Section("runtime")) {
		t.Error("Any matches a tool the options leave out")
	}
	if r.Any(func(m *tool.Meta) bool { return m.ID == "gamma" }) {
		t.Error("Any matches a tool that is not registered")
	}
	asked := 0
	if !r.Any(func(*tool.Meta) bool { asked++; return true }) || asked != 1 {
		t.Errorf("Any asked %d times to find the first match", asked)
	}
	for _, m := range r.List() {
		if got := r.Any(func(x *tool.Meta) bool { return x.ID == m.ID }); !got {
			t.Errorf("Any misses %s, which List lists", m.ID)
		}
	}
}
