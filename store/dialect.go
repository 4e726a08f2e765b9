package store

import (
	"database/sql"
	"strconv"
	"strings"
)

// dialect is what differs between SQLite and PostgreSQL; everything else is
// shared.
type dialect struct {
	name string
	// types turns the portable type words of the migrations into this
	// database's: {{id}} an auto-increment primary key, {{serial}} one
	// that never gives an id again (SQLite reuses the largest id after its
	// row is deleted), {{blob}} bytes.
	types *strings.Replacer
	// numbered says parameters are $1, $2, … rather than ?.
	numbered bool
	// readTx are the options of a read transaction.
	readTx *sql.TxOptions
	// lockMigrations, run first in each migration transaction, makes
	// migrations wait for each other across processes; "" when write
	// transactions already do.
	lockMigrations string
}

var sqliteDialect = dialect{
	name: "sqlite",
	types: strings.NewReplacer(
		"{{id}}", "INTEGER PRIMARY KEY",
		"{{serial}}", "INTEGER PRIMARY KEY AUTOINCREMENT",
		"{{blob}}", "BLOB",
		"{{memory_search}}", "CREATE VIRTUAL TABLE memory_fts USING fts5(title, body, tokenize = 'porter unicode61');",
	),
	readTx: &sql.TxOptions{ReadOnly: true},
}

var postgresDialect = dialect{
	name: "postgres",
	types: strings.NewReplacer(
		"{{id}}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
		"{{serial}}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
		"{{blob}}", "BYTEA",
		"{{memory_search}}", `ALTER TABLE memory_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS
	(setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')) STORED;
CREATE INDEX memory_chunks_tsv ON memory_chunks USING GIN (tsv);`,
	),
	numbered: true,
	readTx:   &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
	// The lock is taken per schema, so databases in different schemas
	// migrate independently.
	lockMigrations: "SELECT pg_advisory_xact_lock(hashtextextended('toolbelt/migrations/' || coalesce(current_schema(), ''), 0))",
}

// rebind writes query's ? parameters the way the database wants them.
// Queries must not contain a literal ?.
func (d dialect) rebind(query string) string {
	if !d.numbered || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
