package memory

import (
	"context"

	"github.com/toolbelt/toolbelt/tool"
)

// Index is a full-text index of agents' memory files (MEMORY.md and
// memory/*.md in a workspace), kept per scope (a workspace). The memory
// tools keep it in step with the files and search it.
type Index interface {
	// Stamps returns the stamp each indexed file of scope was indexed at,
	// by slash-separated path relative to the workspace.
	Stamps(ctx context.Context, scope string) (map[string]string, error)
	// Update applies files to scope's index at once: each file's chunks
	// replace what was indexed for its path, or the path is dropped when
	// Deleted is set.
	Update(ctx context.Context, scope string, files []tool.MemoryFile) error
	// Search returns up to limit chunks of scope that match query's words,
	// best first.
	Search(ctx context.Context, scope, query string, limit int) ([]tool.MemoryHit, error)
}

// Scans is implemented by an Index that keeps, per scope, the record of
// the last full scan of its memory files (opaque to it), so that a fresh
// process trusts that scan as the process that made it would (see
// Indexer).
type Scans interface {
	// Scan returns scope's record, nil when there is none.
	Scan(ctx context.Context, scope string) ([]byte, error)
	// PutScan replaces scope's record.
	PutScan(ctx context.Context, scope string, record []byte) error
}

// Vectors keeps embedding vectors of the chunks of an Index, for
// hybrid search: per scope and model, by the hash of a chunk's text, so
// that unchanged text is embedded once.
type Vectors interface {
	// Unembedded returns up to limit distinct chunk texts of scope that
	// have no vector of model.
	Unembedded(ctx context.Context, scope, model string, limit int) ([]tool.MemoryText, error)
	// PutVectors keeps vectors of model for chunk texts of scope.
	PutVectors(ctx context.Context, scope, model string, vs []tool.MemoryVector) error
	// DropVectors removes scope's vectors of every model but keep.
	DropVectors(ctx context.Context, scope, keep string) error
	// Vectors returns the chunks of scope that have a vector of model: all
	// of them when paths and hashes are nil, else those of the files named
	// and those whose text has one of the hashes.
	Vectors(ctx context.Context, scope, model string, paths, hashes []string) ([]tool.MemoryChunkVector, error)
	// Hits returns the chunks of scope with these ids that still exist.
	Hits(ctx context.Context, scope string, ids []int64) ([]tool.MemoryHit, error)
}

// IndexService is the key of the index a tool context carries for the
// memory tools (the store's, store.Memory); without one they are
// unavailable. An index that is also Vectors serves hybrid search.
var IndexService = tool.NewService[Index]()
