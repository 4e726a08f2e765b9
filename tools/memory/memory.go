// Package memory holds the tools of the memory section: memory_search and
// memory_get. An agent's memory is Markdown in its workspace — MEMORY.md and
// the .md files under memory/ — indexed for full-text search in the store
// (Index). Each search first brings the index in step with the
// files (see Indexer): files whose size or modification time changed are
// indexed again, removed files are dropped.
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Register adds memory_search and memory_get to reg; memory_search keeps
// the indexes in step with the files with ix (NewIndexer(DefaultRescan)
// when nil).
func Register(reg *registry.Registry, ix *Indexer) error {
	if ix == nil {
		ix = NewIndexer(DefaultRescan)
	}
	if err := reg.RegisterFactory(ix.searchTool, tool.Meta{
		ID: "memory_search", Label: "Search Memory", Description: searchDescription,
		ReadOnly: true, Source: tool.SourceCore, Settings: &Config{}, SettingsKey: ConfigKey,
	}); err != nil {
		return err
	}
	return reg.RegisterFactory(getTool, tool.Meta{
		ID: "memory_get", Label: "Read Memory", Description: getDescription,
		ReadOnly: true, Source: tool.SourceCore, Settings: &Config{}, SettingsKey: ConfigKey,
	})
}

const searchDescription = "Search your memory: the notes you keep in MEMORY.md and memory/*.md in the workspace. " +
	"Use it before answering about prior work, decisions, dates, people, preferences or todos. " +
	"Returns the best-matching snippets with their file, line range and score (higher is better); " +
	"read more of a file with memory_get."

const getDescription = "Read a memory file (MEMORY.md or memory/*.md in the workspace), whole or a range of lines — " +
	"typically the lines a memory_search hit names. Other files are refused: use read for them."

// MaxFileBytes is the size above which a memory file is not indexed.
const MaxFileBytes = 4 << 20

// snippetChars bounds the text of one hit.
const snippetChars = 700

type searchArgs struct {
	Query      string `json:"query" jsonschema:"What to look for, in words (names, topics, phrases)." minLength:"1"`
	MaxResults int    `json:"maxResults,omitempty" jsonschema:"How many snippets to return at most." minimum:"1" maximum:"50" default:"6"`
}

type getArgs struct {
	Path  string `json:"path" jsonschema:"The memory file, relative to the workspace: MEMORY.md or memory/<name>.md." minLength:"1"`
	From  int    `json:"from,omitempty" jsonschema:"The first line to return, 1-based." minimum:"1"`
	Lines int    `json:"lines,omitempty" jsonschema:"How many lines to return from From; all to the end when absent." minimum:"1"`
}

// Hit is one result of memory_search, as its details carry it.
type Hit struct {
	Path      string  `json:"path"`
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	Score     float64 `json:"score"`
	Snippet   string  `json:"snippet"`
}

// usable returns the memory index of tc, or why memory cannot be used in
// tc.
func usable(tc *tool.Context) (Index, error) {
	if tc == nil || tc.Workspace == "" {
		return nil, errors.New("no workspace: memory lives in the workspace's MEMORY.md and memory/")
	}
	idx, ok := IndexService.Get(tc)
	if !ok {
		return nil, errors.New("no memory index: this context has no store to index memory in")
	}
	return idx, nil
}

func (ix *Indexer) searchTool(tc *tool.Context) (*tool.Tool, error) {
	idx, err := usable(tc)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(tc.Config)
	if err != nil {
		return nil, err
	}
	if cfg.Embeddings != (Embeddings{}) {
		if _, err := ix.embedderFor(cfg.Embeddings); err != nil {
			return nil, err
		}
	}
	t, err := tool.New("memory_search", searchDescription, func(ctx context.Context, in searchArgs, inv tool.Invocation) (tool.Result, error) {
		if in.MaxResults == 0 {
			in.MaxResults = 6
		}
		found, err := ix.find(ctx, idx, filesOf(inv.Context), inv.Context.Workspace, in.Query, in.MaxResults, cfg)
		if err != nil {
			return tool.Result{}, err
		}
		return searchResult(in.Query, found), nil
	})
	return &t, err
}

func searchResult(query string, found Found) tool.Result {
	var b strings.Builder
	if found.Note != "" {
		fmt.Fprintf(&b, "[Note: %s]\n\n", found.Note)
	}
	if len(found.Skipped) > 0 {
		fmt.Fprintf(&b, "[Not searched: %s]\n\n", strings.Join(found.Skipped, "; "))
	}
	if len(found.Hits) == 0 {
		found.Hits = []Hit{}
		fmt.Fprintf(&b, "No memory matches %q. Try other words (names, synonyms), or list memory/ to see what is kept.", query)
	}
	for i, h := range found.Hits {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%s:%d-%d (score %s)\n%s", h.Path, h.StartLine, h.EndLine, strconv.FormatFloat(h.Score, 'g', 3, 64), h.Snippet)
	}
	res := tool.Text(b.String())
	details := map[string]any{"results": found.Hits, "mode": found.Mode}
	if found.Note != "" {
		details["note"] = found.Note
	}
	if len(found.Skipped) > 0 {
		details["skipped"] = found.Skipped
	}
	res.Details = details
	return res
}

// DefaultRescan is how long after a full scan of a workspace's memory files
// memory_search trusts it while MEMORY.md and the memory directories are
// unchanged.
const DefaultRescan = 2 * time.Second

// Indexer keeps workspaces' memory indexes in step with their files. A full
// scan stats every memory file and indexes again those whose size or
// modification time changed. Within Rescan of the last full scan, a search
// only checks MEMORY.md and the modification times of the directories
// under memory/: files created, removed or replaced by a rename (as
// Toolbelt's own file tools write) show at once; a file rewritten in place
// shows at the next full scan — or at once when Watch is set and the
// workspace is watched. A full scan is recorded in the index when the
// index keeps scans (Scans, as the store does), and a fresh indexer (a new
// process) starts from that record: while MEMORY.md and the directories
// under memory/ keep the stamps it recorded, and none of them had changed
// within racyWindow of it (git's racily-clean rule), the notes are
// trusted without being stat-ed or compared with the index one by one. So
// a note added, removed or replaced by a rename shows in a fresh process
// at once, and one rewritten in place (not renamed) at the next full
// scan: after a directory changes, or at every search with Rescan 0. It
// is safe for concurrent use.
type Indexer struct {
	// Rescan is how long a full scan is trusted (see above); 0 scans fully
	// at every search.
	Rescan time.Duration
	// Watch follows each searched workspace's memory files with fsnotify
	// (up to 64 workspaces): any change under MEMORY.md or memory/ makes
	// the next search scan fully. Where watching fails (no inotify, the
	// watch limit reached), the stat-based rescan alone applies; it applies
	// anyway, for changes a watch cannot see (network file systems). A
	// foreground call (tool.Foreground: a one-shot `toolbelt call`, whose
	// process ends with it) starts no watch: it could serve only later
	// searches of that process, and listing memory/ to watch it cost such a
	// search more than the search (10,000 notes). Set it before the first
	// search; Close stops the watchers.
	Watch bool
	// RetryAfter is how long an embedding provider that failed is left
	// alone, searching by keywords only meanwhile (0: DefaultRetryAfter;
	// negative: ask it at every search).
	RetryAfter time.Duration

	mu       sync.Mutex
	scans    map[string]*scan // by workspace
	watchers watchers

	emu       sync.Mutex
	embedders map[string]*embedding // by settings
	vecs      map[string]*vectors   // by workspace and model
}

// scan is what the last full scan of a workspace found.
type scan struct {
	at     time.Time
	stamps map[string]string // indexed files' stamps
	dirs   map[string]string // stamps of MEMORY.md ("MEMORY.md") and of the directories under memory/
	// watched says the workspace was watched from before the scan, and gen
	// is the watcher's count of events then.
	watched bool
	gen     uint64
	// skipped are the memory files the scan could not index, each with why
	// (see Found.Skipped).
	skipped []string
}

// Close stops the indexer's file watchers.
func (ix *Indexer) Close() error {
	ix.watchers.close()
	return nil
}

func (ix *Indexer) retryAfter() time.Duration {
	if ix.RetryAfter == 0 {
		return DefaultRetryAfter
	}
	return ix.RetryAfter
}

// Found is what a search found, and how.
type Found struct {
	Hits []Hit
	// Mode is "hybrid" (keywords and vectors) or "keyword".
	Mode string
	// Note says why a search that was to be hybrid is not.
	Note string
	// Skipped are the memory files left out of the index because the
	// workspace's file bridge refuses to read them (a file with several
	// hard links, for one), each as "path: why".
	Skipped []string
}

// NewIndexer returns an indexer that trusts a full scan for rescan.
func NewIndexer(rescan time.Duration) *Indexer {
	return &Indexer{Rescan: rescan}
}

// Search brings the index of the workspace's memory in step with its files
// and returns up to limit hits for query by keywords, best first.
func (ix *Indexer) Search(ctx context.Context, idx Index, workspace, query string, limit int) ([]Hit, error) {
	found, err := ix.Find(ctx, idx, workspace, query, limit, Config{})
	return found.Hits, err
}

// Find brings the index of the workspace's memory in step with its files
// and returns up to limit hits for query, best first: by keywords and
// vectors (hybrid) when cfg configures an embedding provider and it works,
// else by keywords, with a note saying why. It reads the files through a
// [fsbridge.Local] of its own over the workspace, with the bridge's default
// rules.
func (ix *Indexer) Find(ctx context.Context, idx Index, workspace, query string, limit int, cfg Config) (Found, error) {
	return ix.find(ctx, idx, nil, workspace, query, limit, cfg)
}

// find is Find, reading the files through files (see bridgeFor).
func (ix *Indexer) find(ctx context.Context, idx Index, files fsbridge.Bridge, workspace, query string, limit int, cfg Config) (Found, error) {
	changed, skipped, err := ix.sync(ctx, idx, files, workspace)
	if err != nil {
		return Found{}, err
	}
	var found []tool.MemoryHit
	out := Found{Mode: "keyword", Skipped: skipped}
	if cfg.Embeddings != (Embeddings{}) {
		e, err := ix.embedderFor(cfg.Embeddings)
		if err != nil {
			return Found{}, err
		}
		found, out.Note, err = ix.hybrid(ctx, idx, e, workspace, query, limit, changed)
		if err != nil {
			return Found{}, err
		}
		if out.Note == "" {
			out.Mode = "hybrid"
		}
	} else if found, err = idx.Search(ctx, workspace, query, limit); err != nil {
		return Found{}, err
	}
	out.Hits = make([]Hit, 0, len(found))
	for _, h := range found {
		out.Hits = append(out.Hits, Hit{Path: h.Path, StartLine: h.StartLine, EndLine: h.EndLine, Score: h.Score, Snippet: snippet(h.Text)})
	}
	return out, nil
}

func snippet(text string) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) <= snippetChars {
		return text
	}
	r := []rune(text)
	return string(r[:snippetChars]) + "…"
}

// Sync indexes the memory files of workspace that changed since they were
// indexed (by size and modification time) and drops the ones that are gone,
// reading them as Find does.
func (ix *Indexer) Sync(ctx context.Context, idx Index, workspace string) error {
	_, _, err := ix.sync(ctx, idx, nil, workspace)
	return err
}

// filesOf returns the bridge the memory tools read a tool context's files
// through: its own file bridge when that is rooted at the workspace, so
// that the same rules apply to memory files as to every file a tool reads
// (links, hard links, concealed directories; see fsbridge.Local), else nil
// (see bridgeFor).
func filesOf(tc *tool.Context) fsbridge.Bridge {
	if tc.FS != nil && tc.FSRoot == tc.Workspace {
		return tc.FS
	}
	return nil
}

// bridgeFor returns files, or when it is nil a [fsbridge.Local] over the
// workspace with the default rules, and what to call when done with it.
func bridgeFor(files fsbridge.Bridge, workspace string) (fsbridge.Bridge, func(), error) {
	if files != nil {
		return files, func() {}, nil
	}
	l, err := fsbridge.OpenLocal(workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the workspace: %w", err)
	}
	return l, func() { l.Close() }, nil
}

// sync is Sync, reading the files through files (see bridgeFor), and
// returning the paths it indexed again or dropped, and the files left out
// (see Found.Skipped).
func (ix *Indexer) sync(ctx context.Context, idx Index, files fsbridge.Bridge, workspace string) (changed, skipped []string, err error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the workspace: %w", err)
	}
	defer root.Close()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var gen uint64
	watched := false
	if ix.Watch && !tool.Foreground(ctx) {
		gen, watched = ix.watchers.generation(workspace)
	}
	last := ix.scans[workspace]
	if last != nil && ix.Rescan > 0 && time.Since(last.at) < ix.Rescan && (!watched || last.watched && last.gen == gen) && unchanged(root, last.dirs) {
		return nil, last.skipped, nil
	}
	scans, _ := idx.(Scans)
	if last == nil && scans != nil && ix.Rescan > 0 {
		// A fresh process: the last full scan, whichever process made it.
		rec, err := recorded(ctx, scans, workspace)
		if err != nil {
			return nil, nil, err
		}
		// A watch started above sees what changes from now on, as after a
		// scan of this process.
		if rec != nil && !rec.At.IsZero() && unchanged(root, rec.Dirs) {
			ix.setScan(workspace, &scan{at: time.Now(), dirs: rec.Dirs, watched: watched, gen: gen, skipped: rec.Skipped})
			return nil, rec.Skipped, nil
		}
	}
	at := time.Now()
	onDisk, dirs, racy, err := list(root, at)
	if err != nil {
		return nil, nil, err
	}
	var indexed map[string]string
	if last != nil && last.stamps != nil {
		indexed = last.stamps
	} else if indexed, err = idx.Stamps(ctx, workspace); err != nil {
		return nil, nil, err
	}
	var changes []tool.MemoryFile
	var read fsbridge.Bridge // opened for the first file to read
	done := func() {}
	defer func() { done() }()
	for _, p := range slices.Sorted(maps.Keys(onDisk)) {
		stamp := onDisk[p]
		if stamp != racyStamp && indexed[p] == stamp {
			continue
		}
		if read == nil {
			if read, done, err = bridgeFor(files, workspace); err != nil {
				return nil, nil, err
			}
		}
		data, err := read.ReadFile(ctx, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			delete(onDisk, p) // removed since it was listed
			continue
		case errors.Is(err, fsbridge.ErrRefused):
			// Not indexed, and dropped if it was; read again at every
			// full scan.
			delete(onDisk, p)
			skipped = append(skipped, p+": "+err.Error())
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("reading %s: %w", p, err)
		}
		changes = append(changes, tool.MemoryFile{Path: p, Stamp: stamp, Chunks: Chunks(p, string(data))})
	}
	for p := range indexed {
		if _, ok := onDisk[p]; !ok {
			changes = append(changes, tool.MemoryFile{Path: p, Deleted: true})
		}
	}
	if err := idx.Update(ctx, workspace, changes); err != nil {
		delete(ix.scans, workspace)
		return nil, nil, err
	}
	if racy {
		at = time.Time{} // a directory changed too recently to trust its stamp: scan fully next time
	}
	if scans != nil {
		if err := record(ctx, scans, workspace, scanRecord{At: at, Dirs: dirs, Skipped: skipped}); err != nil {
			delete(ix.scans, workspace)
			return nil, nil, err
		}
	}
	ix.setScan(workspace, &scan{at: at, stamps: onDisk, dirs: dirs, watched: watched, gen: gen, skipped: skipped})
	changed = make([]string, len(changes))
	for i, c := range changes {
		changed[i] = c.Path
	}
	return changed, skipped, nil
}

func (ix *Indexer) setScan(workspace string, s *scan) {
	if ix.scans == nil {
		ix.scans = map[string]*scan{}
	}
	ix.scans[workspace] = s
}

// scanRecord is what an index that keeps scans (Scans) keeps of a full
// scan: when it listed the files (zero when a directory or MEMORY.md had
// changed too recently for its stamp to be trusted), the stamps of
// MEMORY.md and of the directories under memory/, and the files it left
// out.
type scanRecord struct {
	At      time.Time         `json:"at"`
	Dirs    map[string]string `json:"dirs"`
	Skipped []string          `json:"skipped,omitempty"`
}

// recorded returns the record of workspace's last full scan, nil when
// there is none or it cannot be decoded (then the search scans fully).
func recorded(ctx context.Context, scans Scans, workspace string) (*scanRecord, error) {
	data, err := scans.Scan(ctx, workspace)
	if err != nil || data == nil {
		return nil, err
	}
	var rec scanRecord
	if json.Unmarshal(data, &rec) != nil || rec.Dirs == nil {
		return nil, nil
	}
	return &rec, nil
}

func record(ctx context.Context, scans Scans, workspace string, rec scanRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return scans.PutScan(ctx, workspace, data)
}

// racyWindow is how close to a scan a modification time must be for the
// scan not to trust it. File systems stamp times from a coarse clock (a
// kernel tick; seconds on some), so a change in the same tick as the scan
// leaves size and time as the scan saw them — the "racy" case git's index
// guards against the same way.
const racyWindow = 2 * time.Second

// racyStamp stands for the stamp of a file modified within racyWindow of a
// scan; it never matches, so the next full scan reads the file again.
const racyStamp = "racy"

// isRacy reports whether fi was modified too close to a scan at at for its
// stamp to tell a later change apart.
func isRacy(fi fs.FileInfo, at time.Time) bool {
	return !fi.ModTime().Before(at.Add(-racyWindow))
}

// stamp tells versions of a file or directory apart.
func stamp(fi fs.FileInfo) string {
	return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
}

// unchanged reports whether MEMORY.md and the directories under memory/
// are as a scan found them (and memory/ has no new directory: its own
// stamp would have changed).
func unchanged(root *os.Root, dirs map[string]string) bool {
	if st := statStamp(root, "MEMORY.md"); st != dirs["MEMORY.md"] {
		return false
	}
	if st := statStamp(root, "memory"); st != dirs["memory"] {
		return false
	}
	for p, want := range dirs {
		if p != "MEMORY.md" && p != "memory" && statStamp(root, p) != want {
			return false
		}
	}
	return true
}

func statStamp(root *os.Root, p string) string {
	fi, err := root.Lstat(p)
	if err != nil {
		return ""
	}
	return stamp(fi)
}

// list returns the stamp of each memory file under root: MEMORY.md and the
// regular .md files below memory/ (links are not followed; files over
// MaxFileBytes are left out); and the stamps of MEMORY.md and of each
// directory under memory/. A file modified too close to the scan at at
// gets a stamp no file has, so the next full scan reads it again; racy
// reports whether MEMORY.md or a directory was.
func list(root *os.Root, at time.Time) (files, dirs map[string]string, racy bool, err error) {
	files, dirs = map[string]string{}, map[string]string{}
	fileStamp := func(fi fs.FileInfo) string {
		if isRacy(fi, at) {
			return racyStamp
		}
		return stamp(fi)
	}
	dirs["MEMORY.md"] = statStamp(root, "MEMORY.md")
	dirs["memory"] = ""
	if fi, err := root.Lstat("MEMORY.md"); err == nil {
		racy = isRacy(fi, at)
		if fi.Mode().IsRegular() && fi.Size() <= MaxFileBytes {
			files["MEMORY.md"] = fileStamp(fi)
		}
	}
	err = fs.WalkDir(root.FS(), "memory", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "memory" && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return nil // an unreadable entry is left out, not fatal
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case d.IsDir():
			dirs[p] = stamp(fi)
			racy = racy || isRacy(fi, at)
		case strings.HasSuffix(p, ".md") && d.Type().IsRegular() && fi.Size() <= MaxFileBytes:
			files[p] = fileStamp(fi)
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, fmt.Errorf("listing memory/: %w", err)
	}
	return files, dirs, racy, nil
}

// IsMemoryPath reports whether p (slash-separated, relative to the
// workspace) names a memory file.
func IsMemoryPath(p string) bool {
	if p == "MEMORY.md" {
		return true
	}
	return strings.HasPrefix(p, "memory/") && strings.HasSuffix(p, ".md") && path.Clean(p) == p && fs.ValidPath(p)
}

func getTool(tc *tool.Context) (*tool.Tool, error) {
	if tc == nil || tc.Workspace == "" {
		return nil, errors.New("no workspace: memory lives in the workspace's MEMORY.md and memory/")
	}
	t, err := tool.New("memory_get", getDescription, func(ctx context.Context, in getArgs, inv tool.Invocation) (tool.Result, error) {
		return get(ctx, filesOf(inv.Context), inv.Context.Workspace, in)
	})
	return &t, err
}

// get reads a memory file through files (see bridgeFor).
func get(ctx context.Context, files fsbridge.Bridge, workspace string, in getArgs) (tool.Result, error) {
	p := strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(in.Path), "\\", "/"), "./")
	if !IsMemoryPath(p) {
		return tool.Result{}, tool.InputErrorf("memory_get reads only memory files — MEMORY.md or memory/<name>.md, relative to the workspace — and %q is not one. Use read for other files.", in.Path)
	}
	b, done, err := bridgeFor(files, workspace)
	if err != nil {
		return tool.Result{}, err
	}
	defer done()
	data, err := b.ReadFile(ctx, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Result{}, tool.InputErrorf("There is no memory file %s. memory_search finds what is kept, with its path.", p)
	case errors.Is(err, fsbridge.ErrIsDir):
		return tool.Result{}, tool.InputErrorf("%s is not a regular file.", p)
	case err != nil:
		return tool.Result{}, tool.InputErrorf("Cannot read %s: %v.", p, err)
	}
	lines := splitLines(string(data))
	from := max(in.From, 1)
	if from > len(lines) && !(from == 1 && len(lines) == 0) {
		return tool.Result{}, tool.InputErrorf("Line %d is past the end: %s has %d lines.", from, p, len(lines))
	}
	to := len(lines)
	if in.Lines > 0 {
		to = min(to, from-1+in.Lines)
	}
	text := strings.Join(lines[min(from-1, len(lines)):to], "\n")
	res := tool.Text(text)
	if text == "" {
		res = tool.Text(fmt.Sprintf("[%s is empty.]", p))
	}
	res.Details = map[string]any{"path": p, "from": from, "to": to, "totalLines": len(lines)}
	return res, nil
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
