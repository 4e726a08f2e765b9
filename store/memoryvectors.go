package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// ChunkHash identifies a chunk's text (its title and body) for the
// vectors kept of it: a chunk whose text did not change keeps its vector
// when its file is indexed again.
func ChunkHash(title, body string) string {
	h := sha256.New()
	h.Write([]byte(title))
	h.Write([]byte{0})
	h.Write([]byte(body))
	return hex.EncodeToString(h.Sum(nil))
}

// Unembedded returns up to limit distinct chunk texts of scope that have no
// vector of model yet.
func (m *Memory) Unembedded(ctx context.Context, scope, model string, limit int) ([]tool.MemoryText, error) {
	var out []tool.MemoryText
	err := m.s.Read(ctx, func(tx *Tx) error {
		// Not grouped by hash in SQL (that reads every chunk each time):
		// the same text in several chunks is dropped here.
		rows, err := tx.Query(ctx, `SELECT c.hash, c.path, c.title, c.body FROM memory_chunks c
WHERE c.scope = ? AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.scope = c.scope AND v.model = ? AND v.hash = c.hash)
LIMIT ?`, scope, model, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		seen := map[string]bool{}
		for rows.Next() {
			var t tool.MemoryText
			if err := rows.Scan(&t.Hash, &t.Path, &t.Title, &t.Text); err != nil {
				return err
			}
			if !seen[t.Hash] {
				seen[t.Hash] = true
				out = append(out, t)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading the memory index: %w", err)
	}
	return out, nil
}

// PutVectors keeps the vectors of model for the chunk texts of scope, by
// hash; a vector already kept is replaced.
func (m *Memory) PutVectors(ctx context.Context, scope, model string, vs []tool.MemoryVector) error {
	if len(vs) == 0 {
		return nil
	}
	now := m.s.now().UnixNano()
	err := m.s.Write(ctx, func(tx *Tx) error {
		for _, v := range vs {
			if len(v.Vec) == 0 {
				return fmt.Errorf("an empty vector for %s", v.Hash)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO memory_vectors (scope, model, hash, dims, vec, created_ns) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (scope, model, hash) DO UPDATE SET dims = excluded.dims, vec = excluded.vec, created_ns = excluded.created_ns`,
				scope, model, v.Hash, len(v.Vec), EncodeVector(v.Vec), now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing memory vectors: %w", err)
	}
	return nil
}

// DropVectors removes the vectors of scope made by any model but keep
// (those of a model no longer configured).
func (m *Memory) DropVectors(ctx context.Context, scope, keep string) error {
	err := m.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM memory_vectors WHERE scope = ? AND model <> ?", scope, keep)
		return err
	})
	if err != nil {
		return fmt.Errorf("dropping memory vectors: %w", err)
	}
	return nil
}

// maxInList bounds the parameters of one IN list.
const maxInList = 500

// Vectors returns the chunks of scope that have a vector of model, with
// it: all of them when paths and hashes are nil, else those of the files
// named and those whose text has one of the hashes.
func (m *Memory) Vectors(ctx context.Context, scope, model string, paths, hashes []string) ([]tool.MemoryChunkVector, error) {
	const q = `SELECT c.id, c.path, v.vec FROM memory_chunks c
JOIN memory_vectors v ON v.scope = c.scope AND v.model = ? AND v.hash = c.hash
WHERE c.scope = ?`
	var out []tool.MemoryChunkVector
	err := m.s.Read(ctx, func(tx *Tx) error {
		run := func(query string, args ...any) error {
			rows, err := tx.Query(ctx, query, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var cv tool.MemoryChunkVector
				var raw []byte
				if err := rows.Scan(&cv.ID, &cv.Path, &raw); err != nil {
					return err
				}
				if cv.Vec, err = DecodeVector(raw); err != nil {
					return fmt.Errorf("chunk %d: %w", cv.ID, err)
				}
				out = append(out, cv)
			}
			return rows.Err()
		}
		if paths == nil && hashes == nil {
			return run(q, model, scope)
		}
		for _, in := range []struct {
			column string
			values []string
		}{{"c.path", paths}, {"c.hash", hashes}} {
			for vs := in.values; len(vs) > 0; {
				n := min(len(vs), maxInList)
				args := []any{model, scope}
				for _, v := range vs[:n] {
					args = append(args, v)
				}
				if err := run(q+" AND "+in.column+" IN ("+placeholders(n)+")", args...); err != nil {
					return err
				}
				vs = vs[n:]
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading memory vectors: %w", err)
	}
	return out, nil
}

// Hits returns the chunks of scope with the given ids (those that still
// exist), with a zero score.
func (m *Memory) Hits(ctx context.Context, scope string, ids []int64) ([]tool.MemoryHit, error) {
	var out []tool.MemoryHit
	err := m.s.Read(ctx, func(tx *Tx) error {
		for len(ids) > 0 {
			n := min(len(ids), maxInList)
			args := []any{scope}
			for _, id := range ids[:n] {
				args = append(args, id)
			}
			rows, err := tx.Query(ctx, "SELECT id, path, start_line, end_line, body FROM memory_chunks WHERE scope = ? AND id IN ("+placeholders(n)+")", args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var h tool.MemoryHit
				if err := rows.Scan(&h.ID, &h.Path, &h.StartLine, &h.EndLine, &h.Text); err != nil {
					rows.Close()
					return err
				}
				out = append(out, h)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the memory index: %w", err)
	}
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// EncodeVector writes v as little-endian float32s, as vectors are stored.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reads a vector EncodeVector wrote.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("a stored vector of %d bytes is not a whole number of float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
