package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/store"
)

// Environment variables that say where state lives.
const (
	envData        = "TOOLBELT_DATA"         // the SQLite database's directory
	envDatabaseURL = "TOOLBELT_DATABASE_URL" // a postgres:// URL instead
)

// storeDSN returns the database that holds state, first found of: SQLite
// in the --data directory; the PostgreSQL database of
// $TOOLBELT_DATABASE_URL; SQLite in $TOOLBELT_DATA; the config's database,
// then its data directory; SQLite in the user's data directory. dir is the
// SQLite database's directory, "" for PostgreSQL.
func (e *env) storeDSN(getenv func(string) string) (dsn, dir string, err error) {
	cfg, err := e.config()
	if err != nil {
		return "", "", err
	}
	url := getenv(envDatabaseURL)
	if url == "" && getenv(envData) == "" {
		url = cfg.Database
	}
	if e.dataDir == "" && url != "" {
		if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
			return "", "", fmt.Errorf("%s must be a postgres:// URL; for SQLite give the directory with --data or %s", envDatabaseURL, envData)
		}
		return url, "", nil
	}
	dir = cmp.Or(e.dataDir, getenv(envData), configPath(cfg, cfg.Data))
	if dir == "" {
		if dir, err = store.DefaultDir(); err != nil {
			return "", "", err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", fmt.Errorf("data directory: %w", err)
	}
	return filepath.Join(dir, store.DefaultFile), dir, nil
}

// openStore opens the store that holds state. workspace, when not "", is
// the directory the run's tools may write to: a data directory inside it is
// refused, since a tool could then rewrite the audit log or the undo
// journal.
func (e *env) openStore(ctx context.Context, workspace string) (*store.Store, error) {
	dsn, dir, err := e.storeDSN(os.Getenv)
	if err != nil {
		return nil, err
	}
	if err := checkOutside(dir, workspace); err != nil {
		return nil, err
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	var opts []store.Option
	if cfg.Audit.Sync == "always" {
		opts = append(opts, store.SyncCommits())
	}
	return store.Open(ctx, dsn, opts...)
}

// checkOutside refuses a data directory inside the workspace.
func checkOutside(dir, workspace string) error {
	if dir != "" && workspace != "" && within(dir, workspace) {
		return fmt.Errorf("the data directory %s is inside the workspace %s, where tools can write: keep state elsewhere (--data DIR or %s), or work in another directory", dir, workspace, envData)
	}
	return nil
}

// within says whether path is root or below it, after following the
// symbolic links of both.
func within(path, root string) bool {
	rel, err := filepath.Rel(resolve(root), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve follows the symbolic links of path as far as it exists, dangling
// ones included: a link to a directory not made yet still leads there.
func resolve(path string) string {
	path = filepath.Clean(path)
	for range 40 {
		existing, rest := path, ""
		for {
			if _, err := os.Lstat(existing); err == nil {
				break
			}
			parent := filepath.Dir(existing)
			if parent == existing {
				return path
			}
			rest = filepath.Join(filepath.Base(existing), rest)
			existing = parent
		}
		if real, err := filepath.EvalSymlinks(existing); err == nil {
			return filepath.Join(real, rest)
		}
		// existing is a link to something that does not exist (yet).
		target, err := os.Readlink(existing)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(existing), target)
		}
		path = filepath.Join(target, rest)
	}
	return path
}
