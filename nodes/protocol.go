package nodes

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Path is where a gateway serves its nodes' WebSocket.
const Path = "/nodes/ws"

// ProtocolVersion is the version of the messages below; a node says which
// it speaks in its hello.
const ProtocolVersion = 1

// message is one JSON text frame of the protocol. A node opens with
// hello (with its token once paired); the gateway answers welcome, or,
// for a node without a token, pairing (the code), then paired (the
// token) once the owner approves; a refusal closes the connection with
// status 1008 (policy violation) and the reason, and the node stops; a
// gateway that cannot take the node now (its store fails, too many
// requests wait) closes it with 1013 (try again later), and the node
// tries again with backoff. Then the gateway sends call and cancel,
// the node progress and result. Heartbeats are WebSocket pings, both
// ways.
type message struct {
	Type string `json:"type"`
	// hello
	Version      int               `json:"version,omitempty"`
	Node         string            `json:"node,omitempty"`
	Name         string            `json:"name,omitempty"`
	Token        string            `json:"token,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Info         map[string]string `json:"info,omitempty"`
	// welcome, pairing
	Gateway string    `json:"gateway,omitempty"`
	Code    string    `json:"code,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
	// call, cancel, progress, result
	ID         string          `json:"id,omitempty"`
	Capability string          `json:"capability,omitempty"`
	Params     json.RawMessage `json:"params,omitempty"`
	Text       string          `json:"text,omitempty"`
	Result     *tool.Result    `json:"result,omitempty"`
}

// The types of messages.
const (
	typeHello    = "hello"
	typeWelcome  = "welcome"
	typePairing  = "pairing"
	typePaired   = "paired"
	typeCall     = "call"
	typeCancel   = "cancel"
	typeProgress = "progress"
	typeResult   = "result"
)

// endpoint returns the WebSocket URL of the gateway at addr: an http(s)
// or ws(s) URL, its path defaulting to Path.
func endpoint(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return "", &url.Error{Op: "parse", URL: addr, Err: errScheme}
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = Path
	}
	return u.String(), nil
}

var errScheme = errors.New("a gateway's URL is http://, https://, ws:// or wss://")

// CheckTransport returns an error when the gateway at addr (as
// Client.Gateways has it) is reached over plain ws:// (an http:// or ws://
// URL) on another machine than this one: the node's token and the calls
// would cross the network unencrypted. wss:// (https://) and the loopback
// interface are fine.
func CheckTransport(addr string) error {
	ws, err := endpoint(addr)
	if err != nil {
		return err
	}
	u, err := url.Parse(ws)
	if err != nil {
		return err
	}
	if u.Scheme == "wss" || u.Hostname() == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: %w", addr, ErrInsecure)
}

// ErrInsecure is CheckTransport's error of a plain ws:// gateway on
// another machine.
var ErrInsecure = errors.New("plain ws:// to another machine: the node's token and its calls would cross the network unencrypted")
