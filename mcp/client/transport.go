package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/textclip"
)

// inheritedEnv are the variables a stdio server gets from Toolbelt's own
// environment (the set the MCP reference clients pass on, plus the locale):
// nothing that usually holds a secret. Anything else must be configured.
var inheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "TZ", "LANG", "LANGUAGE"}

// inherited reports whether a stdio server gets the variable from
// Toolbelt's environment.
func inherited(key string) bool {
	return slices.Contains(inheritedEnv, key) || strings.HasPrefix(key, "LC_")
}

// expand replaces each ${NAME} in a configured value with the variable from
// Toolbelt's environment (config.ExpandEnv), so a secret need not be
// written in the configuration. A variable that is not set, and has no
// default, is an error.
func expand(what, v string) (string, error) {
	out, missing := config.ExpandEnv(v, os.LookupEnv)
	if len(missing) > 0 {
		return "", fmt.Errorf("%s refers to ${%s}, which is not set in Toolbelt's environment", what, strings.Join(missing, "}, ${"))
	}
	return out, nil
}

// environment is the environment of a stdio server: the inherited
// variables, those of its envFile, and the configured ones (which win).
func environment(srv config.MCPServer) ([]string, error) {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && inherited(k) {
			env[k] = v
		}
	}
	if srv.EnvFile != "" {
		file, err := config.ReadEnvFile(srv.EnvFile)
		if err != nil {
			return nil, fmt.Errorf("envFile: %w", err)
		}
		maps.Copy(env, file)
	}
	for k, v := range srv.Env {
		val, err := expand("env."+k, v)
		if err != nil {
			return nil, err
		}
		env[k] = val
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out, nil
}

// process is a stdio server's child process, in a process group of its own
// so that whatever it starts ends with it.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // write end of the child's standard input
	stdout *os.File // read end of its standard output
	stderr *os.File // read end of its standard error

	exited  chan struct{} // closed once the child has exited
	err     error         // what cmd.Wait returned; set before exited is closed
	logDone chan struct{} // closed when the stderr reader ends
	last    atomic.Pointer[string]

	grace    time.Duration
	stopOnce sync.Once
	stopErr  error // why stop had to signal the process
}

// startProcess starts a stdio server. Its standard error goes to log, line
// by line; grace is how long it has to exit after its input is closed
// before it is terminated, and as long again before it is killed.
func startProcess(name string, srv config.MCPServer, log *slog.Logger, grace time.Duration) (*process, error) {
	env, err := environment(srv)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Dir, cmd.Env = srv.Cwd, env
	ownGroup(cmd)
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		for _, f := range files {
			f.Close() // a nil *os.File closes with an error, harmlessly
		}
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	// The child has its own copies of its ends.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("starting %s: %w", srv.Command, err)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, exited: make(chan struct{}), logDone: make(chan struct{}), grace: grace}
	go p.wait()
	go p.logStderr(name, log)
	return p, nil
}

// wait reaps the child, then ends the rest of its process group.
func (p *process) wait() {
	p.err = p.cmd.Wait()
	signalGroup(p.cmd, os.Kill)
	close(p.exited)
}

// maxLogLine bounds a line of a server's standard error in the log.
const maxLogLine = 4096

// logStderr logs the server's standard error line by line and keeps the
// last line that is not blank, to explain an exit.
func (p *process) logStderr(name string, log *slog.Logger) {
	defer close(p.logDone)
	r := bufio.NewReaderSize(p.stderr, maxLogLine)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			s := strings.TrimRight(string(line), "\r\n")
			if strings.TrimSpace(s) != "" {
				p.last.Store(&s)
				log.Info("mcp server stderr", "server", name, "line", s)
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// exitError says how the process ended, with its last line on standard
// error; nil while it runs.
func (p *process) exitError() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	// The last lines may still be in the pipe: read them to its end (the
	// group is killed on exit, so it ends at once, unless a descendant that
	// left the group holds it open).
	select {
	case <-p.logDone:
	case <-time.After(stderrDrain):
	}
	err := p.err
	if err == nil {
		err = errors.New("exited")
	}
	if last := p.last.Load(); last != nil {
		return fmt.Errorf("%w (last line on stderr: %s)", err, scrub(*last))
	}
	return err
}

// stderrDrain bounds how long an exit's explanation waits for the rest of
// the server's standard error.
const stderrDrain = time.Second

// maxReasonLine bounds the line of standard error that explains an exit.
const maxReasonLine = 300

// scrub makes a line a server wrote to standard error fit to show a model,
// which is told why the server is down: it is cut to maxReasonLine
// characters (textclip.Clip),
// and each secret in it (a token, a password in a URL, a private key — what
// the audit log redacts) is replaced.
func scrub(line string) string {
	return audit.RedactText(textclip.Clip(line, maxReasonLine))
}

// stop ends the process as the MCP specification asks: its input is
// closed; if it has not exited within the grace period its group is sent
// SIGTERM, and after another grace period SIGKILL. Then the pipes are
// closed, standard error once read to its end (or after stderrDrain, when a
// descendant that left the group holds it open). It returns an error when
// the process had to be signalled.
func (p *process) stop() error {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		exited := func() bool {
			select {
			case <-p.exited:
				return true
			case <-time.After(p.grace):
				return false
			}
		}
		if !exited() {
			signalGroup(p.cmd, terminate)
			p.stopErr = fmt.Errorf("did not exit within %s of its input closing, so it was terminated", p.grace)
			if !exited() {
				signalGroup(p.cmd, os.Kill)
				<-p.exited
				p.stopErr = fmt.Errorf("did not exit within %s of its input closing, nor of SIGTERM, so it was killed", p.grace)
			}
		}
		p.stdout.Close()
		// The last lines may still be in the pipe: closing it now would
		// lose them (and with them exitError's explanation), so the reader
		// gets to its end first, as long as exitError would wait.
		select {
		case <-p.logDone:
		case <-time.After(stderrDrain):
		}
		p.stderr.Close()
		<-p.logDone
	})
	return p.stopErr
}

// stdioPipe is the connection to a process as the SDK wants it: closing it
// stops the process.
type stdioPipe struct{ p *process }

func (s stdioPipe) Read(b []byte) (int, error)  { return s.p.stdout.Read(b) }
func (s stdioPipe) Write(b []byte) (int, error) { return s.p.stdin.Write(b) }
func (s stdioPipe) Close() error                { return s.p.stop() }

// transport returns an SDK transport over the process's standard input and
// output.
func (p *process) transport() mcp.Transport {
	return lineTransport{stdioPipe{p}}
}

// headerTransport adds configured headers to every request to an HTTP
// server; the protocol's own headers (session, protocol version, content
// types) are never replaced.
type headerTransport struct {
	base    *http.Transport
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		if _, set := req.Header[k]; !set {
			req.Header[k] = v
		}
	}
	return t.base.RoundTrip(req)
}

// httpClient returns the client for an HTTP server: its own connection
// pool (closed with the connection), sending the configured headers.
func httpClient(srv config.MCPServer) (*http.Client, *http.Transport, error) {
	h := http.Header{}
	for k, v := range srv.Headers {
		val, err := expand("headers."+k, v)
		if err != nil {
			return nil, nil, err
		}
		h.Set(k, val)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: &headerTransport{base: base, headers: h}}, base, nil
}

// sseTransport reaches a server over HTTP with server-sent events. The
// SDK's transport keeps its event stream on the context Connect is given,
// and connecting is bounded by a timeout; so the stream gets a context of
// its own, ended when the timeout ends Connect before the stream is open,
// or when the connection is closed.
type sseTransport struct{ mcp.SSEClientTransport }

// Connect opens the event stream.
func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.SSEClientTransport.Connect(streamCtx)
	if !stop() && err == nil {
		conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &streamConn{Connection: conn, cancel: cancel}, nil
}

// streamConn ends its stream's context when it is closed.
type streamConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

// Close closes the connection and ends its stream.
func (c *streamConn) Close() error {
	defer c.cancel()
	return c.Connection.Close()
}
