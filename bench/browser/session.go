package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may be JPEG
	_ "image/png"
	"log"
	"os/exec"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/bench/internal/harness"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
)

// session is one running server of a side and the client connected to it.
type session struct {
	side   *side
	cmd    *exec.Cmd
	cs     *sdk.ClientSession
	stderr *syncbuf.Buffer // what the server has written on its stderr
}

// open starts the side's server (in a process group of its own) and
// initializes an MCP session with it, over stdio or, for a server that
// prints its endpoint, over streamable HTTP; the error says why the
// server did not answer, with the end of its stderr.
func open(ctx context.Context, s *side) (*session, error) {
	cmd := s.command()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ses := &session{side: s, cmd: cmd, stderr: new(syncbuf.Buffer)}
	cmd.Stderr = ses.stderr
	var transport sdk.Transport = &sdk.CommandTransport{Command: cmd}
	if s.http {
		transport = &sdk.StreamableClientTransport{Endpoint: harness.Serve(cmd)}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "browser-bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("%v; its stderr ends:\n%s", err, ses.stderrTail())
	}
	ses.cs = cs
	return ses, nil
}

// stderrTail is the end of what the server wrote on its stderr.
func (s *session) stderrTail() string {
	errs := s.stderr.String()
	return errs[max(0, len(errs)-2000):]
}

// fail ends the benchmark with a message and the end of the server's
// stderr.
func (s *session) fail(format string, args ...any) {
	log.Fatalf("%s: %s; its stderr ends:\n%s", s.side.name, fmt.Sprintf(format, args...), s.stderrTail())
}

// pid is the server's process id, the root of the tree whose CPU counts.
func (s *session) pid() int { return s.cmd.Process.Pid }

// call makes one call and ends the benchmark if it failed; it returns the
// result.
func (s *session) call(ctx context.Context, p *sdk.CallToolParams) *sdk.CallToolResult {
	res, err := s.cs.CallTool(ctx, p)
	if err != nil {
		s.fail("%s: %v", p.Name, err)
	}
	if res.IsError {
		s.fail("%s %v failed: %s", p.Name, p.Arguments, text(res))
	}
	return res
}

// close ends the session and the server, and returns the processes of its
// tree still alive two seconds after the server exited (killed then, so
// that the next round starts clean).
func (s *session) close() int {
	before := harness.Tree(s.pid())
	_ = s.cs.Close()
	if s.side.http {
		harness.Stop(s.cmd)
	}
	time.Sleep(2 * time.Second)
	left := 0
	for _, p := range before[1:] {
		if harness.Alive(p) {
			left++
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	return left
}

// text is the text of a result's text blocks, one after another.
func text(res *sdk.CallToolResult) string {
	var b bytes.Buffer
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// picture is the first image of a result: its size in bytes and its
// dimensions.
func picture(res *sdk.CallToolResult) (int, string) {
	for _, c := range res.Content {
		if im, ok := c.(*sdk.ImageContent); ok {
			cfg, _, err := image.DecodeConfig(bytes.NewReader(im.Data))
			harness.Check(err)
			return len(im.Data), fmt.Sprintf("%d×%d %s", cfg.Width, cfg.Height, im.MIMEType)
		}
	}
	log.Fatalf("no image in %s", text(res))
	return 0, ""
}
