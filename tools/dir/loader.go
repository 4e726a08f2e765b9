package dir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/toolbelt/toolbelt/registry"
)

// Loader keeps the directory tools of some folders registered in a
// registry, and, while it watches, in step with the folders: a tool folder
// added, changed or removed is registered, replaced or unregistered (which
// an MCP server announces to its clients as tools/list_changed).
//
// It is a [github.com/toolbelt/toolbelt/lifecycle.Service]: Start loads the
// folders and watches them; Stop stops watching and stops the persistent
// handlers of the tools it loaded (Stop is needed after Load alone too).
type Loader struct {
	reg       *registry.Registry
	sources   []Source
	opts      Options
	onProblem func(Problem)

	mu     sync.Mutex
	loaded map[string]loadedTool // by tool name: what this loader registered
	known  map[string]bool       // the problems the last load found, reported then

	life      sync.Mutex // guards what follows, held by Start and Stop
	started   bool
	stopped   bool
	stopWatch context.CancelFunc
	watching  sync.WaitGroup
}

type loadedTool struct {
	dir         string
	fingerprint string
	tool        *Tool
}

// NewLoader returns a loader for the tools of sources. onProblem, when
// set, hears about each tool that cannot be loaded or registered, once for
// as long as the problem lasts.
func NewLoader(reg *registry.Registry, sources []Source, opts Options, onProblem func(Problem)) *Loader {
	if onProblem == nil {
		onProblem = func(Problem) {}
	}
	return &Loader{reg: reg, sources: sources, opts: opts, onProblem: onProblem, loaded: map[string]loadedTool{}}
}

// Load loads the folders and brings the registry in step: new tools are
// registered, changed ones replaced, vanished or newly broken ones
// unregistered. It returns the problems it found.
func (l *Loader) Load() []Problem {
	l.mu.Lock()
	defer l.mu.Unlock()
	set := LoadDirs(l.sources, l.opts)
	problems := set.Problems
	next := map[string]*Tool{}
	for _, t := range set.Tools {
		next[t.Meta.ID] = t
	}
	for name, old := range l.loaded {
		if _, ok := next[name]; !ok {
			l.reg.Unregister(name)
			old.tool.Close()
			delete(l.loaded, name)
		}
	}
	for name, t := range next {
		fp := fingerprint(t)
		if old, ok := l.loaded[name]; ok {
			if old.fingerprint == fp && old.dir == t.Dir {
				continue
			}
			l.reg.Unregister(name)
			old.tool.Close()
			delete(l.loaded, name)
		}
		if problem := (Set{Tools: []*Tool{t}}).Register(l.reg); len(problem) > 0 {
			problems = append(problems, problem...)
			continue
		}
		l.loaded[name] = loadedTool{dir: t.Dir, fingerprint: fp, tool: t}
	}
	known := map[string]bool{}
	for _, p := range problems {
		if known[p.Error()] = true; !l.known[p.Error()] {
			l.onProblem(p)
		}
	}
	l.known = known
	return problems
}

// Tool returns the directory tool name, if this loader registered it.
func (l *Loader) Tool(name string) (*Tool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.loaded[name]
	return t.tool, ok
}

// Adopt records that t, registered by someone else (toolbelt tool try),
// comes from its folder.
func (l *Loader) Adopt(t *Tool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.loaded[t.Meta.ID]; ok && old.tool != t {
		old.tool.Close()
	}
	l.loaded[t.Meta.ID] = loadedTool{dir: t.Dir, fingerprint: fingerprint(t), tool: t}
}

// Stop stops watching the folders and the persistent handlers of the tools it
// loaded: a call under way on one has until ctx ends to finish
// ([github.com/toolbelt/toolbelt/lifecycle.Service]). The tools stay
// registered, and fail once called.
func (l *Loader) Stop(ctx context.Context) error {
	l.life.Lock()
	defer l.life.Unlock()
	if l.stopped {
		return nil
	}
	l.stopped = true
	if l.started {
		l.stopWatch()
		l.watching.Wait()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.loaded {
		t.tool.stop(ctx)
	}
	return ctx.Err()
}

// fingerprint identifies the content of a tool's files: its metadata,
// schema and handler, and for an untrusted tool everything in its folder
// (a file its handler sources changes it too), with how it is run and
// whether it is trusted.
func fingerprint(t *Tool) string {
	h := sha256.New()
	for _, f := range []string{filepath.Join(t.Dir, MetadataFile), filepath.Join(t.Dir, SchemaFile), t.Handler} {
		b, _ := os.ReadFile(f)
		h.Write([]byte(f))
		h.Write(b)
	}
	h.Write([]byte(string(rune(len(t.Argv)))))
	for _, a := range t.Argv {
		h.Write([]byte(a + "\x00"))
	}
	h.Write([]byte(t.Untrusted + "\x00"))
	if t.Untrusted != "" {
		code, err := codeHash(t.Dir, "")
		if err != nil {
			code = err.Error()
		}
		h.Write([]byte(code))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// settle is how long the folders must be quiet after a change before they
// are loaded again (an editor saves in several steps).
const settle = 200 * time.Millisecond

// Start loads the tools, then reloads them whenever a file in the folders
// changes, until Stop; ctx bounds starting only. Folders that do not
// exist yet are not watched.
func (l *Loader) Start(ctx context.Context) error {
	l.life.Lock()
	defer l.life.Unlock()
	switch {
	case l.stopped:
		return errors.New("directory tools: the loader is stopped")
	case l.started:
		return errors.New("directory tools: the loader is started already")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("directory tools: watching the folders: %w", err)
	}
	l.started = true
	l.watchAll(w)
	l.Load() // what changed before the watch began
	watch, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stopWatch = stop
	l.watching.Go(func() {
		defer w.Close()
		l.watch(watch, w)
	})
	return nil
}

// watch reloads the tools after the folders change, until ctx ends.
func (l *Loader) watch(ctx context.Context, w *fsnotify.Watcher) {
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(settle)
			} else {
				timer.Reset(settle)
			}
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			l.onProblem(Problem{Err: err})
		case <-fire:
			fire = nil
			l.watchAll(w) // new tool folders
			l.Load()
		}
	}
}

// watchAll watches every source folder and every folder in it.
func (l *Loader) watchAll(w *fsnotify.Watcher) {
	for _, src := range l.sources {
		entries, err := os.ReadDir(src.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				l.onProblem(Problem{Dir: src.Path, Err: err})
			}
			continue
		}
		_ = w.Add(src.Path)
		for _, e := range entries {
			if e.IsDir() {
				_ = w.Add(filepath.Join(src.Path, e.Name()))
			}
		}
	}
}
