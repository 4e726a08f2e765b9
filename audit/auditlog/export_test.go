package auditlog

import "os"

// WithHook calls hook at the named points of a spool's life and of a
// recovery: spool-created (a spool file made, not yet locked),
// spool-locked (locked, not yet named), drained (records moved into the
// log), spool-removed (a drained file removed, its progress row not yet),
// recover-opened (a file opened, not yet locked), recover-locked,
// recover-moved (a file's records moved, the file not yet removed).
func WithHook(hook func(point string)) Option { return func(l *Log) { l.hook = hook } }

// WithWrite makes spools write their files with write instead of
// f.Write: a test writes part of what it is given and fails, as a full
// disk does.
func WithWrite(write func(f *os.File, b []byte) (int, error)) Option {
	return func(l *Log) { l.write = write }
}
