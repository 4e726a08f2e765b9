package harness

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"os/exec"
	"strings"
	"time"
)

// Stdio is a server on stdio driven by raw JSON-RPC lines, one request at a
// time.
type Stdio struct {
	Cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// Start starts cmd and initializes the session as client name.
func Start(cmd *exec.Cmd, name string) *Stdio {
	s := Launch(cmd)
	s.Handshake(name)
	return s
}

// Launch starts cmd with its stdin and stdout piped to the session.
func Launch(cmd *exec.Cmd) *Stdio {
	in, err := cmd.StdinPipe()
	Check(err)
	out, err := cmd.StdoutPipe()
	Check(err)
	Check(cmd.Start())
	return &Stdio{Cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

// Send writes one line to the server.
func (s *Stdio) Send(line string) {
	_, err := io.WriteString(s.in, line+"\n")
	Check(err)
}

// answer reads lines until the answer to request id (notifications and
// requests from the server are skipped).
func (s *Stdio) answer(id int) string {
	want := fmt.Sprintf(`"id":%d,`, id)
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			log.Fatalf("%s: %v", s.Cmd.Path, err)
		}
		if strings.Contains(line, want) && (strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`)) {
			return line
		}
	}
}

// Request sends a request and returns the line that answers it.
func (s *Stdio) Request(method, params string) string {
	s.id++
	s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, params))
	return s.answer(s.id)
}

// Handshake initializes the session as client name.
func (s *Stdio) Handshake(name string) {
	s.Request("initialize", fmt.Sprintf(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}`, name))
	s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Close ends the server's input and waits for it to exit, killing it after
// five seconds.
func (s *Stdio) Close() {
	s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-done
	}
}
