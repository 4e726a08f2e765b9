package store

import (
	"context"
	"time"
)

// SetClock makes the store read time from now; call it before using the
// store.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// SchemaVersion is the version of the schema this package creates.
var SchemaVersion = len(migrations)

// OpenAtVersion opens dsn applying only the first n migrations, as an
// older program would.
func OpenAtVersion(ctx context.Context, dsn string, n int) (*Store, error) {
	return open(ctx, dsn, migrations[:n])
}
