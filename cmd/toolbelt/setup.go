package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/toolbelt/toolbelt/audit/auditlog"
)

// runFlags are the flags of commands that run calls.
type runFlags struct {
	Yes    bool `help:"Approve every call that needs a person's approval (recorded as such in the audit log)."`
	DryRun bool `name:"dry-run" help:"Describe what the calls would change instead of changing it."`
}

// Where the audit chain's HMAC key comes from, first found: the key itself,
// a file holding it, then the config's audit.keyFile.
const (
	envAuditKey     = "TOOLBELT_AUDIT_KEY"
	envAuditKeyFile = "TOOLBELT_AUDIT_KEY_FILE"
)

// auditKey returns the configured HMAC key of the audit chain, nil when
// none is.
func (e *env) auditKey(getenv func(string) string) ([]byte, error) {
	var key []byte
	var from string
	if k := getenv(envAuditKey); k != "" {
		key, from = []byte(k), envAuditKey
	} else {
		file := getenv(envAuditKeyFile)
		from = envAuditKeyFile
		if file == "" {
			cfg, err := e.config()
			if err != nil {
				return nil, err
			}
			file, from = configPath(cfg, cfg.Audit.KeyFile), "audit.keyFile"
		}
		if file == "" {
			return nil, nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading the audit key (%s): %w", from, err)
		}
		key, from = b, from+" "+file
	}
	key = bytes.TrimSpace(key)
	if len(key) < auditlog.MinKeyBytes {
		return nil, fmt.Errorf("the audit key from %s has %d bytes: it needs at least %d (e.g. the output of openssl rand -hex 32)", from, len(key), auditlog.MinKeyBytes)
	}
	return key, nil
}

// Where the key that seals the imported servers' OAuth grants comes from,
// first found: the key itself, a file holding it; else the root's key
// file in the data directory (toolbelt.TokenKeyFile).
const (
	envTokenKey     = "TOOLBELT_TOKEN_KEY"
	envTokenKeyFile = "TOOLBELT_TOKEN_KEY_FILE"
)

// tokenKey returns the key set in the environment, nil when none is.
func tokenKey(getenv func(string) string) ([]byte, error) {
	if k := getenv(envTokenKey); k != "" {
		return bytes.TrimSpace([]byte(k)), nil
	}
	file := getenv(envTokenKeyFile)
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the token key (%s): %w", envTokenKeyFile, err)
	}
	return bytes.TrimSpace(b), nil
}
