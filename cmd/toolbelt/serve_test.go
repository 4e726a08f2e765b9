package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
)

func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// workspaceWith returns a workspace holding a 4 KB file.
func workspaceWith(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	line := strings.Repeat("x", 63) + "\n"
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(strings.Repeat(line, 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	ws := workspaceWith(t)
	cmd := exec.Command(os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = cliEnvironment(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tt := range list.Tools {
		names = append(names, tt.Name)
	}
	for _, want := range []string{"read", "write", "exec", "test_greet", "result_read"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "notes.txt"}})
	if err != nil || res.IsError || !strings.HasPrefix(textOf(res), strings.Repeat("x", 63)) {
		t.Fatalf("read: %v %q", err, textOf(res))
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "../../etc/passwd"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "Refused to read") {
		t.Errorf("confinement over MCP: %v %q", err, textOf(res))
	}
}

func TestServeOverHTTP(t *testing.T) {
	t.Parallel()
	ws := workspaceWith(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--workspace", ws)
	cmd.Env = cliEnvironment(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The first line says where it listens; the rest says how to connect.
	sc := bufio.NewScanner(stdout)
	var printed []string
	url := ""
	for sc.Scan() {
		printed = append(printed, sc.Text())
		if m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
		if strings.Contains(sc.Text(), "Ctrl-C stops the server.") {
			break
		}
	}
	if url == "" {
		t.Fatalf("no address printed:\n%s\n%s", strings.Join(printed, "\n"), stderr.String())
	}
	out := strings.Join(printed, "\n")
	for _, want := range []string{"workspace  " + ws, `"type": "http"`, `"url": "` + url + `"`, `"args": [`, `"mcp",`} {
		if !strings.Contains(out, want) {
			t.Errorf("startup output lacks %q:\n%s", want, out)
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_greet", Arguments: map[string]any{"name": "HTTP"}})
	if err != nil || textOf(res) != "Hello, HTTP." {
		t.Fatalf("%v %q", err, textOf(res))
	}
	cs.Close()
	// SIGTERM stops it cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, cmd); code != 0 {
		t.Errorf("exit %d after SIGTERM: %s", code, stderr.String())
	}
}

func TestServeRefusesAnOpenAddressWithoutAToken(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "serve", "--addr", "0.0.0.0:0").expect(t, 2)
	if !strings.Contains(r.stderr, "refusing to listen on 0.0.0.0:0 without a bearer token") {
		t.Errorf("%q", r.stderr)
	}
}

// TestMCPServers: toolbelt mcp servers starts the servers toolbelt.yaml
// imports and shows their state, one that cannot start among them; their
// tools are listed in a section of their own.
func TestMCPServers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, fmt.Sprintf(`mcpServers:
  self:
    command: %q
    args: [mcp, --workspace, %q]
    env: {%s: "1", TOOLBELT_DATA: %q, XDG_CONFIG_HOME: %q, NO_COLOR: "1", GORACE: "atexit_sleep_ms=0"}
  broken:
    command: /nonexistent/mcp-server
  later:
    command: /nonexistent/mcp-server
    disabled: true
  zbroken:
    command: /nonexistent/other-server
`, os.Args[0], workspaceWith(t), cliEnv, filepath.Join(dir, "data"), filepath.Join(dir, "config")))
	r := runCLI(t, "", "--config", cfg, "mcp", "servers").expect(t, 0)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("mcp servers:\n%s", r.stdout)
	}
	// A server that cannot start is retried in the background (the first
	// retry a second later) while the command waits for self: how often it
	// was retried by then, and whether it is caught in the middle of a
	// retry, depends on how long self takes to start.
	for i, want := range []string{
		`^SERVER +TRANSPORT +STATE +TOOLS +RESTARTS +AUTH +NOTE$`,
		`^broken +stdio +(down|starting) +0 +[0-9]+ +none +.*/nonexistent/mcp-server.*no such file or directory$`,
		`^later +stdio +disabled +0 +0 +none$`,
		`^self +stdio +ready +[1-9][0-9]* +0 +none$`,
		`^zbroken +stdio +(down|starting) +0 +[0-9]+ +none +.*/nonexistent/other-server`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d: %q does not match %s", i, lines[i], want)
		}
	}
	// Notes line up under NOTE, also after rows that have none.
	col := strings.Index(lines[0], "NOTE")
	for _, i := range []int{1, 4} {
		if len(lines[i]) <= col || lines[i][col-1] != ' ' || lines[i][col] == ' ' {
			t.Errorf("the note of line %d does not start under NOTE (column %d):\n%s", i, col, r.stdout)
		}
	}
	r = runCLI(t, "", "--config", cfg, "list", "--section", "mcp").expect(t, 0)
	// The resources tool, registered with the imports, reads their resources.
	if !regexp.MustCompile(`^mcp\n  resources +MCP Resources +low +available\n  self__apply_patch `).MatchString(r.stdout) || !regexp.MustCompile(`\n  self__read +Read File +low +available\n`).MatchString(r.stdout) {
		t.Errorf("list --section mcp:\n%s", r.stdout)
	}
}

// serveBanner starts toolbelt serve with args and returns what it printed up
// to "Ctrl-C stops the server.", and the command (killed at the end).
func serveBanner(t *testing.T, exe string, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	return serveBannerIn(t, "", exe, env, args...)
}

// serveBannerIn is serveBanner in the working directory dir.
func serveBannerIn(t *testing.T, dir, exe string, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(exe, append([]string{"serve"}, args...)...)
	cmd.Env = env
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	var printed []string
	for sc.Scan() {
		printed = append(printed, sc.Text())
		if strings.Contains(sc.Text(), "Ctrl-C stops the server.") {
			go func() {
				for sc.Scan() {
				}
			}()
			return strings.Join(printed, "\n"), cmd
		}
	}
	t.Fatalf("no banner:\n%s\n%s", strings.Join(printed, "\n"), stderr.String())
	return "", nil
}

// TestServeBannerAndFrontPage: the stdio snippet names this executable by
// its absolute path, GET / says what is served where, and on 0.0.0.0 the
// banner names an address other machines can reach.
func TestServeBannerAndFrontPage(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "toolbelt")
	copyFile(t, os.Args[0], bin)
	ws := workspaceWith(t)
	out, _ := serveBanner(t, bin, cliEnvironment(t), "--addr", "127.0.0.1:0", "--workspace", ws)
	if !strings.Contains(out, `"command": "`+bin+`"`) {
		t.Errorf("the stdio snippet does not name %s:\n%s", bin, out)
	}
	addr := bannerAddr(t, out)
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(body), "MCP (streamable HTTP)  http://"+addr+"/mcp") {
		t.Errorf("GET /: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if res, err := http.Get("http://" + addr + "/nothing"); err != nil || res.StatusCode != 404 {
		t.Errorf("GET /nothing: %v %v", err, res)
	} else {
		res.Body.Close()
	}

	env := append(cliEnvironment(t), "TOOLBELT_MCP_TOKEN=test-token")
	out, _ = serveBanner(t, os.Args[0], env, "--addr", "0.0.0.0:0", "--workspace", ws)
	m := regexp.MustCompile(`listening on http://([^/]+)/mcp`).FindStringSubmatch(out)
	if m == nil || strings.HasPrefix(m[1], "0.0.0.0") || !strings.Contains(out, `"url": "http://`+m[1]+`/mcp"`) ||
		!strings.Contains(out, "Bearer ${TOOLBELT_MCP_TOKEN}") {
		t.Fatalf("0.0.0.0 banner:\n%s", out)
	}
	// Its HTTP snippet, pasted into toolbelt.yaml as it is, imports this
	// server over HTTP with the token's header.
	snippet, _, _ := strings.Cut(strings.SplitN(out, "another client over HTTP:\n", 2)[1], "\n\n")
	pasted, err := config.Parse("toolbelt.yaml", []byte(snippet))
	if err != nil {
		t.Fatalf("the banner's snippet does not load: %v\n%s", err, snippet)
	}
	if srv := pasted.MCPServers["toolbelt"]; srv.Transport() != config.TransportHTTP || srv.URL != "http://"+m[1]+"/mcp" || srv.Headers["Authorization"] != "Bearer ${TOOLBELT_MCP_TOKEN}" {
		t.Errorf("the banner's snippet means %+v", srv)
	}
	// The address it names works, with the token.
	req, _ := http.NewRequest("GET", "http://"+m[1]+"/", nil)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("GET / at the named address %s: %v %v", m[1], err, res)
	} else {
		res.Body.Close()
	}
}

func TestServeBusyPortSuggestsAddr(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	r := runCLI(t, "", "serve", "--addr", addr, "--workspace", t.TempDir()).expect(t, 2)
	if !strings.Contains(r.stderr, addr+" is already in use") || !strings.Contains(r.stderr, "--addr 127.0.0.1:") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestMCPAtATerminal: started at a terminal, toolbelt mcp explains itself on
// stderr; stdout stays the protocol's. Piped, it says nothing.
func TestMCPAtATerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	ws := workspaceWith(t)
	cmd := exec.Command(os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = cliEnvironment(t)
	var stdout bytes.Buffer
	stderr := &syncbuf.Buffer{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "Ctrl-C stops.") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	for _, want := range []string{"toolbelt mcp speaks MCP (JSON-RPC) on stdin and stdout", "npx @modelcontextprotocol/inspector", "--workspace " + ws} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}
	// Piped: the server reads the end of its input and stops, silently.
	r := runCLI(t, "", "mcp", "--workspace", ws)
	if strings.Contains(r.stderr, "speaks MCP") || r.stdout != "" {
		t.Errorf("piped: stdout %q stderr %q", r.stdout, r.stderr)
	}
}

// TestServePacesTheCollector: `toolbelt serve` keeps gcHeadroom
// between the live heap and the next garbage collection once it has
// started (the runtime's gctrace shows each collection's goal), and a
// GOGC in the environment is left to decide.
func TestServePacesTheCollector(t *testing.T) {
	t.Parallel()
	goals := func(t *testing.T, gogc string, rest bool) []int {
		ws := workspaceWith(t)
		cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--workspace", ws)
		cmd.Env = append(cliEnvironment(t), "GODEBUG=gctrace=1", "GOGC="+gogc)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr syncbuf.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		sc := bufio.NewScanner(stdout)
		url := ""
		for url == "" && sc.Scan() {
			if m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
				url = m[1]
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "pace-test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err, stderr.String())
		}
		// Past the start's own pacing (collectLessAtStart), then enough
		// calls for several collections (each allocates over 100 KB).
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_greet", Arguments: map[string]any{"name": "GC"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(startGCFor + 200*time.Millisecond)
		before := len(stderr.String())
		for range 500 {
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_greet", Arguments: map[string]any{"name": "GC"}}); err != nil {
				t.Fatal(err)
			}
		}
		cs.Close()
		after := len(stderr.String())
		if rest {
			// At rest, the server collects and gives its memory back: a
			// collection it forces (debug.FreeOSMemory).
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(stderr.String()[after:], "(forced)") {
				if time.Now().After(deadline) {
					t.Fatalf("no forced collection in the 20 s after the calls:\n%s", stderr.String()[after:])
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		wait(t, cmd)
		var goals []int
		for _, m := range regexp.MustCompile(`(\d+) MB goal`).FindAllStringSubmatch(stderr.String()[before:after], -1) {
			n, _ := strconv.Atoi(m[1])
			goals = append(goals, n)
		}
		if len(goals) < 3 {
			t.Fatalf("%d collections during 500 calls, want 3 or more:\n%s", len(goals), stderr.String())
		}
		// The first may come before the pacer has seen a live heap.
		return goals[1:]
	}
	t.Run("paced", func(t *testing.T) {
		t.Parallel()
		if g := goals(t, "", true); slices.Min(g) < gcHeadroom>>20 {
			t.Errorf("heap goals %v MB: want %d MB or more", g, gcHeadroom>>20)
		}
	})
	t.Run("GOGC", func(t *testing.T) {
		t.Parallel()
		if g := goals(t, "100", false); slices.Max(g) >= gcHeadroom>>20 {
			t.Errorf("heap goals %v MB with GOGC=100: want under %d MB", g, gcHeadroom>>20)
		}
	})
}

// TestServeQuietAboutStaleSessions: toolbelt serve with a tool folder,
// one client session gone stale (initialized over HTTP, its stream never
// opened or gone) and one live client: each edit of the tool folder tells
// the live client (notifications/tools/list_changed), and serve's stderr
// carries no warning about the stale session, whatever the number of edits.
func TestServeQuietAboutStaleSessions(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	folder := filepath.Join(base, "tools", "note")
	writeToolFolder(t, folder, 0o755, map[string]string{
		"metadata.json": `{"name": "note", "description": "Version 0.", "readOnly": true}`,
		"handler.sh":    `cat >/dev/null; echo '{"success": true, "result": "ok"}'`,
	})
	cfg := filepath.Join(base, "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("workspace: "+workspaceWith(t)+"\ntools:\n  dirs:\n    - path: tools\n      trusted: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, cmd, stderr := startServe(t, append(cliEnvironment(t), "TOOLBELT_CONFIG="+cfg))

	// The stale session: initialized, and never a stream to be told on.
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	if code, body := postMCP(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", session); code >= 300 {
		t.Fatalf("initialized: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var told atomic.Int32
	changed := make(chan struct{}, 16)
	live, err := sdk.NewClient(&sdk.Implementation{Name: "live", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			told.Add(1)
			changed <- struct{}{}
		},
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for i := 1; i <= 3; i++ {
		before := told.Load()
		description := fmt.Sprintf("Version %d.", i)
		if err := os.WriteFile(filepath.Join(folder, "metadata.json"), []byte(`{"name": "note", "description": "`+description+`", "readOnly": true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		// Told of the edit, and tools/list shows it.
		for told.Load() == before || !describedAs(ctx, t, live, "note", description) {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("edit %d: the live client was not told of it (%d notifications in all)", i, told.Load())
			}
		}
	}
	live.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, cmd); code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if out := stderr.String(); strings.Contains(out, "level=WARN") || strings.Contains(out, "level=ERROR") || strings.Contains(out, "list_changed") {
		t.Errorf("serve's stderr speaks of the stale session:\n%s", out)
	}
}

// describedAs reports whether the client's tools/list gives the tool name
// the description.
func describedAs(ctx context.Context, t *testing.T, cs *sdk.ClientSession, name, description string) bool {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(list.Tools, func(tt *sdk.Tool) bool { return tt.Name == name && tt.Description == description })
}

// TestAwaitFirstAnswerCountsFromTheTools: without a first answer, the
// work a server's start leaves for later waits a while after its tools
// can be listed, not after the start: while imported servers still list
// their tools it does not begin, up to firstAnswerCap waits. A first
// answer lets it begin at once, tools ready or not.
func TestAwaitFirstAnswerCountsFromTheTools(t *testing.T) {
	t.Parallel()
	run := func(first, ready chan struct{}) chan struct{} {
		done := make(chan struct{})
		go func() {
			awaitFirstAnswer(first, ready, 100*time.Millisecond)
			close(done)
		}()
		return done
	}
	returns := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("did not return %s", what)
		}
	}
	first, ready := make(chan struct{}), make(chan struct{})
	done := run(first, ready)
	select {
	case <-done:
		t.Fatal("returned before the tools could be listed, without an answer")
	case <-time.After(300 * time.Millisecond): // 3 waits; the cap is firstAnswerCap
	}
	close(ready)
	returns(done, "the wait after the tools could be listed")

	first = make(chan struct{})
	done = run(first, make(chan struct{}))
	close(first)
	returns(done, "at the first answer")

	// An imported server's start that never ends holds it back no longer
	// than the cap.
	returns(run(make(chan struct{}), make(chan struct{})), "after firstAnswerCap waits")
}

// bannerAddr returns the host:port toolbelt serve's banner says it listens
// on (127.0.0.1).
func bannerAddr(t *testing.T, banner string) string {
	t.Helper()
	m := regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+)/mcp`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no address in the banner:\n%s", banner)
	}
	return m[1]
}
