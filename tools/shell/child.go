package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Child is a program other packages run with exec's protections: in a
// process group of its own that is ended as a whole when the context is
// done or the program exits, with an environment made by [ScrubbedEnv], and
// standard output bounded. Directory tools and command hooks run their
// programs this way.
type Child struct {
	// Path is the program; Args its arguments, Args[0] included.
	Path string
	Args []string
	// Dir is where it starts.
	Dir string
	// Env is its whole environment ("NAME=value").
	Env []string
	// Cred, when set, is the user it runs as.
	Cred *syscall.Credential
	// Stdin is written to its standard input, which is then closed.
	Stdin []byte
	// Input, when set, is its standard input instead: the read end of a
	// pipe whose write end the caller keeps, to write more while it runs
	// (and closes once RunChild has returned).
	Input *os.File
	// MaxStdout bounds the standard output kept; a program that writes more
	// is stopped and the result has StdoutOverflow set. Zero means 1 MiB.
	MaxStdout int
	// Stderr, when set, receives its standard error line by line; after a
	// line longer than 64 KiB the rest is discarded.
	Stderr func(line string)
	// KillGrace is the time between SIGTERM and SIGKILL; zero means 2 s.
	KillGrace time.Duration
	// Done, when set, is called once the program has exited, or failed to
	// start (see sandbox.Plan.Release).
	Done func()
}

// ChildResult is how a [Child] ended.
type ChildResult struct {
	// Stdout is its standard output (at most MaxStdout bytes).
	Stdout []byte
	// StdoutOverflow says it wrote more than MaxStdout and was stopped.
	StdoutOverflow bool
	// ExitCode is its exit code; -1 when a signal ended it.
	ExitCode int
	// Signal is the signal that ended it, when ExitCode is -1.
	Signal syscall.Signal
	// Stopped says it was stopped because the context was done (see
	// ctx.Err() for whether by timeout or cancellation).
	Stopped bool
}

// ScrubbedEnv returns the environment a child program runs with: this
// process's environment without the variables whose names look secret
// (unless allow lists them, as names or path.Match patterns), then set.
func ScrubbedEnv(allow []string, set map[string]string) []string {
	return commandEnv(os.Environ(), allow, set)
}

// maxStderrLine bounds one line of a child's standard error.
const maxStderrLine = 64 << 10

// RunChild runs c until it exits, its output overflows or ctx is done, and
// ends whatever it left running in its process group. The error is set
// only when the program could not be started.
func RunChild(ctx context.Context, c Child) (ChildResult, error) {
	if c.Done != nil {
		defer c.Done()
	}
	maxOut := c.MaxStdout
	if maxOut <= 0 {
		maxOut = 1 << 20
	}
	grace := c.KillGrace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return ChildResult{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return ChildResult{}, err
	}
	cmd := &exec.Cmd{
		Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env,
		Stdin:       bytes.NewReader(c.Stdin),
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Credential: c.Cred},
	}
	if c.Input != nil {
		cmd.Stdin = c.Input
	}
	err = cmd.Start()
	closeAll(outW, errW) // the child has its own copies
	if err != nil {
		closeAll(outR, errR)
		return ChildResult{}, err
	}
	pid := cmd.Process.Pid

	overflow := make(chan struct{})
	var stdout []byte
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		buf := make([]byte, readChunk)
		signalled := false
		for {
			n, err := outR.Read(buf)
			if n > 0 {
				room := maxOut - len(stdout)
				if n > room {
					stdout = append(stdout, buf[:room]...)
					if !signalled {
						signalled = true
						close(overflow)
					}
				} else {
					stdout = append(stdout, buf[:n]...)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 4096), maxStderrLine)
		for sc.Scan() {
			if c.Stderr != nil {
				c.Stderr(sc.Text())
			}
		}
		if errors.Is(sc.Err(), bufio.ErrTooLong) {
			_, _ = io.Copy(io.Discard, errR) // drain the rest
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var res ChildResult
	var graceC <-chan time.Time
	ctxDone, overflowC := ctx.Done(), (<-chan struct{})(overflow)
	stop := func() {
		ctxDone, overflowC = nil, nil
		signalGroup(pid, syscall.SIGTERM)
		graceC = time.After(grace)
	}
	var waitErr error
	for exited := false; !exited; {
		select {
		case waitErr = <-waited:
			exited = true
		case <-ctxDone:
			res.Stopped = true
			stop()
		case <-overflowC:
			res.StdoutOverflow = true
			stop()
		case <-graceC:
			graceC = nil
			signalGroup(pid, syscall.SIGKILL)
		}
	}
	endGroup(pid, grace)
	for _, done := range []chan struct{}{outDone, errDone} {
		select {
		case <-done:
		case <-time.After(drainWait):
			closeAll(outR, errR) // a process outside the group holds the pipe open
			<-done
		}
	}
	closeAll(outR, errR)
	res.Stdout = stdout
	res.ExitCode = -1
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		res.ExitCode = 0
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		} else {
			res.ExitCode = ee.ExitCode()
		}
	}
	return res, nil
}

// SignalName names a signal as people know it ("SIGKILL").
func SignalName(sig syscall.Signal) string { return signalName(sig) }

// EndGroup ends what is left in the process group pgid: SIGTERM, then
// SIGKILL after grace; it reports whether the group is gone.
func EndGroup(pgid int, grace time.Duration) bool { return endGroup(pgid, grace) }
