package tool

import "context"

// MemoryIndex is a full-text index of agents' memory files (MEMORY.md and
// memory/*.md in a workspace), kept per scope (a workspace). The memory
// tools keep it in step with the files and search it.
type MemoryIndex interface {
	// Stamps returns the stamp each indexed file of scope was indexed at,
	// by slash-separated path relative to the workspace.
	Stamps(ctx context.Context, scope string) (map[string]string, error)
	// Update applies files to scope's index at once: each file's chunks
	// replace what was indexed for its path, or the path is dropped when
	// Deleted is set.
	Update(ctx context.Context, scope string, files []MemoryFile) error
	// Search returns up to limit chunks of scope that match query's words,
	// best first.
	Search(ctx context.Context, scope, query string, limit int) ([]MemoryHit, error)
}

// MemoryFile is one memory file as the index keeps it.
type MemoryFile struct {
	// Path is slash-separated, relative to the workspace.
	Path string
	// Stamp tells this version of the file apart (size and modification
	// time); the index compares it, it does not interpret it.
	Stamp string
	// Chunks are the file's pieces, in order.
	Chunks []MemoryChunk
	// Deleted drops the file from the index.
	Deleted bool
}

// MemoryChunk is a piece of a memory file: a section or part of one.
type MemoryChunk struct {
	// StartLine and EndLine are the 1-based, inclusive lines it spans.
	StartLine, EndLine int
	// Title is what names the piece (the file's name and the heading above
	// it); it weighs more than Text in the ranking.
	Title string
	// Text is the piece's text.
	Text string
}

// MemoryHit is a chunk a search found.
type MemoryHit struct {
	Path               string
	StartLine, EndLine int
	Text               string
	// Score is higher for better matches; it compares hits of one search.
	Score float64
}
