package channels

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/config"
)

// IRC is a channel on an IRC network: it joins the configured rooms,
// passes on what is said there and what is sent to its nick, and sends
// PRIVMSGs. IRC keeps no history and has no message ids, reactions, edits
// or deletions: ids are made up, read returns what the channel saw.
type IRC struct {
	unsupported
	recent
	name string
	cfg  config.Channel
	nick string
	o    Options

	mu     sync.Mutex
	conn   net.Conn
	w      *bufio.Writer
	seq    int
	done   chan struct{}
	closed bool
}

// ircLine is the most bytes of text sent in one PRIVMSG: IRC lines are at
// most 512 bytes with the prefix the server adds.
const ircLine = 400

func newIRC(name string, ch config.Channel, o Options) (*IRC, error) {
	if ch.PasswordEnv != "" && ch.Username == "" {
		return nil, fmt.Errorf("channels.%s: passwordEnv is for SASL PLAIN, which needs username too", name)
	}
	nick := ch.Nick
	if nick == "" {
		nick = "toolbelt"
	}
	return &IRC{unsupported: unsupported{"IRC"}, name: name, cfg: ch, nick: nick, o: o}, nil
}

// Capabilities: IRC receives and sends text only.
func (c *IRC) Capabilities() Capabilities {
	return Capabilities{Receive: true, Targets: "a room (#name) or a nick, for a direct message"}
}

// Start connects, registers (with SASL PLAIN when a password is set),
// joins the rooms and then passes on each message until Stop. It returns
// once the rooms are joined, or with why registration failed.
func (c *IRC) Start(ctx context.Context, deliver func(Message)) error {
	pass, err := c.o.secret(c.name, "passwordEnv", c.cfg.PasswordEnv)
	if err != nil {
		return err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", c.cfg.Server)
	if err != nil {
		return fmt.Errorf("channel %s: %w", c.name, err)
	}
	if c.cfg.TLS {
		host, _, _ := net.SplitHostPort(c.cfg.Server)
		conn = tls.Client(conn, &tls.Config{ServerName: host, RootCAs: c.o.RootCAs})
	}
	c.mu.Lock()
	c.conn, c.w, c.done = conn, bufio.NewWriter(conn), make(chan struct{})
	c.mu.Unlock()
	r := bufio.NewReader(conn)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	err = c.register(r, pass)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		conn.Close()
		close(c.done)
		return fmt.Errorf("channel %s: %w", c.name, err)
	}
	conn.SetDeadline(time.Time{})
	go c.receive(r, deliver)
	return nil
}

// register introduces the channel (logging in with SASL PLAIN when pass
// is set) and joins its rooms, answering PINGs.
func (c *IRC) register(r *bufio.Reader, pass string) error {
	if pass != "" {
		c.send("CAP REQ :sasl")
	}
	c.send("NICK " + c.nick)
	c.send("USER " + c.nick + " 0 * :Toolbelt")
	joined := map[string]bool{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("registering with %s: %w", c.cfg.Server, err)
		}
		msg := parseIRC(line)
		switch msg.command {
		case "PING":
			c.send("PONG :" + msg.trailing())
		case "CAP":
			if len(msg.params) >= 2 && msg.params[1] == "ACK" {
				c.send("AUTHENTICATE PLAIN")
			} else if len(msg.params) >= 2 && msg.params[1] == "NAK" {
				return errors.New("the server does not offer SASL: remove passwordEnv or use a server that does")
			}
		case "AUTHENTICATE":
			c.send("AUTHENTICATE " + base64.StdEncoding.EncodeToString([]byte(c.cfg.Username+"\x00"+c.cfg.Username+"\x00"+pass)))
		case "903":
			c.send("CAP END")
		case "902", "904", "905", "906":
			return fmt.Errorf("SASL login as %s refused: %s", c.cfg.Username, msg.trailing())
		case "433":
			return fmt.Errorf("the nick %s is taken: set another with nick", c.nick)
		case "ERROR", "465":
			return fmt.Errorf("the server refused: %s", msg.trailing())
		case "001":
			if len(c.cfg.Rooms) == 0 {
				return nil
			}
			for _, room := range c.cfg.Rooms {
				c.send("JOIN " + room)
			}
		case "366": // end of a room's names: joined
			if len(msg.params) >= 2 {
				joined[strings.ToLower(msg.params[1])] = true
			}
			if len(joined) == len(c.cfg.Rooms) {
				return nil
			}
		case "403", "405", "471", "473", "474", "475":
			return fmt.Errorf("joining %s refused: %s", strings.Join(msg.params[1:2], ""), msg.trailing())
		}
	}
}

// receive passes on PRIVMSGs and answers PINGs until the connection ends.
func (c *IRC) receive(r *bufio.Reader, deliver func(Message)) {
	defer close(c.done)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		msg := parseIRC(line)
		switch msg.command {
		case "PING":
			c.send("PONG :" + msg.trailing())
		case "PRIVMSG":
			if m, ok := c.incoming(msg); ok {
				c.add(m)
				deliver(m)
			}
		}
	}
}

// incoming makes the Message of a PRIVMSG; CTCP (actions, versions) is
// skipped.
func (c *IRC) incoming(msg ircMessage) (Message, bool) {
	if len(msg.params) < 2 || strings.HasPrefix(msg.trailing(), "\x01") {
		return Message{}, false
	}
	nick, _, _ := strings.Cut(msg.prefix, "!")
	m := Message{ID: c.nextID(), Channel: c.name, Sender: nick, SenderMask: msg.prefix, Text: msg.trailing(), Time: time.Now()}
	if target := msg.params[0]; strings.ContainsAny(target[:1], "#&") {
		m.Conversation = target
		for _, sep := range []string{":", ","} {
			if rest, ok := cutFold(m.Text, c.nick+sep); ok {
				m.Text, m.Mention = strings.TrimSpace(rest), true
				break
			}
		}
	} else {
		m.Conversation, m.Direct, m.Mention = nick, true, true
	}
	return m, true
}

// cutFold is strings.CutPrefix ignoring case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func (c *IRC) nextID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	return "irc-" + strconv.Itoa(c.seq)
}

// send writes one line; errors show on the next read.
func (c *IRC) send(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.WriteString(line + "\r\n")
	c.w.Flush()
}

// Send sends out's text to its target, a PRIVMSG a line (long lines split).
// Attachments cannot be sent on IRC.
func (c *IRC) Send(ctx context.Context, out Outgoing) (Message, error) {
	if len(out.Attachments) > 0 {
		return Message{}, fmt.Errorf("%w: IRC carries text only, no attachments", ErrUnsupported)
	}
	if strings.ContainsAny(out.Target, " \r\n") || out.Target == "" {
		return Message{}, fmt.Errorf("%q is not an IRC target: give a room (#name) or a nick", out.Target)
	}
	c.mu.Lock()
	up := c.conn != nil && !c.closed
	c.mu.Unlock()
	if !up {
		return Message{}, fmt.Errorf("channel %s is not connected", c.name)
	}
	for _, line := range strings.Split(out.Text, "\n") {
		for _, part := range splitBytes(strings.TrimRight(line, "\r"), ircLine) {
			c.send("PRIVMSG " + out.Target + " :" + part)
		}
	}
	m := Message{ID: c.nextID(), Channel: c.name, Conversation: out.Target, Sender: c.nick, Text: out.Text, ReplyTo: out.ReplyTo, Time: time.Now()}
	c.add(m)
	return m, ctx.Err()
}

// splitBytes cuts s into pieces of at most n bytes, at rune boundaries;
// an empty s is one empty piece (IRC needs a space for an empty line).
func splitBytes(s string, n int) []string {
	if s == "" {
		return []string{" "}
	}
	var parts []string
	for len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		parts, s = append(parts, s[:i]), s[i:]
	}
	return append(parts, s)
}

// Stop says goodbye and closes the connection.
func (c *IRC) Stop(ctx context.Context) error {
	c.mu.Lock()
	if c.conn == nil || c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.send("QUIT :bye")
	c.conn.Close()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ircMessage is one line of the protocol (RFC 1459 §2.3.1).
type ircMessage struct {
	prefix, command string
	params          []string
}

// trailing is the last parameter ("" when there is none).
func (m ircMessage) trailing() string {
	if len(m.params) == 0 {
		return ""
	}
	return m.params[len(m.params)-1]
}

// parseIRC reads a line: [:prefix] command params [:trailing]; IRCv3 tags
// are skipped.
func parseIRC(line string) ircMessage {
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "@") {
		_, line, _ = strings.Cut(line, " ")
	}
	var m ircMessage
	if strings.HasPrefix(line, ":") {
		m.prefix, line, _ = strings.Cut(line[1:], " ")
	}
	line, trailing, hasTrailing := strings.Cut(line, " :")
	fields := strings.Fields(line)
	if len(fields) > 0 {
		m.command, m.params = strings.ToUpper(fields[0]), fields[1:]
	}
	if hasTrailing {
		m.params = append(m.params, trailing)
	}
	return m
}
