package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/store"
)

// Environment variables that say where state lives.
const (
	envData        = "TOOLBELT_DATA"         // the SQLite database's directory
	envDatabaseURL = "TOOLBELT_DATABASE_URL" // a postgres:// URL instead
)

// storeDSN returns the database that holds state (toolbelt.Options.Location)
// as the flags and the environment say: SQLite in the --data directory; the
// PostgreSQL database of $TOOLBELT_DATABASE_URL; SQLite in $TOOLBELT_DATA;
// then the config's database or data directory, or the user's data
// directory. dir is the SQLite database's directory, "" for PostgreSQL.
func (e *env) storeDSN(getenv func(string) string) (dsn, dir string, err error) {
	o, err := e.stateOptions(getenv)
	if err != nil {
		return "", "", err
	}
	dsn, dir, err = o.Location()
	if errors.Is(err, toolbelt.ErrNotPostgres) {
		return "", "", fmt.Errorf("%s must be a postgres:// URL; for SQLite give the directory with --data or %s", envDatabaseURL, envData)
	}
	return dsn, dir, err
}

// stateOptions returns the root's options that say where state lives:
// the config, and the data directory or database URL the flags and the
// environment give.
func (e *env) stateOptions(getenv func(string) string) (toolbelt.Options, error) {
	cfg, err := e.config()
	if err != nil {
		return toolbelt.Options{}, err
	}
	o := toolbelt.Options{Config: cfg, DataDir: e.dataDir}
	switch {
	case o.DataDir != "":
	case getenv(envDatabaseURL) != "":
		o.DatabaseURL = getenv(envDatabaseURL)
	default:
		o.DataDir = getenv(envData)
	}
	return o, nil
}

// overridden returns, when a data directory given with --data or
// TOOLBELT_DATA puts state in SQLite although a PostgreSQL database is
// configured too, that database (its password hidden) and who named each.
func (e *env) overridden(getenv func(string) string) (database, from, by string) {
	cfg, err := e.config()
	if err != nil {
		return "", "", ""
	}
	inFile := "database: in " + cfg.Path
	if cfg.Path == "" {
		inFile = "the configured database:"
	}
	switch {
	case e.dataDir != "" && getenv(envDatabaseURL) != "":
		return redacted(getenv(envDatabaseURL)), envDatabaseURL, "--data"
	case e.dataDir != "" && cfg.Database != "":
		return redacted(cfg.Database), inFile, "--data"
	case e.dataDir == "" && getenv(envDatabaseURL) == "" && getenv(envData) != "" && cfg.Database != "":
		return redacted(cfg.Database), inFile, envData
	}
	return "", "", ""
}

// describeStore says where the run keeps its state, for people: the SQLite
// database's path, or the PostgreSQL URL without its password.
func (e *env) describeStore() (string, error) {
	dsn, dir, err := e.storeDSN(os.Getenv)
	if err != nil {
		return "", err
	}
	if dir == "" {
		return redacted(dsn) + " (PostgreSQL)", nil
	}
	return dsn + " (SQLite)", nil
}

// openStore opens the store that holds state. workspace, when not "", is
// the directory the run's tools work in. A data directory inside it (the
// default one when the workspace is the home directory) is fine: the file
// bridge conceals it from the tools (see concealedData). The workspace
// itself as the data directory is refused: it cannot be concealed.
func (e *env) openStore(ctx context.Context, workspace string) (*store.Store, error) {
	dsn, dir, err := e.storeDSN(os.Getenv)
	if err != nil {
		return nil, err
	}
	if err := checkOutside(dir, workspace); err != nil {
		return nil, err
	}
	if database, from, by := e.overridden(os.Getenv); database != "" {
		e.log.Warn(fmt.Sprintf("%s overrides %s: state is kept in SQLite in %s, not in %s", by, from, dsn, database))
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	var opts []store.Option
	if cfg.Audit.Sync == "always" {
		opts = append(opts, store.SyncCommits())
	}
	if e.openLater {
		return store.OpenInBackground(dsn, append(opts, store.OpenAfter(e.started))...)
	}
	st, err := store.Open(ctx, dsn, opts...)
	if err != nil && dir != "" {
		if free, ok := freeSpace(dir); ok && free < 1<<20 {
			return nil, fmt.Errorf("%w (the file system of the data directory %s has %d KiB free: free some space there, then try again)", err, dir, free>>10)
		}
	}
	return st, err
}

// freeSpace returns the bytes free for this user on the file system of
// dir, when it can tell.
func freeSpace(dir string) (uint64, bool) {
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) != nil {
		return 0, false
	}
	return uint64(fs.Bavail) * uint64(fs.Bsize), true
}

// checkOutside refuses a data directory that is the workspace itself: one
// inside the workspace is hidden from the tools (see concealedData), but the
// workspace as a whole cannot be.
func checkOutside(dir, workspace string) error {
	if dir != "" && workspace != "" && realpath.Within(dir, workspace) && realpath.Within(workspace, dir) {
		return fmt.Errorf("the data directory %s is the workspace itself, where tools work, so it cannot be hidden from them: keep state elsewhere (--data DIR or %s), or work in another directory", dir, envData)
	}
	return nil
}

// concealedData returns the data directory, as given and with its links
// resolved, when it lies inside the workspace: the file bridge hides it, so
// tools can neither read nor change the audit log, the undo journal or the
// approvals kept there.
func (e *env) concealedData(workspace string) []string {
	_, dir, err := e.storeDSN(os.Getenv)
	if err != nil || dir == "" || !realpath.Within(dir, workspace) {
		return nil
	}
	if real := realpath.Resolve(dir); real != dir {
		return []string{dir, real}
	}
	return []string{dir}
}
