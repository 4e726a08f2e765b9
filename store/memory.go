package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/toolbelt/toolbelt/tool"
)

// Memory is the full-text index of agents' memory files: BM25 over an FTS5
// table on SQLite, ranked tsvector search on PostgreSQL. Titles (file name
// and heading) weigh more than body text.
type Memory struct{ s *Store }

// Memory returns the store's memory index.
func (s *Store) Memory() *Memory { return &Memory{s: s} }

// Stamps returns the stamp of each file indexed for scope, by path.
func (m *Memory) Stamps(ctx context.Context, scope string) (map[string]string, error) {
	out := map[string]string{}
	err := m.s.Read(ctx, func(tx *Tx) error {
		rows, err := tx.Query(ctx, "SELECT path, stamp FROM memory_files WHERE scope = ?", scope)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p, st string
			if err := rows.Scan(&p, &st); err != nil {
				return err
			}
			out[p] = st
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading the memory index: %w", err)
	}
	return out, nil
}

// Update replaces the indexed chunks of each file, or drops the file when
// it is marked deleted, all in one transaction.
func (m *Memory) Update(ctx context.Context, scope string, files []tool.MemoryFile) error {
	if len(files) == 0 {
		return nil
	}
	now := m.s.now().UnixNano()
	sqlite := m.s.d.name == "sqlite"
	err := m.s.Write(ctx, func(tx *Tx) error {
		// The texts the files held: their vectors go when no chunk of the
		// scope holds the text any more.
		gone := map[string]bool{}
		for _, f := range files {
			rows, err := tx.Query(ctx, "SELECT hash FROM memory_chunks WHERE scope = ? AND path = ?", scope, f.Path)
			if err != nil {
				return err
			}
			for rows.Next() {
				var h string
				if err := rows.Scan(&h); err != nil {
					rows.Close()
					return err
				}
				gone[h] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if sqlite {
				if _, err := tx.Exec(ctx, "DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_chunks WHERE scope = ? AND path = ?)", scope, f.Path); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, "DELETE FROM memory_chunks WHERE scope = ? AND path = ?", scope, f.Path); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM memory_files WHERE scope = ? AND path = ?", scope, f.Path); err != nil {
				return err
			}
			if f.Deleted {
				continue
			}
			if _, err := tx.Exec(ctx, "INSERT INTO memory_files (scope, path, stamp, indexed_ns) VALUES (?, ?, ?, ?)", scope, f.Path, f.Stamp, now); err != nil {
				return err
			}
			for _, c := range f.Chunks {
				var id int64
				if err := tx.QueryRow(ctx, "INSERT INTO memory_chunks (scope, path, start_line, end_line, title, body, hash) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
					scope, f.Path, c.StartLine, c.EndLine, c.Title, c.Text, ChunkHash(c.Title, c.Text)).Scan(&id); err != nil {
					return err
				}
				if sqlite {
					if _, err := tx.Exec(ctx, "INSERT INTO memory_fts (rowid, title, body) VALUES (?, ?, ?)", id, c.Title, c.Text); err != nil {
						return err
					}
				}
			}
		}
		for h := range gone {
			if _, err := tx.Exec(ctx, `DELETE FROM memory_vectors WHERE scope = ? AND hash = ?
AND NOT EXISTS (SELECT 1 FROM memory_chunks WHERE scope = ? AND hash = ?)`, scope, h, scope, h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("updating the memory index: %w", err)
	}
	return nil
}

// Scan returns the record of scope's last full scan of its memory files
// (see tools/memory), nil when there is none.
func (m *Memory) Scan(ctx context.Context, scope string) ([]byte, error) {
	var record []byte
	err := m.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, "SELECT record FROM memory_scans WHERE scope = ?", scope).Scan(&record)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the memory scan: %w", err)
	}
	return record, nil
}

// PutScan keeps record as the record of scope's last full scan.
func (m *Memory) PutScan(ctx context.Context, scope string, record []byte) error {
	err := m.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO memory_scans (scope, record, updated_ns) VALUES (?, ?, ?)
ON CONFLICT (scope) DO UPDATE SET record = excluded.record, updated_ns = excluded.updated_ns`, scope, record, m.s.now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping the memory scan: %w", err)
	}
	return nil
}

// maxQueryWords bounds the words of a query that are searched for.
const maxQueryWords = 32

// Search returns up to limit chunks of scope matching any of query's words,
// best first. A query without words finds nothing.
func (m *Memory) Search(ctx context.Context, scope, query string, limit int) ([]tool.MemoryHit, error) {
	words := queryWords(query)
	if len(words) == 0 || limit <= 0 {
		return nil, nil
	}
	var q string
	var arg string
	if m.s.d.name == "sqlite" {
		// Each word quoted (it holds only letters and digits), any may
		// match; bm25 is lower for better matches, title weighing double.
		arg = `"` + strings.Join(words, `" OR "`) + `"`
		q = `SELECT c.id, c.path, c.start_line, c.end_line, c.body, -f.rank
FROM (SELECT rowid, rank FROM memory_fts WHERE memory_fts MATCH ? AND rank MATCH 'bm25(2.0, 1.0)') f
JOIN memory_chunks c ON c.id = f.rowid
WHERE c.scope = ?
ORDER BY f.rank LIMIT ?`
	} else {
		arg = strings.Join(words, " | ")
		q = `SELECT id, path, start_line, end_line, body, ts_rank(tsv, to_tsquery('english', ?)) AS score
FROM memory_chunks
WHERE tsv @@ to_tsquery('english', ?) AND scope = ?
ORDER BY score DESC, id LIMIT ?`
	}
	args := []any{arg, scope, limit}
	if m.s.d.name != "sqlite" {
		args = []any{arg, arg, scope, limit}
	}
	hits, err := readAll(ctx, m.s, func(row scanner) (h tool.MemoryHit, err error) {
		err = row.Scan(&h.ID, &h.Path, &h.StartLine, &h.EndLine, &h.Text, &h.Score)
		return h, err
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("searching the memory index: %w", err)
	}
	return hits, nil
}

// queryWords returns the distinct lower-case words of query (runs of
// letters and digits), without the commonest English words.
func queryWords(query string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if seen[w] || stopWords[w] || len(out) == maxQueryWords {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by did do does for from had has have how i in is it its
me my of on or our so that the their them there they this to was we were what when where which who why will with you your`) {
		stopWords[w] = true
	}
}
