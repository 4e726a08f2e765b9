// Package registry holds tools and the factories that make them, and resolves
// them for a tool context: by profile, section, id or group, in a stable
// order (section order, then catalog order), so the same registry always
// yields a byte-identical tool list — prompt caching at the providers depends
// on it.
//
// A Registry is a value: make one with [New] and share it freely; it is safe
// for concurrent use.
package registry

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/tool"
)

// Factory makes a tool for a tool context. It returns nil (and a nil error)
// when the tool does not apply to that context, or an error that says why the
// tool is unavailable ("fs tools need a root and a bridge").
type Factory func(tc *tool.Context) (*tool.Tool, error)

// ErrorFunc receives the id of a tool that could not be resolved and why.
type ErrorFunc func(id string, err error)

// Registry holds tools and factories by id.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*entry
	// sorted caches the entries in resolution order; nil when stale.
	sorted  atomic.Pointer[[]*entry]
	version atomic.Uint64

	watchMu  sync.Mutex
	watchers map[int]func()
	nextID   int
	batches  int  // Batch calls under way
	held     bool // a change was made during them
}

// Watch calls fn after every change to the registry (a tool registered or
// removed), on the goroutine that made the change, until stop is called. An
// MCP server uses it to tell clients the tool list changed.
func (r *Registry) Watch(fn func()) (stop func()) {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watchers == nil {
		r.watchers = map[int]func(){}
	}
	id := r.nextID
	r.nextID++
	r.watchers[id] = fn
	return func() {
		r.watchMu.Lock()
		defer r.watchMu.Unlock()
		delete(r.watchers, id)
	}
}

// Batch holds back the watchers' calls for the changes made from now on
// (on any goroutine) until end is called; then they are called once, on
// end's goroutine. Batches may overlap: the watchers are called when the
// last ends. An import of a thousand tools registers them in one batch, so
// an MCP server following the registry lists them once, not once per tool.
func (r *Registry) Batch() (end func()) {
	r.watchMu.Lock()
	r.batches++
	r.watchMu.Unlock()
	return sync.OnceFunc(func() {
		r.watchMu.Lock()
		r.batches--
		fire := r.batches == 0 && r.held
		if fire {
			r.held = false
		}
		r.watchMu.Unlock()
		if fire {
			r.notify()
		}
	})
}

// notify calls the watchers, or during a Batch notes that it must; callers
// do not hold r.mu.
func (r *Registry) notify() {
	r.watchMu.Lock()
	if r.batches > 0 {
		r.held = true
		r.watchMu.Unlock()
		return
	}
	fns := make([]func(), 0, len(r.watchers))
	for _, fn := range r.watchers {
		fns = append(fns, fn)
	}
	r.watchMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// entry is one registration. Entries are immutable once stored.
type entry struct {
	meta    tool.Meta
	tool    *tool.Tool // set for a registered tool
	factory Factory    // set for a registered factory
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{entries: make(map[string]*entry)}
}

// Register adds a tool. meta, when given, describes the tool instead of
// t.Meta; its ID must be empty or t.Name. Fields left empty are filled from
// the tool, from the catalog when t is a core tool, and by
// [tool.Meta.WithDefaults]. Registering a name that is already registered is
// an error: unregister the old tool first.
func (r *Registry) Register(t tool.Tool, meta ...tool.Meta) error {
	if err := t.Check(); err != nil {
		return err
	}
	m := t.Meta
	if len(meta) > 0 {
		m = meta[0]
	}
	if m.ID != "" && m.ID != t.Name {
		return fmt.Errorf("tool %q: metadata id %q does not match the tool's name", t.Name, m.ID)
	}
	m.ID = t.Name
	m.Label = cmp.Or(m.Label, t.Label)
	m.Description = cmp.Or(m.Description, t.Description)
	if t.Async != nil {
		m.Async = true
		m.EstimatedTime = cmp.Or(m.EstimatedTime, t.Async.EstimatedTime)
	}
	m = complete(m)
	t.Label = cmp.Or(t.Label, m.Label)
	t.Description = cmp.Or(t.Description, m.Description)
	t.Meta = m
	return r.add(&entry{meta: m, tool: &t})
}

// RegisterFactory adds a factory. meta.ID is required and is the name of the
// tool the factory makes; the registry lists the tool by meta without calling
// the factory.
func (r *Registry) RegisterFactory(f Factory, meta tool.Meta) error {
	if meta.ID == "" {
		return fmt.Errorf("registering a factory needs metadata with an id")
	}
	if err := tool.ValidateName(meta.ID); err != nil {
		return err
	}
	if f == nil {
		return fmt.Errorf("tool %q: nil factory", meta.ID)
	}
	return r.add(&entry{meta: complete(meta), factory: f})
}

// complete fills a tool's metadata from the catalog and the defaults.
func complete(m tool.Meta) tool.Meta {
	if e, _, ok := catalog.Lookup(m.ID); ok {
		if m.Section == "" {
			m.Section = e.Section
			if m.Profiles == nil {
				m.Profiles = e.Profiles
			}
		}
		m.OwnerOnly = m.OwnerOnly || e.OwnerOnly
		if m.ParamAliases == nil {
			m.ParamAliases = e.ParamAliases
		}
	}
	return m.WithDefaults()
}

func (r *Registry) add(e *entry) error {
	r.mu.Lock()
	if old, ok := r.entries[e.meta.ID]; ok {
		r.mu.Unlock()
		return fmt.Errorf("tool %q is already registered (source %s): unregister it first or choose another name", e.meta.ID, old.meta.Source)
	}
	r.entries[e.meta.ID] = e
	r.changed()
	r.mu.Unlock()
	r.notify()
	return nil
}

// changed records a mutation; callers hold r.mu.
func (r *Registry) changed() {
	r.sorted.Store(nil)
	r.version.Add(1)
}

// Unregister removes the tool with this id and reports whether it was there.
func (r *Registry) Unregister(id string) bool {
	r.mu.Lock()
	if _, ok := r.entries[id]; !ok {
		r.mu.Unlock()
		return false
	}
	delete(r.entries, id)
	r.changed()
	r.mu.Unlock()
	r.notify()
	return true
}

// Touch tells watchers the tool list may read differently without any tool
// being added or removed: a factory whose answer depends on outside state
// (an MCP server going down or coming back) calls it when that state moves.
func (r *Registry) Touch() {
	r.version.Add(1)
	r.notify()
}

// Clear removes every tool.
func (r *Registry) Clear() {
	r.mu.Lock()
	if len(r.entries) == 0 {
		r.mu.Unlock()
		return
	}
	clear(r.entries)
	r.changed()
	r.mu.Unlock()
	r.notify()
}

// Has reports whether a tool with this id is registered.
func (r *Registry) Has(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.entries[id]
	return ok
}

// Size returns the number of registered tools.
func (r *Registry) Size() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Version changes whenever a tool is registered or removed, so holders of
// resolved tools and compiled schemas know when to refresh them.
func (r *Registry) Version() uint64 { return r.version.Load() }

// Meta returns the metadata of the tool with this id.
func (r *Registry) Meta(id string) (tool.Meta, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[id]
	if !ok {
		return tool.Meta{}, false
	}
	return e.meta, true
}

// Lookup turns a name as a model or a person wrote it into a registered id:
// surrounding space is trimmed, then the exact id, an alias ("bash" → "exec")
// and a case-insensitive match are tried, in that order. A case-insensitive
// match that fits several tools is no match.
func (r *Registry) Lookup(name string) (string, bool) {
	name = strings.TrimSpace(name)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.entries[name]; ok {
		return name, true
	}
	if id, ok := catalog.Alias(name); ok {
		if _, ok := r.entries[id]; ok {
			return id, true
		}
	}
	if id, ok := catalog.Alias(strings.ToLower(name)); ok {
		if _, ok := r.entries[id]; ok {
			return id, true
		}
	}
	found := ""
	for id := range r.entries {
		if strings.EqualFold(id, name) {
			if found != "" {
				return "", false
			}
			found = id
		}
	}
	return found, found != ""
}

// ordered returns the entries in resolution order: catalog sections in
// catalog order, then other sections by name, then tools without a section;
// within a section, core tools in catalog order, then the rest by id.
func (r *Registry) ordered() []*entry {
	if p := r.sorted.Load(); p != nil {
		return *p
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if p := r.sorted.Load(); p != nil {
		return *p
	}
	list := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		list = append(list, e)
	}
	slices.SortFunc(list, compareEntries)
	// Writers are excluded while the read lock is held, so the list is current.
	r.sorted.Store(&list)
	return list
}

func compareEntries(a, b *entry) int {
	if c := compareSections(a.meta.Section, b.meta.Section); c != 0 {
		return c
	}
	_, ai, aCore := catalog.Lookup(a.meta.ID)
	_, bi, bCore := catalog.Lookup(b.meta.ID)
	switch {
	case aCore && bCore:
		return cmp.Compare(ai, bi)
	case aCore != bCore:
		if aCore {
			return -1
		}
		return 1
	}
	return strings.Compare(a.meta.ID, b.meta.ID)
}

func compareSections(a, b string) int {
	if a == b {
		return 0
	}
	ai, aok := catalog.SectionOrder(a)
	bi, bok := catalog.SectionOrder(b)
	switch {
	case aok && bok:
		return cmp.Compare(ai, bi)
	case aok != bok:
		if aok {
			return -1
		}
		return 1
	case a == "":
		return 1
	case b == "":
		return -1
	}
	return strings.Compare(a, b)
}

// List returns the metadata of the tools the options select, in resolution
// order. No factory is called.
func (r *Registry) List(opts ...Option) []tool.Meta {
	s := newSelector(opts)
	ordered := r.ordered()
	var out []tool.Meta
	if len(opts) == 0 {
		// All of them: one allocation, not a dozen growing copies of a
		// thousand imported tools' metadata.
		out = make([]tool.Meta, 0, len(ordered))
	}
	for _, e := range ordered {
		if s.selects(&e.meta) {
			out = append(out, e.meta)
		}
	}
	return out
}

// Any reports whether match holds for the metadata of a tool the options
// select, without copying any (List copies every tool's); match must not
// change it. No factory is called.
func (r *Registry) Any(match func(*tool.Meta) bool, opts ...Option) bool {
	s := newSelector(opts)
	for _, e := range r.ordered() {
		if s.selects(&e.meta) && match(&e.meta) {
			return true
		}
	}
	return false
}

// SectionList is the tools of one section.
type SectionList struct {
	Section catalog.Section
	Tools   []tool.Meta
}

// ListBySection returns List grouped by section, in section order.
func (r *Registry) ListBySection(opts ...Option) []SectionList {
	var out []SectionList
	for _, m := range r.List(opts...) {
		if n := len(out); n == 0 || out[n-1].Section.ID != m.Section {
			out = append(out, SectionList{Section: catalog.Section{ID: m.Section, Title: catalog.SectionTitle(m.Section)}})
		}
		last := &out[len(out)-1]
		last.Tools = append(last.Tools, m)
	}
	return out
}

// ResolveAll returns the tools the options select, ready to run for tc, in
// resolution order. A factory that fails, panics or returns nothing is
// skipped and reported to onError (which may be nil); it never affects the
// other tools.
func (r *Registry) ResolveAll(tc *tool.Context, onError ErrorFunc, opts ...Option) []tool.Tool {
	s := newSelector(opts)
	ordered := r.ordered()
	out := make([]tool.Tool, 0, len(ordered))
	for _, e := range ordered {
		if !s.selects(&e.meta) {
			continue
		}
		t, err := e.resolve(tc)
		if err != nil {
			if onError != nil {
				onError(e.meta.ID, err)
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// ResolveByProfile is ResolveAll limited to one profile; "full" (or "")
// selects every tool.
func (r *Registry) ResolveByProfile(profile string, tc *tool.Context, onError ErrorFunc, opts ...Option) []tool.Tool {
	return r.ResolveAll(tc, onError, append(opts, Profile(profile))...)
}

// Resolve returns the tool a name refers to (see [Registry.Lookup]), ready to
// run for tc. It reports false when no tool has that name, or when its factory
// fails (after telling onError why).
func (r *Registry) Resolve(name string, tc *tool.Context, onError ErrorFunc) (tool.Tool, bool) {
	id, ok := r.Lookup(name)
	if !ok {
		return tool.Tool{}, false
	}
	r.mu.RLock()
	e := r.entries[id]
	r.mu.RUnlock()
	if e == nil { // unregistered meanwhile
		return tool.Tool{}, false
	}
	t, err := e.resolve(tc)
	if err != nil {
		if onError != nil {
			onError(id, err)
		}
		return tool.Tool{}, false
	}
	return t, true
}

// resolve returns the entry's tool, calling its factory when it has one.
func (e *entry) resolve(tc *tool.Context) (t tool.Tool, err error) {
	if e.tool != nil {
		return *e.tool, nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = &FactoryPanic{Value: p, Stack: debug.Stack()}
		}
	}()
	made, err := e.factory(tc)
	switch {
	case err != nil:
		return tool.Tool{}, err
	case made == nil:
		return tool.Tool{}, fmt.Errorf("not available in this context (its factory made no tool)")
	case made.Name != e.meta.ID:
		return tool.Tool{}, fmt.Errorf("factory made a tool named %q instead of %q", made.Name, e.meta.ID)
	}
	if err := made.Check(); err != nil {
		return tool.Tool{}, err
	}
	t = *made
	t.Label = cmp.Or(t.Label, e.meta.Label)
	t.Description = cmp.Or(t.Description, e.meta.Description)
	t.Meta = e.meta
	return t, nil
}

// FactoryPanic is the error reported when a factory panics.
type FactoryPanic struct {
	Value any
	Stack []byte
}

func (p *FactoryPanic) Error() string { return fmt.Sprintf("factory panicked: %v", p.Value) }
