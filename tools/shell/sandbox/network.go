package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// Network gives a sandboxed command the network through a proxy on the
// host (internal/netproxy), and through nothing else: the sandbox keeps its
// own, empty network namespace, the proxy's Unix socket is bound into it,
// and a forwarder in the sandbox — this very program, run again (see
// forwardArg) — listens on ProxyAddr in the sandbox's loopback and passes
// every connection to the socket. The command's proxy variables point at
// ProxyAddr.
type Network struct {
	// Socket is the proxy's Unix socket on the host.
	Socket string
	// Program is the forwarder's executable on the host, a program that
	// links this package; "" is this program (os.Executable).
	Program string
}

// ProxyAddr is where the forwarder listens in the sandbox's own loopback,
// which nothing else uses.
const ProxyAddr = "127.0.0.1:3128"

// Where the forwarder and the proxy's socket are in the sandbox.
const (
	forwarderPath = "/run/toolbelt/forward"
	socketPath    = "/run/toolbelt/proxy.sock"
)

// forwardArg, as the first argument of this program, makes it the
// forwarder rather than itself: forwardArg ADDR SOCKET -- COMMAND…
// listens on ADDR, passes each connection to the Unix socket SOCKET, runs
// COMMAND, and exits as COMMAND does. A Go program that links this package
// becomes the forwarder when started so, before its main runs (see init),
// so that the sandbox can use the program that runs it without another
// binary.
const forwardArg = "__toolbelt-sandbox-forward"

func init() {
	if len(os.Args) > 1 && os.Args[1] == forwardArg {
		os.Exit(forward(os.Args[2:]))
	}
}

// networkArgs are bubblewrap's arguments that show the forwarder and the
// proxy's socket in the sandbox, and the forwarder's command line, which
// runs the rest.
func networkArgs(n *Network) (mounts, command []string, err error) {
	exe := n.Program
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("sandbox: the network needs this program in the sandbox, but where it is is unknown: %w", err)
		}
	}
	mounts = []string{"--ro-bind", exe, forwarderPath, "--ro-bind", n.Socket, socketPath}
	return mounts, []string{forwarderPath, forwardArg, ProxyAddr, socketPath, "--"}, nil
}

// networkEnv are the proxy variables of a command with the network: npm,
// pip, go, curl and most others read them. Loopback stays direct (servers
// the command starts itself).
func networkEnv() map[string]string {
	u := "http://" + ProxyAddr
	env := map[string]string{}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env[k] = u
		env[strings.ToLower(k)] = u
	}
	env["NO_PROXY"] = "localhost,127.0.0.1,::1"
	env["no_proxy"] = env["NO_PROXY"]
	return env
}

// forward is the forwarder (see forwardArg); it returns the exit status.
func forward(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintf(os.Stderr, "sandbox network: usage: %s ADDR SOCKET -- COMMAND...\n", forwardArg)
		return 126
	}
	addr, sock, argv := args[0], args[1], args[3:]
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox network: the forwarder cannot listen on %s: %v\n", addr, err)
		return 126
	}
	go relay(l, sock)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A signal for the forwarder is for the command it runs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox network: %v\n", err)
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 126
	}
	return 0
}

// relay passes every connection l accepts to the Unix socket sock.
func relay(l net.Listener, sock string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("unix", sock)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{})
			go func() {
				io.Copy(up, c)
				up.(*net.UnixConn).CloseWrite()
				close(done)
			}()
			io.Copy(c, up)
			c.(*net.TCPConn).CloseWrite()
			<-done
		}()
	}
}
