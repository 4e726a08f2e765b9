package auditlog

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolbelt/toolbelt/audit"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

// Recover moves into the log the records that processes which ended
// without draining their spool (killed, crashed) left in dir, each record
// once, and removes their files. Spool files of running processes are
// locked and left alone, as are files being recovered by another process;
// a file its process drains and removes meanwhile is no error. It returns
// how many records of calls it moved; a missing dir is no error.
//
// What cannot be read as records is recorded too, in a record of kind
// KindRecovery: the bytes of a torn record at a file's end (a write cut
// short by a crash or a full disk: its call was never answered) are
// dropped, and a line that is not a record is set aside in a file beside
// the spool (NAME-at-OFFSET.garbled), the records after it recovered.
func (l *Log) Recover(ctx context.Context, dir string) (int, error) {
	return l.recover(ctx, dir, syscall.LOCK_SH)
}

// RecoverAll is Recover, run once no recovery of dir in another process
// is under way: when it returns, every record that ended processes left
// in dir is in the log — also those of files another recovery held when
// it was called, which a caller that looks for a call's record next
// (crash recovery of a file change) must not miss. Recoveries share a
// lock on recoverLock in dir; RecoverAll takes it alone.
func (l *Log) RecoverAll(ctx context.Context, dir string) (int, error) {
	return l.recover(ctx, dir, syscall.LOCK_EX)
}

// RecoverProcess is RecoverAll for a caller that knows process pid has
// ended: it also waits, up to wait, until the spool files pid made are let
// go of and moved in. A process killed a moment ago lets go of its locks
// one by one as it exits, so its spool may still be held when another of
// its locks already says it ended; a recovery that went on would miss the
// records in it. Files still held when wait is over are left to later
// recoveries (the pid was reused: a running process holds them).
func (l *Log) RecoverProcess(ctx context.Context, dir string, pid int, wait time.Duration) (int, error) {
	deadline := time.Now().Add(wait)
	moved := 0
	for {
		n, err := l.RecoverAll(ctx, dir)
		moved += n
		if err != nil || time.Now().After(deadline) {
			return moved, err
		}
		left, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%d-*%s", pid, spoolSuffix)))
		if err != nil || len(left) == 0 {
			return moved, err
		}
		select {
		case <-ctx.Done():
			return moved, ctx.Err()
		case <-time.After(heldPoll):
		}
	}
}

// heldPoll is how often RecoverProcess looks again at a spool file held
// by a process that is exiting.
const heldPoll = 5 * time.Millisecond

func (l *Log) recover(ctx context.Context, dir string, how int) (int, error) {
	unlock, err := lockRecoveries(dir, how)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recovering the audit spool: %w", err)
	}
	defer unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("recovering the audit spool: %w", err)
	}
	moved := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case !e.Type().IsRegular():
		case strings.HasSuffix(name, spoolSuffix):
			n, err := l.recoverFile(ctx, dir, name)
			moved += n
			errs = append(errs, err)
		case strings.HasSuffix(name, tempSuffix):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > abandonedAfter {
				errs = append(errs, l.removeAbandoned(filepath.Join(dir, name)))
			}
		}
	}
	errs = append(errs, l.forgetRemoved(ctx, dir))
	return moved, errors.Join(errs...)
}

// recoverLock is the file in a spool directory whose lock a recovery
// holds while it runs.
const recoverLock = "recover.lock"

// lockRecoveries takes the lock of recoveries of dir, shared or alone
// (how: syscall.LOCK_SH or LOCK_EX), until unlock is called.
func lockRecoveries(dir string, how int) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, recoverLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockAt opens the file at path and locks it, for a recovery: ok is false
// when there is nothing to do — the file is gone, its process holds it
// (or another recovery does), or it was removed between the open and the
// lock (its process drained it and let go of it: reading it again would
// add its records twice).
func (l *Log) lockAt(path string, flag int) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, flag, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	l.at("recover-opened")
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	held, err1 := f.Stat()
	named, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, named) {
		f.Close()
		return nil, false, nil
	}
	return f, true, nil
}

// abandonedAfter is how old a spool file being made (tempSuffix) must be
// for recovery to take it for a dead process's: its process locks it a
// moment after making it, and a recovery that locked it first would make
// it start over.
const abandonedAfter = time.Minute

// removeAbandoned removes a spool file its process was still making when
// it died (before naming it): it holds no record.
func (l *Log) removeAbandoned(path string) error {
	f, ok, err := l.lockAt(path, os.O_RDONLY)
	if !ok {
		return err
	}
	defer f.Close()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing an abandoned audit spool file: %w", err)
	}
	return nil
}

func (l *Log) recoverFile(ctx context.Context, dir, name string) (int, error) {
	path := filepath.Join(dir, name)
	f, ok, err := l.lockAt(path, os.O_RDWR)
	if !ok {
		if err != nil {
			return 0, fmt.Errorf("recovering the audit spool %s: %w", path, err)
		}
		return 0, nil
	}
	defer f.Close()
	l.at("recover-locked")
	var drained int64
	err = l.st.Read(ctx, func(tx *store.Tx) error {
		err := tx.QueryRow(ctx, "SELECT drained FROM audit_spool WHERE file = ?", name).Scan(&drained)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("recovering the audit spool %s: %w", path, err)
	}
	items, torn, err := scanSpool(f, dir, name, drained)
	if err != nil {
		return 0, fmt.Errorf("recovering the audit spool %s: %w", path, err)
	}
	moved := 0
	for start := 0; start < len(items); start += writerBatch {
		batch := items[start:min(start+writerBatch, len(items))]
		records := make([]audit.Record, len(batch))
		for i, it := range batch {
			if it.garbled != nil {
				if err := setAside(it.garbled); err != nil {
					return moved, fmt.Errorf("recovering the audit spool %s: %w", path, err)
				}
			}
			records[i] = it.r
		}
		// The progress row moves with each batch, so a recovery cut short
		// goes on from where it stopped.
		n, err := l.moveIn(ctx, name, records, batch[len(batch)-1].end)
		moved += n
		if err != nil {
			return moved, err
		}
	}
	l.at("recover-moved")
	if torn >= 0 {
		if err := f.Truncate(torn); err != nil {
			return moved, fmt.Errorf("recovering the audit spool %s: cutting off its torn end: %w", path, err)
		}
	}
	return moved, l.forget(ctx, dir, name)
}

// spoolItem is a record to move into the log, ending at offset end of its
// spool file; garbled, when set, is a line to set aside before it is.
type spoolItem struct {
	r       audit.Record
	end     int64
	garbled *garbledLine
}

// garbledLine is a line of a spool file that is not a record, and where
// recovery keeps it.
type garbledLine struct {
	path string
	line []byte
}

// scanSpool reads the records of a spool file from offset from on. A
// line that is not a record is set aside (its item says where) and
// recorded in its place; a torn end — bytes after the last line, cut short
// as they were written — is recorded as dropped, and torn is where it
// starts (-1: none). A record written before records had ids is given one
// made of its file and offset, the same at every recovery.
func scanSpool(f *os.File, dir, name string, from int64) (items []spoolItem, torn int64, err error) {
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, -1, err
	}
	rd := bufio.NewReaderSize(f, 1<<16)
	end := from
	for {
		line, err := rd.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) == 0 {
				return items, -1, nil
			}
			note := fmt.Sprintf("dropped the last %d bytes of the audit spool %s: a record torn as it was written (by a crash or a full disk), so its call was not answered", len(line), name)
			return append(items, spoolItem{r: recoveryRecord(name, end, "torn", note), end: end}), end, nil
		}
		if err != nil {
			return nil, -1, err
		}
		start := end
		end += int64(len(line))
		var r audit.Record
		if line[0] != '{' || json.Unmarshal(line, &r) != nil {
			path := filepath.Join(dir, fmt.Sprintf("%s-at-%d%s", strings.TrimSuffix(name, spoolSuffix), start, garbledSuffix))
			note := fmt.Sprintf("the %d bytes at byte %d of the audit spool %s are not an audit record: they were set aside in %s, and the records after them recovered", len(line), start, name, path)
			items = append(items, spoolItem{r: recoveryRecord(name, start, "garbled", note), end: end, garbled: &garbledLine{path: path, line: bytes.Clone(line)}})
			continue
		}
		if r.ID == "" {
			r.ID = fmt.Sprintf("%s@%d", name, start)
		}
		items = append(items, spoolItem{r: r, end: end})
	}
}

// recoveryRecord is the record of what recovering the spool file name
// found at offset off: its id is the same at every recovery of it, so it
// is logged once.
func recoveryRecord(name string, off int64, what, note string) audit.Record {
	return prepare(audit.Record{ID: fmt.Sprintf("recovery:%s@%d:%s", name, off, what), Kind: audit.KindRecovery, Note: note, Time: time.Now()})
}

// setAside writes a garbled line to its file beside the spool.
func setAside(g *garbledLine) error {
	if err := os.WriteFile(g.path, g.line, 0o600); err != nil {
		return fmt.Errorf("setting aside a garbled line: %w", err)
	}
	return nil
}

// moveIn appends those of records the log does not hold yet (by id), read
// from the spool file name, which end at offset end of it, and records
// that the file is drained up to end, in one transaction: what is moved in
// and how far are never apart. It returns how many records of calls it
// appended.
func (l *Log) moveIn(ctx context.Context, name string, records []audit.Record, end int64) (int, error) {
	var n int
	err := l.st.Write(ctx, func(tx *store.Tx) error {
		fresh, err := l.appendNew(ctx, tx, records)
		if err != nil {
			return err
		}
		n = 0
		for _, r := range fresh {
			if r.Kind == "" {
				n++
			}
		}
		_, err = tx.Exec(ctx, "INSERT INTO audit_spool (file, drained) VALUES (?, ?) ON CONFLICT (file) DO UPDATE SET drained = excluded.drained", name, end)
		return err
	})
	if err != nil {
		return 0, appendError(records, err)
	}
	l.at("drained")
	return n, nil
}

// forget removes a drained spool file, then its progress row. The caller
// holds the file's lock until this returns. (A row left by a crash between
// the two is removed by forgetRemoved; a file is never replayed twice
// anyway, its records being logged by id.)
func (l *Log) forget(ctx context.Context, dir, name string) error {
	path := filepath.Join(dir, name)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the drained audit spool %s: %w", path, err)
	}
	l.at("spool-removed")
	err := l.st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM audit_spool WHERE file = ?", name)
		return err
	})
	if err != nil {
		return fmt.Errorf("forgetting the drained audit spool %s: %w", name, err)
	}
	return nil
}

// forgetRemoved deletes the progress rows of spool files no longer in dir
// (a process killed between removing a drained file and its row). A file
// never comes back under its name, so such a row serves nothing.
func (l *Log) forgetRemoved(ctx context.Context, dir string) error {
	var gone []any
	err := l.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT file FROM audit_spool")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				return err
			}
			if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
				gone = append(gone, name)
			}
		}
		return rows.Err()
	})
	if err == nil && len(gone) > 0 {
		err = l.st.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "DELETE FROM audit_spool WHERE file IN (?"+strings.Repeat(", ?", len(gone)-1)+")", gone...)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("forgetting removed audit spools: %w", err)
	}
	return nil
}
