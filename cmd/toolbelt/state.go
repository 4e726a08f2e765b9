package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/toolbelt/toolbelt"
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
