package tool

// The data the memory tools keep in an index (memory.Index, which the
// store implements).

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
