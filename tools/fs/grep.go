package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/tool"
)

// Limits of grep.
const (
	grepMatches    = 100
	grepMaxMatches = 1000
	grepLineChars  = 500
	grepOutput     = 100 << 10
	// grepBlock is how much of a file is searched at once; a line longer
	// than this is searched in its first grepBlock bytes only.
	grepBlock = 256 << 10
)

type grepArgs struct {
	Pattern    string `json:"pattern" jsonschema:"What to search for: a regular expression (Go RE2 syntax: no lookaround or backreferences), or plain text when literal is true." minLength:"1"`
	Path       string `json:"path,omitempty" jsonschema:"The file or directory to search, relative to the workspace root (default \".\", the root)." default:"."`
	Glob       string `json:"glob,omitempty" jsonschema:"Only search files matching this glob: without '/' it matches file names (*.go, *.{ts,tsx}); with '/' paths relative to path (src/**/*.py)."`
	Literal    bool   `json:"literal,omitempty" jsonschema:"Search for pattern as plain text, not as a regular expression."`
	IgnoreCase bool   `json:"ignoreCase,omitempty" jsonschema:"Match upper and lower case alike."`
	Context    int    `json:"context,omitempty" jsonschema:"Lines of context to show before and after each match (default 0)." minimum:"0" maximum:"10"`
	Limit      int    `json:"limit,omitempty" jsonschema:"The most matching lines to return (default 100, at most 1000)." minimum:"1" maximum:"1000" default:"100"`
}

const grepDescription = `Search the contents of files in the workspace for a regular expression or, with literal, plain text. Results are "path:line:text" for each matching line (and "path-line-text" for context lines, with "--" between separate groups), paths relative to the workspace root, files in sorted order. Binary files, files excluded by .gitignore and the .git directory are skipped. Lines longer than 500 characters are cut. At most 100 matching lines are returned unless you set limit; a notice says when results were cut.`

// grepDetails are the details of a grep result.
type grepDetails struct {
	Matches       int  `json:"matches"`
	Files         int  `json:"files"`
	Limited       bool `json:"limited"`
	BinarySkipped int  `json:"binarySkipped,omitempty"`
	Unreadable    int  `json:"unreadable,omitempty"`
	// HardLinked are the files skipped because they have several hard
	// links (see fsbridge.ErrHardLinked).
	HardLinked []string `json:"hardLinked,omitempty"`
}

func (s *set) grepTool() (tool.Tool, error) {
	return tool.New("grep", grepDescription, func(ctx context.Context, in grepArgs, inv tool.Invocation) (tool.Result, error) {
		b, err := bridge(inv)
		if err != nil {
			return tool.Result{}, err
		}
		m, err := newMatcher(in.Pattern, in.Literal, in.IgnoreCase)
		if err != nil {
			return tool.Result{}, err
		}
		var glob *globMatcher
		if in.Glob != "" {
			g, ok := newGlob(in.Glob)
			if !ok {
				return tool.Result{}, tool.InputErrorf("The glob %q is not valid. Use *, ?, [abc], {a,b} and ** (for any number of directories).", in.Glob)
			}
			glob = &g
		}
		st, err := b.Stat(ctx, in.Path)
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		start, err := b.Resolve(ctx, in.Path)
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		g := &grep{b: b, m: m, context: in.Context, limit: in.Limit}
		if st.IsDir() {
			err = g.tree(ctx, start, glob)
		} else {
			err = g.one(ctx, start)
		}
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		return g.result(in.Pattern, start), nil
	})
}

// matcher finds lines that match.
type matcher struct {
	lit   []byte         // a case-sensitive literal, searched with bytes.Index
	line  *regexp.Regexp // decides whether one line matches
	block *regexp.Regexp // finds candidate lines in a block of lines; nil to try each line
}

func newMatcher(pattern string, literal, ignoreCase bool) (*matcher, error) {
	if literal && !ignoreCase {
		return &matcher{lit: []byte(pattern)}, nil
	}
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	line, err := regexp.Compile(expr)
	if err != nil {
		return nil, tool.InputErrorf("The pattern %q is not a valid regular expression: %v. Fix it (Go RE2 syntax), or set literal to true to search for the text as it is.", pattern, err)
	}
	m := &matcher{line: line}
	// In multi-line mode, ^ and $ match at line breaks, so any line that
	// matches also matches inside the block; \A and \z would not.
	if !strings.Contains(pattern, `\A`) && !strings.Contains(pattern, `\z`) {
		m.block = regexp.MustCompile("(?m:" + expr + ")")
	}
	if line.MatchString("") {
		m.block = nil // matches everywhere: no candidates to find
	}
	return m, nil
}

// next returns the offset in b of a byte on a line that may match, or -1.
func (m *matcher) next(b []byte) int {
	switch {
	case m.lit != nil:
		return bytes.Index(b, m.lit)
	case m.block != nil:
		if loc := m.block.FindIndex(b); loc != nil {
			return loc[0]
		}
		return -1
	}
	if len(b) == 0 {
		return -1
	}
	return 0
}

// matches reports whether a line matches.
func (m *matcher) matches(line []byte) bool {
	if m.lit != nil {
		return bytes.Contains(line, m.lit)
	}
	return m.line.Match(line)
}

// grep is one search.
type grep struct {
	b       fsbridge.Bridge
	m       *matcher
	context int
	limit   int

	out           strings.Builder
	matches       int
	files         int
	limited       bool
	outputCut     bool
	binarySkipped int
	unreadable    int
	hardLinked    []string
}

// hit is a line to print: a match or context.
type hit struct {
	line  int
	text  string
	match bool
}

// fileResult is what searching one file found.
type fileResult struct {
	path   string
	hits   []hit
	binary bool
	err    error
}

// one searches a single file.
func (g *grep) one(ctx context.Context, p string) error {
	r := searchFile(ctx, g.b, g.m, p, nil, g.context, g.limit+1, make([]byte, grepBlock))
	if r.err != nil && !errors.Is(r.err, context.Canceled) && !errors.Is(r.err, context.DeadlineExceeded) {
		return r.err
	}
	if r.binary {
		return tool.InputErrorf("%s is a binary file; grep searches text files only.", p)
	}
	g.add(r)
	return nil
}

// grepBatchSize is how many files the walk hands over to a searching goroutine
// at once: one hand-over per file cost more CPU in the scheduler (futex and
// spinning) than the search of a small file.
const grepBatchSize = 16

// grepInline is how many batches the walk searches itself before it hands
// any over: a small tree is searched by one goroutine, without hand-overs.
const grepInline = 128

// grepMaxOpen bounds the files a grep holds open in the batches in flight
// (besides the batch being filled), however many processors there are.
const grepMaxOpen = 256

// grepBatch is files handed over at once, and what searching them found.
type grepBatch struct {
	i       int
	jobs    []grepJob
	results []fileResult
}

// grepJob is a file to search.
type grepJob struct {
	path string
	f    iofs.File // opened by the walk, cheaply; nil to open by path
	err  error     // why the walk could not open it
}

// closeFiles closes the files of jobs never searched.
func closeFiles(jobs []grepJob) {
	for _, j := range jobs {
		if j.f != nil {
			j.f.Close()
		}
	}
}

// tree searches the files below start and adds their results in path order,
// until the limit is reached. The walk opens the files, in batches; it
// searches the first grepInline batches itself and hands the rest over to
// searching goroutines, started as the walk outruns them (up to GOMAXPROCS).
func (g *grep) tree(ctx context.Context, start string, glob *globMatcher) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	maxWorkers := runtime.GOMAXPROCS(0)
	batches := make(chan *grepBatch)
	results := make(chan *grepBatch)
	// Results wait in order; tokens bound the batches in flight.
	tokens := make(chan struct{}, max(2, min(2*maxWorkers, grepMaxOpen/grepBatchSize)))
	var wg sync.WaitGroup
	search := func(b *grepBatch, buf []byte) {
		b.results = make([]fileResult, len(b.jobs))
		for k, j := range b.jobs {
			b.results[k] = fileResult{path: j.path, err: j.err}
			if j.err == nil {
				b.results[k] = searchFile(ctx, g.b, g.m, j.path, j.f, g.context, g.limit+1, buf)
			}
		}
		select {
		case results <- b:
		case <-ctx.Done():
		}
	}
	worker := func() {
		buf := make([]byte, grepBlock)
		for b := range batches {
			search(b, buf)
		}
	}
	var walkErr error
	wg.Go(func() {
		defer close(batches)
		workers := 0
		cur := &grepBatch{}
		var buf []byte // the walk's own, for the batches it searches
		send := func() error {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				closeFiles(cur.jobs)
				return ctx.Err()
			}
			if cur.i < grepInline {
				if buf == nil {
					buf = make([]byte, grepBlock)
				}
				search(cur, buf)
				cur = &grepBatch{i: cur.i + 1}
				return ctx.Err()
			}
			select {
			case batches <- cur:
			default:
				if workers < maxWorkers {
					workers++
					wg.Go(worker)
				}
				select {
				case batches <- cur:
				case <-ctx.Done():
					closeFiles(cur.jobs)
					return ctx.Err()
				}
			}
			cur = &grepBatch{i: cur.i + 1}
			return nil
		}
		walkErr = walk(ctx, g.b, start, newIgnorer(g.b), func(p string, d iofs.DirEntry) error {
			if !d.Type().IsRegular() || glob != nil && !glob.match(relTo(start, p)) {
				return nil
			}
			j := grepJob{path: p}
			if o, ok := d.(fsbridge.Opener); ok {
				j.f, j.err = o.Open()
			}
			cur.jobs = append(cur.jobs, j)
			if len(cur.jobs) < grepBatchSize {
				return nil
			}
			return send()
		})
		if walkErr != nil {
			closeFiles(cur.jobs)
		} else if len(cur.jobs) > 0 {
			walkErr = send()
		}
	})
	go func() {
		wg.Wait()
		close(results)
	}()
	pending := map[int]*grepBatch{}
	next := 0
	for b := range results {
		pending[b.i] = b
		for {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-tokens
			for _, r := range b.results {
				if !g.full() {
					g.add(r)
				}
			}
			if g.full() {
				cancel()
			}
		}
	}
	if g.full() {
		return nil
	}
	if walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return walkErr
	}
	return ctx.Err()
}

// full reports whether the search has found enough.
func (g *grep) full() bool { return g.limited || g.outputCut }

// add prints one file's hits, up to the limit.
func (g *grep) add(r fileResult) {
	switch {
	case r.binary:
		g.binarySkipped++
		return
	case errors.Is(r.err, fsbridge.ErrHardLinked):
		g.hardLinked = append(g.hardLinked, r.path)
		return
	case r.err != nil:
		g.unreadable++
		return
	case len(r.hits) == 0:
		return
	}
	g.files++
	var b strings.Builder
	last := 0
	for _, h := range r.hits {
		if h.match && g.matches == g.limit {
			g.limited = true
			break
		}
		if last > 0 && h.line > last+1 || last == 0 && g.out.Len() > 0 {
			if g.context > 0 {
				b.WriteString("--\n")
			}
		}
		sep := byte('-')
		if h.match {
			sep = ':'
			g.matches++
		}
		fmt.Fprintf(&b, "%s%c%d%c%s\n", r.path, sep, h.line, sep, h.text)
		last = h.line
	}
	if g.out.Len()+b.Len() > grepOutput {
		g.outputCut = true
		return
	}
	g.out.WriteString(b.String())
}

// result returns what the model sees.
func (g *grep) result(pattern, start string) tool.Result {
	var b strings.Builder
	if g.matches == 0 {
		fmt.Fprintf(&b, "No matches for %q in %s.", pattern, place(start))
	} else {
		b.WriteString(strings.TrimSuffix(g.out.String(), "\n"))
	}
	switch {
	case g.limited:
		fmt.Fprintf(&b, "\n\n[Stopped at %d matching lines (the limit). Narrow the pattern, path or glob, or raise limit (at most %d), to see more.]", g.limit, grepMaxMatches)
	case g.outputCut:
		fmt.Fprintf(&b, "\n\n[Stopped after %d matching lines: the output reached %s. Narrow the pattern, path or glob, or use less context.]", g.matches, sizeText(grepOutput))
	}
	var notes []string
	if g.binarySkipped > 0 {
		notes = append(notes, plural(g.binarySkipped, "binary file")+" skipped")
	}
	if g.unreadable > 0 {
		notes = append(notes, plural(g.unreadable, "file")+" could not be read")
	}
	if n := len(g.hardLinked); n > 0 {
		names := strings.Join(g.hardLinked[:min(n, 5)], ", ")
		if n > 5 {
			names += ", …"
		}
		notes = append(notes, fmt.Sprintf("%s with several hard links skipped, since another link may be a file outside the workspace: %s", plural(n, "file"), names))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\n(%s)", strings.Join(notes, "; "))
	}
	res := tool.Text(b.String())
	res.Details = grepDetails{Matches: g.matches, Files: g.files, Limited: g.full(), BinarySkipped: g.binarySkipped, Unreadable: g.unreadable, HardLinked: g.hardLinked}
	return res
}

// searchFile searches the file at p (f, when it is open already) block by block, with buf as its buffer,
// and returns at most limit matching lines with their context. (Searches ask
// for one more than they show, to know whether there were more.) A file with a
// NUL byte is binary, and its hits are dropped.
func searchFile(ctx context.Context, b fsbridge.Bridge, m *matcher, p string, f iofs.File, context, limit int, buf []byte) fileResult {
	res := fileResult{path: p}
	if f == nil {
		var err error
		if f, err = b.Open(ctx, p); err != nil {
			res.err = err
			return res
		}
	}
	defer f.Close()
	s := scanner{m: m, context: context, limit: limit}
	held := 0
	skipping := false // inside a line longer than the buffer
	for !s.done() {
		n, err := io.ReadFull(f, buf[held:])
		held += n
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			res.err = err
			return res
		}
		if cerr := ctx.Err(); cerr != nil {
			res.err = cerr
			return res
		}
		data := buf[:held]
		if bytes.IndexByte(data, 0) >= 0 {
			res.binary = true
			return res
		}
		if skipping {
			// Drop the rest of the long line.
			cut := bytes.IndexByte(data, '\n') + 1
			if cut == 0 {
				if held = 0; eof {
					break
				}
				continue
			}
			held = copy(buf, data[cut:])
			skipping = false
			continue
		}
		if eof {
			s.block(data)
			break
		}
		end := bytes.LastIndexByte(data, '\n') + 1
		if end == 0 {
			// One line fills the buffer: search its start, skip the rest.
			s.block(data)
			skipping, held = true, 0
			continue
		}
		s.block(data[:end])
		held = copy(buf, data[end:])
	}
	res.hits = s.hits
	return res
}

// scanner finds matching lines block by block, keeping the lines before the
// current position that context may need.
type scanner struct {
	m       *matcher
	context int
	limit   int

	line    int   // lines before the current position
	before  []hit // the last context lines not yet printed
	after   int   // context lines still to print after a match
	printed int   // the last line printed
	hits    []hit
	matches int
}

func (s *scanner) done() bool { return s.matches >= s.limit && s.after == 0 }

// block scans complete lines (data ends with '\n', or is the file's end).
func (s *scanner) block(data []byte) {
	for pos := 0; pos < len(data) && !s.done(); {
		if s.after == 0 {
			i := s.m.next(data[pos:])
			if i < 0 {
				s.skip(data[pos:])
				return
			}
			ls := bytes.LastIndexByte(data[pos:pos+i], '\n') + 1
			s.skip(data[pos : pos+ls])
			pos += ls
		}
		le := bytes.IndexByte(data[pos:], '\n')
		next := pos + le + 1
		if le < 0 {
			le, next = len(data)-pos, len(data)
		}
		line := bytes.TrimSuffix(data[pos:pos+le], []byte("\r"))
		s.line++
		switch {
		case s.matches < s.limit && s.m.matches(line):
			for _, h := range s.before {
				if h.line > s.printed {
					s.hits = append(s.hits, h)
				}
			}
			s.before = s.before[:0]
			s.hits = append(s.hits, hit{s.line, textclip.Clip(string(line), grepLineChars), true})
			s.printed, s.after = s.line, s.context
			s.matches++
		case s.after > 0:
			s.hits = append(s.hits, hit{s.line, textclip.Clip(string(line), grepLineChars), false})
			s.printed = s.line
			s.after--
		default:
			s.remember(line)
		}
		pos = next
	}
}

// skip passes over lines without matches, keeping the last context ones.
func (s *scanner) skip(data []byte) {
	if len(data) == 0 {
		return
	}
	// The last s.context lines start at tail; the lines before it are only
	// counted.
	tail, end := 0, len(data)
	if data[end-1] == '\n' {
		end--
	}
	for range s.context {
		j := bytes.LastIndexByte(data[:end], '\n')
		if tail = j + 1; j < 0 {
			break
		}
		end = j
	}
	if s.context == 0 {
		s.line += bytes.Count(data, []byte("\n"))
		if data[len(data)-1] != '\n' {
			s.line++
		}
		return
	}
	s.line += bytes.Count(data[:tail], []byte("\n"))
	for rest := data[tail:]; len(rest) > 0; {
		le := bytes.IndexByte(rest, '\n')
		next := le + 1
		if le < 0 {
			le, next = len(rest), len(rest)
		}
		s.line++
		s.remember(bytes.TrimSuffix(rest[:le], []byte("\r")))
		rest = rest[next:]
	}
}

// remember keeps a line that context before a later match may need.
func (s *scanner) remember(line []byte) {
	if s.context == 0 {
		return
	}
	if len(s.before) == s.context {
		s.before = append(s.before[:0], s.before[1:]...)
	}
	s.before = append(s.before, hit{s.line, textclip.Clip(string(line), grepLineChars), false})
}
