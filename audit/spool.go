package audit

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/store"
)

// Spool is the audit's fast durable path: Append writes the record, as one
// line of JSON, to an append-only file of this process and returns once the
// write reached the operating system (and, with Sync, the disk); records
// written at the same moment share one write (group commit). A background
// drain then appends them to the log in the database, and records in the
// log how far it got in the same transaction. When the process dies before
// the drain, the next Recover (any process, at its start) moves what is
// left into the log, each record once.
//
// The write is made by a caller of Append itself, not handed to another
// goroutine: the first caller to find no write under way writes its record
// and every record that arrives meanwhile, batch after batch, while the
// others wait for theirs (a call's result waits for its record, and the
// hand-off to a writer goroutine and back was two wake-ups on its path).
//
// A record becomes visible to List and Verify once drained or recovered:
// at once after a quiet moment, within drainLinger (100 ms) under a stream
// of calls, whose records the drain gathers into one transaction. Each process has its own spool file, locked
// while it runs; Close drains it and removes it.
type Spool struct {
	log       *Log
	dir       string
	sync      bool
	onError   func(error)
	onRecover func(int)

	drains chan drainBatch
	done   chan struct{} // closed when the drain stops

	mu      sync.Mutex
	idle    *sync.Cond // signalled when a writing caller is done
	closed  bool
	waiting []pending // appended, not yet written
	writing bool      // a caller is writing the waiting records

	// Owned by the writing caller.
	f    *os.File
	name string
	size int64
	buf  bytes.Buffer
}

// drainBatch is records written to a spool file, ending at offset end; or,
// with retire set, the sign that the file is complete and can go once
// drained.
type drainBatch struct {
	f       *os.File
	name    string
	records []Record
	end     int64
	retire  bool
}

// SpoolOptions configure a Spool.
type SpoolOptions struct {
	// Sync makes each write wait for the disk (fsync), so records survive
	// a power loss; without it they survive the process being killed.
	Sync bool
	// OnError receives the errors of the background drain; the records
	// stay in the spool file and are recovered at the next start.
	OnError func(error)
	// OnRecover, when set, is told how many records of earlier processes
	// the drain moved into the log as it started, if any.
	OnRecover func(records int)
}

// spoolSuffix ends the name of every spool file.
const spoolSuffix = ".spool"

// maxSpoolBytes is the size past which a process starts a new spool file
// (the full one goes once drained).
const maxSpoolBytes = 64 << 20

// Spool starts a spool in dir (created 0700 if missing) that drains into
// the log. Before the first of its own records, the drain moves in what
// earlier processes left in dir (see Recover), in the background: a server
// answers while it does.
func (l *Log) Spool(dir string, o SpoolOptions) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit spool: %w", err)
	}
	s := &Spool{
		log: l, dir: dir, sync: o.Sync, onError: o.OnError, onRecover: o.OnRecover,
		drains: make(chan drainBatch, 1024), done: make(chan struct{}),
	}
	s.idle = sync.NewCond(&s.mu)
	if err := s.open(); err != nil {
		return nil, err
	}
	go s.drain()
	return s, nil
}

// open starts a new spool file, locked for as long as this process runs.
func (s *Spool) open() error {
	name := fmt.Sprintf("%d-%s%s", os.Getpid(), randid.New("", 6), spoolSuffix)
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("audit spool: locking %s: %w", f.Name(), err)
	}
	s.f, s.name, s.size = f, name, 0
	return nil
}

// Append writes r to the spool (redacted, see Log.Append) and returns once
// the write is done, or with its error.
func (s *Spool) Append(ctx context.Context, r Record) error {
	p := pending{r: prepare(r), done: make(chan error, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("appending the audit record of call %s: the spool is closed", r.CallID)
	}
	s.waiting = append(s.waiting, p)
	if s.writing {
		// The caller writing now writes this record too, with the next
		// batch.
		s.mu.Unlock()
		select {
		case err := <-p.done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.writing = true
	for len(s.waiting) > 0 {
		n := min(len(s.waiting), writerBatch)
		batch := slices.Clone(s.waiting[:n])
		s.waiting = slices.Delete(s.waiting, 0, n)
		s.mu.Unlock()
		s.write(batch)
		s.mu.Lock()
	}
	s.writing = false
	s.idle.Broadcast()
	s.mu.Unlock()
	return <-p.done
}

// write writes a batch of records with one write (group commit), answers
// their callers and hands them to the drain. One caller at a time writes.
func (s *Spool) write(batch []pending) {
	s.buf.Reset()
	records := make([]Record, len(batch))
	for i, p := range batch {
		records[i] = p.r
		line, err := json.Marshal(p.r)
		if err != nil {
			panic(err) // a Record always encodes
		}
		s.buf.Write(line)
		s.buf.WriteByte('\n')
	}
	_, err := s.f.Write(s.buf.Bytes())
	if err == nil && s.sync {
		err = s.f.Sync()
	}
	if err != nil {
		err = fmt.Errorf("writing the audit spool %s: %w", s.f.Name(), err)
	}
	for _, p := range batch {
		p.done <- err
	}
	if err != nil {
		// What was written of it, if anything, is recovered at the next
		// start; the callers were told it failed.
		return
	}
	s.size += int64(s.buf.Len())
	s.drains <- drainBatch{f: s.f, name: s.name, records: records, end: s.size}
	if s.size >= maxSpoolBytes {
		old := drainBatch{f: s.f, name: s.name, retire: true}
		if err := s.open(); err != nil {
			s.report(err)
			return // keep writing to the full file
		}
		s.drains <- old
	}
}

// drainLinger is how long the drain gathers records for one transaction
// when the one before was that recent: under a steady stream of calls the
// log takes them in a transaction every drainLinger instead of one each
// (a transaction was a fifth of a call's CPU), while a call after a quiet
// moment reaches the log at once. The records are durable in the spool
// meanwhile. At 25 ms a commit ran beside one call in a hundred: the
// slowest 1% of sequential stdio calls took 27–44% longer than at 100 ms.
const drainLinger = 100 * time.Millisecond

// drain moves written records into the log, in order. After a failure it
// stops moving (the records stay in the spool for Recover).
func (s *Spool) drain() {
	defer close(s.done)
	// This process's own spool file is locked, so Recover leaves it alone.
	n, err := s.log.Recover(context.Background(), s.dir)
	if n > 0 && s.onRecover != nil {
		s.onRecover(n)
	}
	if err != nil {
		s.report(err)
	}
	failed := false
	var last time.Time // when the last transaction started
	linger := time.NewTimer(drainLinger)
	linger.Stop()
	for b := range s.drains {
		if failed {
			continue
		}
		if b.retire {
			b.f.Close()
			if err := s.log.forget(context.Background(), filepath.Join(s.dir, b.name), b.name); err != nil {
				s.report(err)
			}
			continue
		}
		// Batches of the same file that are waiting, or that come within
		// the linger of a busy stream, go in one transaction.
		records, end := b.records, b.end
		var next *drainBatch
		var until <-chan time.Time
		if wait := drainLinger - time.Since(last); wait > 0 {
			linger.Reset(wait)
			until = linger.C
		}
	more:
		for len(records) < writerBatch {
			var n drainBatch
			ok := true
			if until == nil {
				select {
				case n, ok = <-s.drains:
				default:
					break more
				}
			} else {
				select {
				case n, ok = <-s.drains:
				case <-until:
					break more
				}
			}
			if !ok {
				break
			}
			if n.retire || n.name != b.name {
				next = &n
				break
			}
			records, end = append(records, n.records...), n.end
		}
		linger.Stop()
		last = time.Now()
		if err := s.log.moveIn(context.Background(), b.name, records, end); err != nil {
			s.report(err)
			failed = true
			continue
		}
		if next != nil && next.retire {
			next.f.Close()
			if err := s.log.forget(context.Background(), filepath.Join(s.dir, next.name), next.name); err != nil {
				s.report(err)
			}
		} else if next != nil {
			if err := s.log.moveIn(context.Background(), next.name, next.records, next.end); err != nil {
				s.report(err)
				failed = true
			}
		}
	}
}

func (s *Spool) report(err error) {
	if s.onError != nil {
		s.onError(err)
	}
}

// Close waits for the records already handed to Append, drains them into
// the log and removes the spool file.
func (s *Spool) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		// The caller writing now writes every record appended before.
		for s.writing {
			s.idle.Wait()
		}
		s.drains <- drainBatch{f: s.f, name: s.name, retire: true}
		close(s.drains)
	}
	s.mu.Unlock()
	<-s.done
	return nil
}

// moveIn appends records read from the spool file name, which end at
// offset end of it, and records that the file is drained up to end, in one
// transaction.
func (l *Log) moveIn(ctx context.Context, name string, records []Record, end int64) error {
	err := l.st.Write(ctx, func(tx *store.Tx) error {
		if err := l.appendTx(ctx, tx, records); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO audit_spool (file, drained) VALUES (?, ?) ON CONFLICT (file) DO UPDATE SET drained = excluded.drained", name, end)
		return err
	})
	if err != nil {
		return appendError(records, err)
	}
	return nil
}

// forget removes a drained spool file, then its progress row (in this
// order: a row without a file is harmless, a file without its row would be
// replayed from the start).
func (l *Log) forget(ctx context.Context, path, name string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the drained audit spool %s: %w", path, err)
	}
	err := l.st.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM audit_spool WHERE file = ?", name)
		return err
	})
	if err != nil {
		return fmt.Errorf("forgetting the drained audit spool %s: %w", name, err)
	}
	return nil
}

// Recover moves into the log the records that processes which ended
// without draining their spool (killed, crashed) left in dir, each record
// once, and removes their files. Spool files of running processes are
// locked and left alone. It returns how many records it moved; a missing
// dir is no error.
func (l *Log) Recover(ctx context.Context, dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recovering the audit spool: %w", err)
	}
	moved := 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), spoolSuffix) {
			continue
		}
		n, err := l.recoverFile(ctx, filepath.Join(dir, e.Name()), e.Name())
		moved += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return moved, errors.Join(errs...)
}

func (l *Log) recoverFile(ctx context.Context, path, name string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("recovering the audit spool %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return 0, nil // its process still runs, or another is recovering it
	}
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
	if _, err := f.Seek(drained, io.SeekStart); err != nil {
		return 0, fmt.Errorf("recovering the audit spool %s: %w", path, err)
	}
	// Only whole lines: a line cut short was never acknowledged.
	rd := bufio.NewReaderSize(f, 1<<16)
	var records []Record
	var ends []int64 // where each record's line ends
	end := drained
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			break
		}
		var r Record
		if json.Unmarshal(line, &r) != nil {
			return 0, fmt.Errorf("recovering the audit spool %s: the line at byte %d is not an audit record, so nothing of the file was moved into the log; look at it, then move it out of %s to go on", path, end, filepath.Dir(path))
		}
		records = append(records, r)
		end += int64(len(line))
		ends = append(ends, end)
	}
	for start := 0; start < len(records); start += writerBatch {
		stop := min(start+writerBatch, len(records))
		// The progress row moves with each batch, so a recovery cut short
		// goes on from where it stopped.
		if err := l.moveIn(ctx, name, records[start:stop], ends[stop-1]); err != nil {
			return start, err
		}
	}
	return len(records), l.forget(ctx, path, name)
}
