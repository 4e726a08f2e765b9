package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// stopReason says why Toolbelt stopped a command.
type stopReason int

const (
	notStopped stopReason = iota
	stopTimeout
	stopCancelled
	stopKilled
	stopShutdown
)

const (
	// drainWait is how long output is still read after a command and its
	// process group have ended, for writers that escaped the group.
	drainWait = time.Second
	// reapWait bounds the wait for killed processes to die (one in an
	// uninterruptible sleep dies only when it wakes).
	reapWait = 10 * time.Second
	// readChunk is the size of one read from a command's output.
	readChunk = 32 << 10
	// ptyRows and ptyCols are the size of a command's terminal.
	ptyRows, ptyCols = 50, 200
)

// spawnSpec is everything needed to start a command.
type spawnSpec struct {
	command   string
	path      string   // the program to start
	args      []string // its arguments, args[0] included
	dir       string   // where the program starts
	workdir   string   // where the command runs (shown to people)
	env       []string
	cred      *syscall.Credential
	pty       bool
	sandboxed bool
	mode      string // how it runs: modeContained, modeAllowlisted, …
	nullStdin bool   // its standard input is /dev/null, not a pipe
	owner     string // who may follow it (see ownerOf)
	timeout   time.Duration
	capped    bool // timeout is the limit the caller of the call set
	// foreground: the caller cannot follow it in the background.
	foreground bool
	killGrace  time.Duration
	ttl        time.Duration
	maxOutput  int
	// release, when set, is called once the command has exited (see
	// sandbox.Plan.Release).
	release func()
	// net is the sandbox's network, when it has one.
	net *netAccess
}

// session is one command started by exec, running or finished.
type session struct {
	id        string
	command   string
	workdir   string
	sandboxed bool
	mode      string
	owner     string
	capped    bool
	// foreground: its caller cannot follow it in the background.
	foreground bool
	pty        bool
	pid        int
	started    time.Time
	timeout    time.Duration
	killGrace  time.Duration
	ttl        time.Duration

	cmd     *exec.Cmd
	release func() // see spawnSpec.release; called by supervise
	net     *netAccess
	out     *output
	reader  *os.File // the output's read end (or the terminal's master side)

	stdinMu sync.Mutex
	stdin   *os.File // nil once closed

	stopOnce sync.Once
	stopCh   chan struct{}
	stopWhy  stopReason // set before stopCh is closed

	done chan struct{}
	end  exitInfo // set before done is closed

	mu     sync.Mutex
	cursor int64 // output offset the last poll (or exec) returned up to
}

// exitInfo is how a command ended.
type exitInfo struct {
	code      int            // exit code; -1 when killed by a signal
	signal    syscall.Signal // the signal that killed it, when code is -1
	reason    stopReason     // why Toolbelt stopped it, if it did
	err       error          // waiting for it failed
	ended     time.Time
	lingering bool // processes of its group outlived every kill attempt
}

// start starts the command and the goroutines that read its output and
// supervise it. wg counts the supervisor.
func start(id string, sp spawnSpec, wg *sync.WaitGroup) (*session, error) {
	cmd := &exec.Cmd{Path: sp.path, Args: sp.args, Env: sp.env, Dir: sp.dir}
	attrs := &syscall.SysProcAttr{Setsid: true, Credential: sp.cred}
	s := &session{
		id: id, command: sp.command, workdir: sp.workdir, sandboxed: sp.sandboxed, pty: sp.pty,
		mode: sp.mode, owner: sp.owner, capped: sp.capped, foreground: sp.foreground,
		timeout: sp.timeout, killGrace: sp.killGrace, ttl: sp.ttl,
		cmd: cmd, release: sp.release, net: sp.net, out: newOutput(sp.maxOutput),
		stopCh: make(chan struct{}), done: make(chan struct{}),
	}
	if sp.pty {
		attrs.Setctty = true
		master, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: ptyRows, Cols: ptyCols}, attrs)
		if err != nil {
			return nil, err
		}
		s.reader, s.stdin = master, master
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		var inR, inW *os.File
		if !sp.nullStdin {
			if inR, inW, err = os.Pipe(); err != nil {
				closeAll(outR, outW)
				return nil, err
			}
			cmd.Stdin = inR
		} // else os/exec gives it /dev/null
		// One pipe for stdout and stderr keeps them in the order written.
		cmd.Stdout, cmd.Stderr = outW, outW
		cmd.SysProcAttr = attrs
		err = cmd.Start()
		closeAll(outW) // the child has its own copies
		if inR != nil {
			closeAll(inR)
		}
		if err != nil {
			closeAll(outR)
			if inW != nil {
				closeAll(inW)
			}
			return nil, err
		}
		s.reader, s.stdin = outR, inW
	}
	s.pid = cmd.Process.Pid
	s.started = time.Now()
	wg.Add(1)
	go s.supervise(wg)
	return s, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// stop asks the supervisor to end the command (SIGTERM to its process group,
// SIGKILL after the grace period). The first reason given is kept.
func (s *session) stop(why stopReason) {
	s.stopOnce.Do(func() {
		s.stopWhy = why
		close(s.stopCh)
	})
}

// supervise reads the command's output, enforces its timeout, carries out
// stop requests, and when the command exits ends what it left running in
// its process group. It closes s.done when all of that is over.
func (s *session) supervise(wg *sync.WaitGroup) {
	defer wg.Done()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		buf := make([]byte, readChunk)
		for {
			n, err := s.reader.Read(buf)
			if n > 0 {
				_, _ = s.out.Write(buf[:n])
			}
			if err != nil {
				return // EOF, or EIO from a terminal whose other side closed
			}
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- s.cmd.Wait() }()

	timeout := time.NewTimer(s.timeout)
	defer timeout.Stop()
	var grace *time.Timer
	var graceC <-chan time.Time
	stopCh := s.stopCh
	var waitErr error
	for exited := false; !exited; {
		select {
		case waitErr = <-waited:
			exited = true
		case <-timeout.C:
			s.stop(stopTimeout)
		case <-stopCh:
			stopCh = nil
			signalGroup(s.pid, syscall.SIGTERM)
			grace = time.NewTimer(s.killGrace)
			graceC = grace.C
		case <-graceC:
			graceC = nil
			signalGroup(s.pid, syscall.SIGKILL)
		}
	}
	if grace != nil {
		grace.Stop()
	}
	lingering := !endGroup(s.pid, s.killGrace)
	if s.release != nil {
		s.release()
	}

	select {
	case <-readerDone:
	case <-time.After(drainWait):
		// A process outside the group still holds the output open; stop
		// reading so the session can finish.
		_ = s.reader.Close()
		<-readerDone
	}
	s.closeStdin()
	_ = s.reader.Close()

	info := exitInfo{code: -1, ended: time.Now(), lingering: lingering}
	select {
	case <-s.stopCh:
		info.reason = s.stopWhy
	default:
	}
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		info.code = 0
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			info.signal = ws.Signal()
		} else {
			info.code = ee.ExitCode()
		}
	default:
		info.err = waitErr
	}
	s.end = info
	close(s.done)
}

// signalGroup sends sig to every process in the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// groupExists reports whether any process, zombies included, is left in
// the process group pgid.
func groupExists(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}

// endGroup ends the processes a command left in its group: SIGTERM, then
// SIGKILL after grace, then waits for them to die. It reports whether they
// did.
func endGroup(pgid int, grace time.Duration) bool {
	if !groupAlive(pgid) {
		return true
	}
	signalGroup(pgid, syscall.SIGTERM)
	if waitGone(pgid, grace) {
		return true
	}
	signalGroup(pgid, syscall.SIGKILL)
	return waitGone(pgid, reapWait)
}

// waitGone waits up to d for the process group to have no live process.
func waitGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// finished reports whether the command has ended and been cleaned up.
func (s *session) finished() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// deadlineMargin is how long before its context's deadline a call stops
// waiting for a command and returns, so that the command goes on in the
// background instead of being stopped with the call; with less than twice
// that left, the call waits half of what is left.
const deadlineMargin = time.Second

// withinDeadline returns d, shortened so that a wait of d ends
// deadlineMargin (or half of what is left, if less) before ctx's deadline.
func withinDeadline(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		d = min(d, max(left-min(deadlineMargin, left/2), 0))
	}
	return d
}

// wait waits until the command finishes, d passes (ending before ctx's
// deadline), or ctx is done, and reports whether it finished.
func (s *session) wait(ctx context.Context, d time.Duration) bool {
	d = withinDeadline(ctx, d)
	if d <= 0 {
		return s.finished()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return s.finished()
}

// unread returns the output produced since the last call and moves the
// cursor past it.
func (s *session) unread() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	text, next := s.out.Since(s.cursor, !s.finished())
	s.cursor = next
	return text
}

// stdinWriteTimeout bounds a write to a command that does not read its input.
const stdinWriteTimeout = 10 * time.Second

// write sends data to the command's standard input, then closes it when
// eof is set (on a terminal, sends Ctrl-D instead).
func (s *session) write(ctx context.Context, data string, eof bool) (int, error) {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	if s.stdin == nil {
		return 0, errors.New("its standard input is already closed")
	}
	_ = s.stdin.SetWriteDeadline(time.Now().Add(stdinWriteTimeout))
	stopAbort := context.AfterFunc(ctx, func() { _ = s.stdin.SetWriteDeadline(time.Unix(1, 0)) })
	defer stopAbort()
	n, err := io.WriteString(s.stdin, data)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return n, fmt.Errorf("the process is not reading its input (wrote %d of %d bytes)", n, len(data))
		}
		return n, err
	}
	if eof {
		if s.pty {
			_, err = s.stdin.Write([]byte{4}) // Ctrl-D: end of input at the start of a line
			return n, err
		}
		err = s.stdin.Close()
		s.stdin = nil
	}
	return n, err
}

// closeStdin closes the command's standard input, if it is open.
func (s *session) closeStdin() {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	if s.stdin != nil && s.stdin != s.reader {
		_ = s.stdin.Close()
	}
	s.stdin = nil
}

// signalName names a signal as people know it ("SIGKILL").
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
