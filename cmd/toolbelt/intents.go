package main

import (
	"os"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/intents"
)

// recoveries returns the run's recovery of the changes killed processes
// left unfinished (see package intents), made by the first pipeline or
// undo (both set up before calls run), once the store is open.
func (e *env) recoveries() *intents.Recovery {
	if e.recovered == nil {
		_, dir, _ := e.storeDSN(os.Getenv) // the store is open: its DSN was good
		spool := ""
		if dir != "" {
			spool = spoolDir(dir)
		}
		e.recovered = &intents.Recovery{
			AuditLog: func() (*auditlog.Log, error) { return e.auditLog(e.st) },
			SpoolDir: spool, Log: e.log,
		}
	}
	return e.recovered
}
