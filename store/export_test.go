package store

import (
	"context"
	"time"
)

// WithOutputsClock returns o with its clock set to now.
func WithOutputsClock(o OutputOptions, now func() time.Time) OutputOptions {
	o.now = now
	return o
}

// WithJournalClock returns o with its clock set to now.
func WithJournalClock(o JournalOptions, now func() time.Time) JournalOptions {
	o.now = now
	return o
}

// SchemaVersion is the version of the schema this package creates.
var SchemaVersion = len(migrations)

// OpenAtVersion opens dsn applying only the first n migrations, as an
// older program would.
func OpenAtVersion(ctx context.Context, dsn string, n int) (*Store, error) {
	return open(ctx, dsn, migrations[:n])
}
