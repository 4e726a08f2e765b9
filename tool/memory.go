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
	// ID identifies the chunk in the index until its file is indexed again.
	ID                 int64
	Path               string
	StartLine, EndLine int
	Text               string
	// Score is higher for better matches; it compares hits of one search.
	Score float64
}

// MemoryVectors keeps embedding vectors of the chunks of a MemoryIndex, for
// hybrid search: per scope and model, by the hash of a chunk's text, so
// that unchanged text is embedded once.
type MemoryVectors interface {
	// Unembedded returns up to limit distinct chunk texts of scope that
	// have no vector of model.
	Unembedded(ctx context.Context, scope, model string, limit int) ([]MemoryText, error)
	// PutVectors keeps vectors of model for chunk texts of scope.
	PutVectors(ctx context.Context, scope, model string, vs []MemoryVector) error
	// DropVectors removes scope's vectors of every model but keep.
	DropVectors(ctx context.Context, scope, keep string) error
	// Vectors returns the chunks of scope that have a vector of model: all
	// of them when paths and hashes are nil, else those of the files named
	// and those whose text has one of the hashes.
	Vectors(ctx context.Context, scope, model string, paths, hashes []string) ([]MemoryChunkVector, error)
	// Hits returns the chunks of scope with these ids that still exist.
	Hits(ctx context.Context, scope string, ids []int64) ([]MemoryHit, error)
}

// MemoryText is a chunk text to embed.
type MemoryText struct {
	// Hash identifies the text (title and body).
	Hash string
	// Path is a file that holds it.
	Path        string
	Title, Text string
}

// MemoryVector is the vector of a chunk text.
type MemoryVector struct {
	Hash string
	Vec  []float32
}

// MemoryChunkVector is a chunk's vector.
type MemoryChunkVector struct {
	ID   int64
	Path string
	Vec  []float32
}
