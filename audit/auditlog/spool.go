package auditlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/randid"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

// Spool is the audit's fast durable path: Append writes the record, as one
// line of JSON, to an append-only file of this process and returns once the
// write reached the operating system (and, with Sync, the disk); records
// written at the same moment share one write (group commit). A background
// drain then appends them to the log in the database, and records in the
// log how far it got in the same transaction. When the process dies before
// the drain, the next Recover (any process, at its start) moves what is
// left into the log, each record once: records carry ids, and the log
// takes an id once.
//
// The write is made by a caller of Append itself, not handed to another
// goroutine: the first caller to find no write under way writes its record
// and every record that arrives meanwhile, batch after batch, while the
// others wait for theirs (a call's result waits for its record, and the
// hand-off to a writer goroutine and back was two wake-ups on its path).
//
// A record becomes visible to List and Verify once drained or recovered:
// at once after a quiet moment, within drainLinger (100 ms) under a stream
// of calls, whose records the drain gathers into one transaction. Each
// process has its own spool file, locked before it is given its name (so
// that recovery never sees it unlocked while its process lives); Stop
// drains it and removes it.
//
// A full disk is a state the spool comes out of by itself. Each file keeps
// disk space allocated ahead of its records (spoolReserve), so that the
// records of calls under way can be written when the disk fills up. While
// that space cannot be kept, or a write fails, Durable says so: the
// pipeline then refuses calls that would change anything. A record whose
// write failed is kept in memory, in order, and written with those after
// it once a retry (with backoff) succeeds; the drain likewise retries the
// database with backoff, the records safe in the file meanwhile.
//
// It is a [github.com/toolbelt/toolbelt/lifecycle.Service]: Append writes to
// the file from the start; the drain (and recovery) runs between Start and
// Stop.
type Spool struct {
	log       *Log
	dir       string
	sync      bool
	onError   func(error)
	onRecover func(int)
	onState   func(error)

	mu       sync.Mutex
	idle     *sync.Cond // signalled when a writing caller is done
	closed   bool
	waiting  []pending // appended, not yet written, in order
	writing  bool      // a caller (or the retry) is writing the waiting records
	fault    error     // why records are not durable now; nil when they are
	stalled  bool      // a write failed: records wait in memory for the retry
	retrying bool      // the retry runs

	qmu   sync.Mutex
	queue []drainBatch // written, not yet drained, in order

	kick chan struct{} // (1) the queue grew
	quit chan struct{} // closed by Stop once the queue is complete
	done chan struct{} // closed when the drain stops

	started bool               // guarded by mu
	ctx     context.Context    // the drain's context: cancelled when Stop's ends
	cancel  context.CancelFunc // cancels ctx
	retries sync.WaitGroup     // the retry (see setFault)

	// Owned by the writing caller.
	f        *os.File
	name     string
	size     int64
	reserved int64 // the file's disk space is allocated up to here
	ahead    bool  // the file system allocates ahead (see reserve)
	torn     bool  // f may end with part of a record: write to a new file
	buf      bytes.Buffer
}

// drainBatch is records written to a spool file, ending at offset end; or,
// with retire set, the sign that the file is complete and can go once
// drained (torn: after recovering its end, which may hold part of a
// record).
type drainBatch struct {
	f       *os.File
	name    string
	records []audit.Record
	end     int64
	retire  bool
	torn    bool
}

// SpoolOptions configure a Spool.
type SpoolOptions struct {
	// Sync makes each write wait for the disk (fsync), so records survive
	// a power loss; without it they survive the process being killed.
	Sync bool
	// OnError receives the errors of the background drain (the first of
	// each run of failures: the drain retries, the records stay in the
	// spool file meanwhile) and of recovery.
	OnError func(error)
	// OnRecover, when set, is told how many records of earlier processes
	// the drain moved into the log as it started, if any.
	OnRecover func(records int)
	// OnState, when set, is told when records stop being durable (with
	// why, as Durable returns it) and when they are again (nil): once
	// each, not per record. It is called with the spool's lock held and
	// must not call the spool.
	OnState func(err error)
}

// Names in the spool directory: a spool file ends in spoolSuffix; one being
// made, before its owner holds its lock, in tempSuffix (recovery leaves
// such a file alone while it is locked and removes it once its process
// died); a line recovery set aside in garbledSuffix.
const (
	spoolSuffix   = ".spool"
	tempSuffix    = ".spool-new"
	garbledSuffix = ".garbled"
)

// maxSpoolBytes is the size past which a process starts a new spool file
// (the full one goes once drained).
const maxSpoolBytes = 64 << 20

// spoolReserve is the disk space a spool file keeps allocated past its
// records: about a thousand records that can still be written when the
// disk is full. Less than half of it left, the spool allocates more.
const spoolReserve = 1 << 20

// The retries of a failed write or allocation, and of the drain: the first
// after retryFirst, each later one twice as late, up to retryMax.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 5 * time.Second
)

// errNoReserve says the file system cannot allocate space ahead.
var errNoReserve = errors.New("the file system cannot allocate space ahead")

// Spool opens a spool in dir (created 0700 if missing) that drains into
// the log once started. Before the first of its own records, the drain
// moves in what earlier processes left in dir (see Recover), in the
// background: a server answers while it does.
func (l *Log) Spool(dir string, o SpoolOptions) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit spool: %w", err)
	}
	s := &Spool{
		log: l, dir: dir, sync: o.Sync, onError: o.OnError, onRecover: o.OnRecover, onState: o.OnState,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	s.idle = sync.NewCond(&s.mu)
	if err := s.open(); err != nil {
		return nil, err
	}
	if err := s.extend(); err != nil {
		s.mu.Lock()
		s.setFault(err, false)
		s.mu.Unlock()
	}
	return s, nil
}

// Start starts the drain, and the retry when records are not durable;
// ctx bounds starting only ([github.com/toolbelt/toolbelt/lifecycle.Service]).
func (s *Spool) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("audit spool: Start called twice, or after Stop")
	}
	s.started = true
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.fault != nil {
		s.retrying = true
		s.retries.Go(s.retry)
	}
	go s.drain()
	return nil
}

// open starts a new spool file, locked for as long as this process runs.
// The file is made under a name recovery does not take (tempSuffix),
// locked, and only then renamed into place: a rename keeps the file and
// its lock, so no recovery ever finds it unlocked while this process
// lives. A recovery that took the unnamed file for a dead process's (it
// locked it first) removed it: then the rename finds nothing, and another
// file is made.
func (s *Spool) open() error {
	for attempt := 1; ; attempt++ {
		base := fmt.Sprintf("%d-%s", os.Getpid(), randid.New("", 6))
		temp, name := filepath.Join(s.dir, base+tempSuffix), base+spoolSuffix
		f, err := os.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("audit spool: %w", err)
		}
		s.log.at("spool-created")
		if err := flock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			_ = os.Remove(temp)
			return fmt.Errorf("audit spool: locking %s: %w", temp, err)
		}
		s.log.at("spool-locked")
		err = os.Rename(temp, filepath.Join(s.dir, name))
		if errors.Is(err, os.ErrNotExist) && attempt < 3 {
			f.Close()
			continue
		}
		if err == nil && s.sync {
			err = syncDir(s.dir)
		}
		if err != nil {
			f.Close()
			_ = os.Remove(temp)
			return fmt.Errorf("audit spool: %w", err)
		}
		s.f, s.name, s.size, s.reserved, s.ahead, s.torn = f, name, 0, 0, true, false
		return nil
	}
}

// flock takes a lock on f, waiting through signals.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// syncDir makes the names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// extend allocates spoolReserve bytes of disk space past the records of
// the file, when less than half of that is left; the writing caller calls
// it. A file system that cannot allocate ahead is left alone.
func (s *Spool) extend() error {
	if !s.ahead || s.reserved-s.size >= spoolReserve/2 {
		return nil
	}
	err := reserve(s.f, s.size, spoolReserve)
	switch {
	case errors.Is(err, errNoReserve):
		s.ahead = false
		return nil
	case err != nil:
		return fmt.Errorf("keeping %d KiB of disk space ahead for the audit spool %s: %w", spoolReserve>>10, s.name, err)
	}
	s.reserved = s.size + spoolReserve
	return nil
}

// Durable returns nil when a record appended now is made durable before
// Append returns, and otherwise why not (matching audit.ErrNotDurable): the disk
// is full or the spool cannot be written.
func (s *Spool) Durable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durable()
}

func (s *Spool) durable() error {
	if s.fault == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", audit.ErrNotDurable, cause(s.fault))
}

// cause is the system's reason under err ("no space left on device"),
// without the paths around it, or err itself.
func cause(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// Append writes r to the spool (redacted, see Log.Append) and returns once
// the write is done. When the spool cannot be written, r is kept in memory,
// to be written once it can, and the error matches audit.ErrNotDurable.
func (s *Spool) Append(ctx context.Context, r audit.Record) error {
	p := pending{r: prepare(r), done: make(chan error, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("appending the audit record of call %s: the spool is closed", r.CallID)
	}
	if s.stalled {
		s.waiting = append(s.waiting, pending{r: p.r})
		err := s.notDurable(p.r)
		s.mu.Unlock()
		return err
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
	s.writeWaiting()
	s.writing = false
	s.idle.Broadcast()
	s.mu.Unlock()
	return <-p.done
}

// notDurable is the error of an Append whose record is kept in memory.
func (s *Spool) notDurable(r audit.Record) error {
	return fmt.Errorf("the audit record of call %s is kept in memory until the spool can be written: %w", r.CallID, s.durable())
}

// writeWaiting writes the waiting records, batch after batch, and answers
// their callers; the caller holds s.mu and the writer's role. A failed
// write leaves the records waiting, answered, for the retry.
func (s *Spool) writeWaiting() {
	for len(s.waiting) > 0 {
		n := min(len(s.waiting), writerBatch)
		batch := slices.Clone(s.waiting[:n])
		s.mu.Unlock()
		low, err := s.write(batch)
		s.mu.Lock()
		if err != nil {
			s.setFault(err, true)
			for i := range s.waiting {
				if d := s.waiting[i].done; d != nil {
					d <- s.notDurable(s.waiting[i].r)
					s.waiting[i].done = nil
				}
			}
			return
		}
		s.waiting = slices.Delete(s.waiting, 0, n)
		for _, p := range batch {
			if p.done != nil {
				p.done <- nil
			}
		}
		if low != nil {
			s.setFault(low, false)
		}
	}
}

// setFault records why records are not durable (stalled: a write failed,
// so records wait in memory), tells OnState the first time, and starts the
// retry. The caller holds s.mu.
func (s *Spool) setFault(err error, stalled bool) {
	first := s.fault == nil
	s.fault, s.stalled = err, s.stalled || stalled
	if first && s.onState != nil {
		s.onState(s.durable())
	}
	if s.started && !s.retrying && !s.closed {
		s.retrying = true
		s.retries.Go(s.retry)
	}
}

// retry writes the records kept in memory and allocates the file's space
// ahead, after retryFirst, then ever later up to retryMax, until both
// succeed; then records are durable again.
func (s *Spool) retry() {
	wait := retryFirst
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.mu.Lock()
		for s.writing {
			s.idle.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		s.writing = true
		s.stalled = false
		s.writeWaiting()
		ok := !s.stalled
		if ok {
			s.mu.Unlock()
			err := s.extend()
			s.mu.Lock()
			if err != nil {
				s.fault, ok = err, false
			}
		}
		if ok {
			s.fault, s.retrying = nil, false
			if s.onState != nil {
				s.onState(nil)
			}
		}
		s.writing = false
		s.idle.Broadcast()
		s.mu.Unlock()
		if ok {
			return
		}
		wait = min(2*wait, retryMax)
		t.Reset(wait)
	}
}

// write writes a batch of records with one write (group commit) and hands
// them to the drain; the writing caller calls it. A failed write leaves
// the file as it was (or, when it cannot be cut back, is the file's last:
// the next write starts another). low says the disk space ahead could not
// be kept: the records were written, the next ones may not be.
func (s *Spool) write(batch []pending) (low, err error) {
	if s.torn {
		if err := s.rotate(); err != nil {
			return nil, err
		}
	}
	s.buf.Reset()
	records := make([]audit.Record, len(batch))
	for i, p := range batch {
		records[i] = p.r
		line, err := json.Marshal(p.r)
		if err != nil {
			panic(err) // a Record always encodes
		}
		s.buf.Write(line)
		s.buf.WriteByte('\n')
	}
	_, err = s.log.writeFile(s.f, s.buf.Bytes())
	if err == nil && s.sync {
		err = s.f.Sync()
	}
	if err != nil {
		// The records are written again: what was written of them must
		// not stay, or the next line would follow a torn one. (Cutting
		// the file frees the space kept ahead too.)
		if s.f.Truncate(s.size) != nil {
			s.torn = true
		}
		s.reserved = s.size
		return nil, fmt.Errorf("writing the audit spool %s: %w", s.f.Name(), err)
	}
	s.size += int64(s.buf.Len())
	s.enqueue(drainBatch{f: s.f, name: s.name, records: records, end: s.size})
	if s.size >= maxSpoolBytes {
		if err := s.rotate(); err != nil {
			s.report(err) // keep writing to the full file
		}
	}
	return s.extend(), nil
}

// rotate starts a new spool file and hands the old one to the drain, to be
// removed once drained.
func (s *Spool) rotate() error {
	old := drainBatch{f: s.f, name: s.name, retire: true, torn: s.torn}
	if err := s.open(); err != nil {
		return err
	}
	s.enqueue(old)
	return nil
}

// enqueue hands b to the drain.
func (s *Spool) enqueue(b drainBatch) {
	s.qmu.Lock()
	s.queue = append(s.queue, b)
	s.qmu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
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

// drain moves written records into the log, in order. A failure is
// retried with backoff (the records are safe in the spool file meanwhile);
// once Stop was called, a failure ends the drain, the records left in the
// spool for the next start's recovery.
func (s *Spool) drain() {
	defer close(s.done)
	// This process's own spool file is locked, so Recover leaves it alone.
	recovered := s.recoverOthers()
	var last time.Time // when the last transaction started
	var failing error
	wait := retryFirst
	for {
		group, ok := s.next(last)
		if !ok {
			return
		}
		last = time.Now()
		err := s.apply(group)
		if err == nil {
			s.pop(len(group))
			wait, failing = retryFirst, nil
			if !recovered {
				recovered = s.recoverOthers()
			}
			continue
		}
		if failing == nil {
			s.report(fmt.Errorf("%w (retrying; the records are safe in the spool meanwhile)", err))
		}
		failing = err
		select {
		case <-s.quit:
			// Stop was called before this try: what is left stays in
			// the spool for the next start.
			s.abandon()
			return
		default:
		}
		select {
		case <-s.quit:
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}

// recoverOthers moves in what earlier processes left in the spool
// directory and says whether it could.
func (s *Spool) recoverOthers() bool {
	n, err := s.log.Recover(s.ctx, s.dir)
	if n > 0 && s.onRecover != nil {
		s.onRecover(n)
	}
	if err != nil {
		s.report(err)
		return false
	}
	return true
}

// next returns the next group of batches to drain in one transaction:
// batches of one file (at most writerBatch records but for the last batch)
// or a file's retirement. When the transaction before was recent, it
// waits up to drainLinger for records to gather. ok is false once Stop
// was called and everything is drained.
func (s *Spool) next(last time.Time) (group []drainBatch, ok bool) {
	for s.queued() == 0 {
		select {
		case <-s.kick:
		case <-s.quit:
			if s.queued() == 0 {
				return nil, false
			}
		}
	}
	if wait := drainLinger - time.Since(last); wait > 0 {
		t := time.NewTimer(wait)
	gather:
		for s.queued() < writerBatch {
			select {
			case <-s.kick:
			case <-t.C:
				break gather
			case <-s.quit:
				break gather
			}
		}
		t.Stop()
	}
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.queue[0].retire {
		return s.queue[:1:1], true
	}
	n := 0
	for i, b := range s.queue {
		if b.retire || b.name != s.queue[0].name || n >= writerBatch {
			return slices.Clone(s.queue[:i]), true
		}
		n += len(b.records)
	}
	return slices.Clone(s.queue), true
}

// queued counts the records waiting for the drain (a retirement counts as
// many as a full transaction: it is not worth waiting for more).
func (s *Spool) queued() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	n := 0
	for _, b := range s.queue {
		if b.retire {
			n += writerBatch
		}
		n += len(b.records)
	}
	return n
}

// pop removes the first n batches, drained, from the queue.
func (s *Spool) pop(n int) {
	s.qmu.Lock()
	s.queue = slices.Delete(s.queue, 0, n)
	s.qmu.Unlock()
}

// apply drains one group: moves its records into the log with the file's
// progress, or removes a retired file once drained (recovering first what
// a torn file holds past its progress).
func (s *Spool) apply(group []drainBatch) error {
	ctx := s.ctx
	b := group[0]
	switch {
	case b.retire && b.torn:
		b.f.Close()
		_, err := s.log.recoverFile(ctx, s.dir, b.name)
		return err
	case b.retire:
		if err := s.log.forget(ctx, s.dir, b.name); err != nil {
			return err
		}
		return b.f.Close()
	}
	var records []audit.Record
	for _, b := range group {
		records = append(records, b.records...)
	}
	_, err := s.log.moveIn(ctx, b.name, records, group[len(group)-1].end)
	return err
}

// abandon closes the files of what is left to drain: it stays in the
// spool, for the next start's recovery.
func (s *Spool) abandon() {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for _, b := range s.queue {
		if b.retire {
			b.f.Close()
		}
	}
	s.queue = nil
}

func (s *Spool) report(err error) {
	if s.onError != nil {
		s.onError(err)
	}
}

// Stop waits for the records already handed to Append, drains them into
// the log and removes the spool file. Records kept in memory because the
// spool could not be written get a last try, into the spool or straight
// into the log; those that still fail are lost, and Stop says how many.
// When the database cannot be written, or ctx ends before the drain is
// done (the drain is then cancelled), what is in the spool file stays
// there for the next start; so it does when the spool was never started
// ([github.com/toolbelt/toolbelt/lifecycle.Service]).
func (s *Spool) Stop(ctx context.Context) error {
	var lost error
	s.mu.Lock()
	started := s.started
	if !s.closed {
		s.closed = true
		for s.writing {
			s.idle.Wait()
		}
		if len(s.waiting) > 0 {
			s.writing = true
			s.writeWaiting()
			s.writing = false
			lost = s.keepInLog(ctx)
		}
		if started {
			s.enqueue(drainBatch{f: s.f, name: s.name, retire: true, torn: s.torn})
		} else {
			s.f.Close()
		}
		close(s.quit)
	}
	s.mu.Unlock()
	if started {
		select {
		case <-s.done:
		case <-ctx.Done():
			s.cancel()
			<-s.done
		}
		s.retries.Wait()
		s.cancel()
	}
	if lost != nil {
		s.report(lost)
	}
	return lost
}

// keepInLog appends to the log the records the spool could not take, as a
// last resort when it closes; the caller holds s.mu.
func (s *Spool) keepInLog(ctx context.Context) error {
	if len(s.waiting) == 0 {
		return nil
	}
	records := make([]audit.Record, len(s.waiting))
	for i, p := range s.waiting {
		records[i] = p.r
	}
	s.waiting = nil
	err := s.log.st.Write(ctx, func(tx *store.Tx) error {
		_, err := s.log.appendNew(ctx, tx, records)
		return err
	})
	if err != nil {
		return fmt.Errorf("%d audit records could not be written to the spool (%v) nor to the log, and are lost: %w", len(records), cause(s.fault), err)
	}
	return nil
}
