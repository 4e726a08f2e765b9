package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTimeout bounds one call or one start: a call that takes longer hangs.
const callTimeout = time.Minute

// command is the toolbelt binary with args, in the test's environment.
func (h *harness) command(args ...string) *exec.Cmd {
	cmd := exec.Command(h.bin, args...)
	cmd.Env, cmd.Dir = h.env, h.ws
	return cmd
}

// cliSlot makes calls with `toolbelt call`, one process per call, until
// the round ends. A call not killed must be answered.
func (h *harness) cliSlot(ctx context.Context, slot string, rng *rand.Rand) {
	for ctx.Err() == nil {
		o := nextOp(h.ws, slot, h.ledger.label(slot), cliTools, rng)
		args := []string{"call", o.tool, "--id", o.label, "--workspace", h.ws, "--json", "--args", o.args}
		if o.tool == "exec" {
			args = append(args, "--yes")
		}
		cmd := h.command(args...)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		h.ledger.issue(slot, o)
		p, err := h.procs.start(slot, cmd)
		if err != nil {
			h.ledger.unissue(o)
			return
		}
		if !h.await(p) {
			return
		}
		var msg struct {
			ToolCallID string `json:"toolCallId"`
			IsError    bool   `json:"isError"`
		}
		answered := json.Unmarshal(stdout.Bytes(), &msg) == nil && msg.ToolCallID == o.label
		if answered {
			h.ledger.answer(o.label, msg.IsError)
		}
		if !p.killed.Load() && !answered {
			h.problem("failed start", "%s: toolbelt call %s %s was not killed but not answered (%v): %s", slot, o.tool, o.label, p.err, firstLines(p.stderr.String(), 3))
		}
		h.noteErrors(p)
	}
}

// await waits for p, at most callTimeout; a process that takes longer
// hangs: it is recorded, and killed (false).
func (h *harness) await(p *proc) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(callTimeout):
		h.problem("hang", "%s: a process did not end within %s: %s", p.slot, callTimeout, strings.Join(p.cmd.Args, " "))
		h.procs.mu.Lock()
		p.kill()
		h.procs.mu.Unlock()
		<-p.done
		return false
	}
}

// ended records how a server process the test did not kill ended: with an
// error it is a failed start. What it logged at level ERROR is recorded.
func (h *harness) ended(p *proc, what string) {
	if !p.killed.Load() && p.err != nil {
		h.problem("failed start", "%s: %s ended with %v: %s", p.slot, what, p.err, firstLines(p.stderr.String(), 3))
	}
	h.noteErrors(p)
}

// errorLine is a line a process logs at level ERROR.
var errorLine = regexp.MustCompile(`(?m)^.*level=ERROR.*$`)

// noteErrors records what p logged at level ERROR.
func (h *harness) noteErrors(p *proc) {
	for _, l := range errorLine.FindAllString(p.stderr.String(), -1) {
		h.problem("error logged", "%s: %s", p.slot, l)
	}
}

// mcpSlot makes calls through `toolbelt mcp` processes (stdio), one call at
// a time, starting a new process when one is killed, until the round ends.
func (h *harness) mcpSlot(ctx context.Context, slot string, rng *rand.Rand) {
	for ctx.Err() == nil {
		p, cs, err := h.startMCP(slot)
		if errors.Is(err, errCrashed) {
			return
		}
		if err != nil && p == nil {
			h.problem("failed start", "%s: toolbelt mcp: %v", slot, err)
			return
		}
		if err != nil && !p.killed.Load() {
			h.problem("failed start", "%s: toolbelt mcp was not killed but did not start: %v", slot, err)
		}
		if cs != nil {
			h.callThrough(ctx, slot, cs, p, rng)
			cs.Close() // ends the process, when it lives
		}
		if !h.await(p) {
			return
		}
		h.ended(p, "toolbelt mcp")
	}
}

// startMCP starts `toolbelt mcp` and connects to it over its stdin and
// stdout — pipes of the test's own, which the process's end leaves open, so
// that what it wrote before it died is read.
func (h *harness) startMCP(slot string) (*proc, *sdk.ClientSession, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	cmd := h.command("mcp", "--workspace", h.ws)
	cmd.Stdin, cmd.Stdout = inR, outW
	p, err := h.procs.start(slot, cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "crashtest", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		inW.Close()
		outR.Close()
		return p, nil, err
	}
	return p, cs, nil
}

// callThrough makes slot's calls through session cs with the server
// process p until one gets no answer or the round ends. A call gets no
// answer only because p was killed.
func (h *harness) callThrough(ctx context.Context, slot string, cs *sdk.ClientSession, p *proc, rng *rand.Rand) {
	for ctx.Err() == nil {
		o := nextOp(h.ws, slot, h.ledger.label(slot), mcpTools, rng)
		h.ledger.issue(slot, o)
		cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: o.tool, Arguments: json.RawMessage(o.args)})
		hung := cctx.Err() != nil
		cancel()
		switch {
		case hung:
			h.problem("hang", "%s: %s (%s) got no answer within %s", slot, o.label, o.tool, callTimeout)
		case err != nil && !p.killed.Load():
			h.problem("failed call", "%s: %s (%s) got no answer, but its server was not killed: %v", slot, o.label, o.tool, err)
		}
		if err != nil {
			return
		}
		h.ledger.answer(o.label, res.IsError)
	}
}

// server is the round's `toolbelt serve`: its process and address, both
// replaced when it is killed and started again.
type server struct {
	mu      sync.Mutex
	p       *proc
	url     string
	changed chan struct{} // closed when they change
}

func newServer() *server { return &server{changed: make(chan struct{})} }

// set publishes the server p listening at url (nil and "" while none runs).
func (s *server) set(p *proc, url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p, s.url = p, url
	close(s.changed)
	s.changed = make(chan struct{})
}

// next returns a running server other than was, waiting for one until ctx
// ends (false).
func (s *server) next(ctx context.Context, was *proc) (*proc, string, bool) {
	for {
		s.mu.Lock()
		p, url, changed := s.p, s.url, s.changed
		s.mu.Unlock()
		if p != nil && p != was {
			return p, url, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, "", false
		}
	}
}

// banner is the line serve prints with its address.
var banner = regexp.MustCompile(`listening on (http://\S+/mcp)`)

// serveSlot runs `toolbelt serve`, starting it again when it is killed,
// until the round ends.
func (h *harness) serveSlot(ctx context.Context, srv *server) {
	const slot = "s0"
	for ctx.Err() == nil {
		cmd := h.command("serve", "--addr", "127.0.0.1:0", "--workspace", h.ws)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			h.problem("failed start", "serve: %v", err)
			return
		}
		p, err := h.procs.start(slot, cmd)
		if err != nil {
			return
		}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := banner.FindStringSubmatch(sc.Text()); m != nil {
				srv.set(p, m[1])
			}
		}
		<-p.done
		srv.set(nil, "")
		h.ended(p, "toolbelt serve")
	}
}

// httpSlot makes calls through the server over streamable HTTP, one at a
// time, connecting again to each new server, until the round ends.
func (h *harness) httpSlot(ctx context.Context, slot string, srv *server, rng *rand.Rand) {
	client := sdk.NewClient(&sdk.Implementation{Name: "crashtest", Version: "1"}, nil)
	hc := &http.Client{Timeout: callTimeout}
	var was *proc
	for {
		p, url, ok := srv.next(ctx, was)
		if !ok {
			return
		}
		was = p
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		cs, err := client.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		cancel()
		if err != nil {
			if !p.killed.Load() && ctx.Err() == nil {
				h.problem("failed call", "%s: connecting to toolbelt serve at %s, which was not killed: %v", slot, url, err)
			}
			continue
		}
		h.callThrough(ctx, slot, cs, p, rng)
		cs.Close()
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " | ")
}
