package dir

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// persistent runs the handler of a tool whose metadata says "persistent":
// one long-lived process that reads a request per line on standard input
// and answers a response per line on standard output, one call at a time.
// It is started by the first call, restarted after it exits, and stopped
// (its whole process group) when a call times out or is cancelled, and by
// Close.
type persistent struct {
	turn chan struct{} // holds a token while a call uses the process

	mu     sync.Mutex
	p      *proc
	closed bool
}

func newPersistent() *persistent {
	return &persistent{turn: make(chan struct{}, 1)}
}

// proc is one running persistent handler.
type proc struct {
	key      string // the workspace, mode and approved code it runs for
	done     func() // removes what was made for it (a copy of the tool's folder)
	pid      int
	stdin    *os.File
	lines    chan []byte // its standard output, a line at a time; closed at its end
	overflow bool        // a line was longer than the limit (set before lines is closed)
	exited   chan struct{}
	state    *os.ProcessState
	out, err *os.File      // the read ends of its standard output and error
	readErr  chan struct{} // closed when its standard error has been read to the end

	mu     sync.Mutex
	stderr func(string) // the current call's
}

// stop ends p's process group and waits for it.
func (p *proc) stop(grace time.Duration) {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
			<-p.exited
		}
	}
	shell.EndGroup(p.pid, grace)
	// Its output readers end now, even if something outside the group
	// still holds the pipes; lines no call will read are dropped.
	_ = p.out.Close()
	_ = p.err.Close()
	for range p.lines {
	}
	<-p.readErr
	p.done()
}

// startProc starts the handler as c describes; done runs once it is
// stopped.
func startProc(c shell.Child, key string, done func(), maxLine int) (*proc, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{outR, outW, errR, errW} {
			_ = f.Close()
		}
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env,
		Stdin: inR, Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Credential: c.Cred},
	}
	err = cmd.Start()
	for _, f := range []*os.File{inR, outW, errW} {
		_ = f.Close()
	}
	if err != nil {
		for _, f := range []*os.File{outR, errR, inW} {
			_ = f.Close()
		}
		if c.Done != nil {
			c.Done()
		}
		return nil, err
	}
	p := &proc{key: key, done: sync.OnceFunc(done), pid: cmd.Process.Pid, stdin: inW, lines: make(chan []byte, 1), exited: make(chan struct{}), out: outR, err: errR, readErr: make(chan struct{})}
	go func() {
		defer close(p.lines)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				p.lines <- bytes.Clone(line)
			}
		}
		p.overflow = errors.Is(sc.Err(), bufio.ErrTooLong)
	}()
	go func() {
		defer close(p.readErr)
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 4096), 64<<10)
		for sc.Scan() {
			p.mu.Lock()
			fn := p.stderr
			p.mu.Unlock()
			if fn != nil {
				fn(sc.Text())
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		if c.Done != nil {
			c.Done()
		}
		close(p.exited)
	}()
	return p, nil
}

// Close refuses later calls, lets a call under way finish until ctx ends,
// then stops the running handler, if any.
func (ps *persistent) Close(ctx context.Context, grace time.Duration) {
	ps.mu.Lock()
	ps.closed = true
	ps.mu.Unlock()
	select {
	case ps.turn <- struct{}{}:
		defer func() { <-ps.turn }()
	case <-ctx.Done():
	}
	ps.mu.Lock()
	p := ps.p
	ps.p = nil
	ps.mu.Unlock()
	if p != nil {
		p.stop(grace)
	}
}

// callPersistent runs one call on the tool's persistent handler, started
// as l says (a running one is used when it was started so).
// Its result is what the handler answered, as a one-shot handler's would
// be; Stopped is set when ctx ended the call.
func (t *Tool) callPersistent(ctx context.Context, in []byte, tc *tool.Context, l launch, stderr func(string)) (shell.ChildResult, error) {
	ps := t.pers
	select {
	case ps.turn <- struct{}{}:
	case <-ctx.Done():
		return shell.ChildResult{Stopped: true}, nil
	}
	defer func() { <-ps.turn }()
	grace := t.opts.KillGrace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	key := tc.Workspace + "\x00" + l.mode + "\x00" + l.code
	ps.mu.Lock()
	if ps.closed {
		ps.mu.Unlock()
		return shell.ChildResult{}, &Failure{Info: tool.ErrorInfo{Message: t.Meta.ID + " has been shut down"}}
	}
	p := ps.p
	ps.mu.Unlock()
	if p != nil && (p.key != key || exited(p)) {
		p.stop(grace) // another workspace, mode or code, or it ended since the last call
		p = nil
	}
	if p == nil {
		c, done, err := t.child(ctx, tc, l)
		if err != nil {
			return shell.ChildResult{}, err
		}
		if p, err = startProc(c, key, done, cmpOr(t.opts.MaxOutput, DefaultMaxOutput)); err != nil {
			done()
			return shell.ChildResult{}, err
		}
		ps.mu.Lock()
		ps.p = p
		ps.mu.Unlock()
	}
	p.mu.Lock()
	p.stderr = stderr
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.stderr = nil
		p.mu.Unlock()
	}()
	drop := func() {
		p.stop(grace)
		ps.mu.Lock()
		if ps.p == p {
			ps.p = nil
		}
		ps.mu.Unlock()
	}
	_ = p.stdin.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := p.stdin.Write(append(bytes.Clone(in), '\n')); err != nil {
		drop()
		return shell.ChildResult{}, &Failure{Info: tool.ErrorInfo{Message: fmt.Sprintf("the persistent handler of %s does not read its requests (%v); it was stopped and starts again with the next call", t.Meta.ID, err), CanRetry: true}}
	}
	var req Request
	_ = json.Unmarshal(in, &req)
	for {
		select {
		case <-ctx.Done():
			drop()
			return shell.ChildResult{Stopped: true}, nil
		case line, ok := <-p.lines:
			if !ok {
				drop()
				res := shell.ChildResult{ExitCode: -1, StdoutOverflow: p.overflow}
				if ws, isWS := p.state.Sys().(syscall.WaitStatus); isWS && !ws.Signaled() {
					res.ExitCode = ws.ExitStatus()
				} else if isWS {
					res.Signal = ws.Signal()
				}
				return res, nil
			}
			var id struct {
				CallID string `json:"callId"`
			}
			if json.Unmarshal(line, &id) == nil && id.CallID != "" && id.CallID != req.CallID {
				continue // a late answer to a call that has ended
			}
			return shell.ChildResult{Stdout: line}, nil
		}
	}
}

func exited(p *proc) bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}
