package memory

import (
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// maxWatched bounds the workspaces an Indexer watches; the others rely on
// the stat-based rescan alone.
const maxWatched = 64

// watcher follows a workspace's memory files with fsnotify: the
// workspace's directory (for MEMORY.md and memory/ themselves) and every
// directory under memory/. Each event under them counts: a scan made
// before it is not trusted any more.
type watcher struct {
	ws   string
	fw   *fsnotify.Watcher
	gen  atomic.Uint64
	done chan struct{}
}

// watch starts watching ws; an error (no inotify, the watch limit) leaves
// the workspace to the stat-based rescan.
func watch(ws string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{ws: ws, fw: fw, done: make(chan struct{})}
	if err := fw.Add(ws); err != nil {
		fw.Close()
		return nil, err
	}
	if err := w.addTree(filepath.Join(ws, "memory")); err != nil {
		fw.Close()
		return nil, err
	}
	go w.loop()
	return w, nil
}

// addTree watches dir and the directories below it (links are not
// followed); a missing dir is no error.
func (w *watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return nil // not there (yet): the watch of the workspace sees it come
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		return w.fw.Add(p)
	})
}

func (w *watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			rel, err := filepath.Rel(w.ws, ev.Name)
			if err != nil {
				continue
			}
			rel = filepath.ToSlash(rel)
			if rel != "MEMORY.md" && rel != "memory" && !strings.HasPrefix(rel, "memory/") {
				continue
			}
			if ev.Has(fsnotify.Create) && (rel == "memory" || strings.HasPrefix(rel, "memory/")) {
				// A new directory is watched too (adding a file is harmless:
				// it fails or watches the file, which the scan reads anyway).
				_ = w.addTree(ev.Name)
			}
			w.gen.Add(1)
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.gen.Add(1) // an overflow loses events: scan again
		}
	}
}

func (w *watcher) close() {
	w.fw.Close()
	<-w.done
}

// watchers are the watchers of an Indexer, by workspace.
type watchers struct {
	mu     sync.Mutex
	by     map[string]*watcher
	failed map[string]error
	closed bool
}

// generation returns the count of events seen under ws's memory files,
// starting to watch it first if need be; ok is false when ws is not
// watched.
func (ws *watchers) generation(dir string) (gen uint64, ok bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return 0, false
	}
	if w := ws.by[dir]; w != nil {
		return w.gen.Load(), true
	}
	if ws.failed[dir] != nil || len(ws.by) >= maxWatched {
		return 0, false
	}
	w, err := watch(dir)
	if err != nil {
		if ws.failed == nil {
			ws.failed = map[string]error{}
		}
		ws.failed[dir] = err
		return 0, false
	}
	if ws.by == nil {
		ws.by = map[string]*watcher{}
	}
	ws.by[dir] = w
	return w.gen.Load(), true
}

func (ws *watchers) close() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = true
	for _, w := range ws.by {
		w.close()
	}
	ws.by = nil
}
