package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// nodeProcess is toolbelt node running in a child process, its stdout
// read line by line.
type nodeProcess struct {
	cmd   *exec.Cmd
	lines chan string
}

func startNodeProcess(t *testing.T, env []string, args ...string) *nodeProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"node"}, args...)...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &nodeProcess{cmd: cmd, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node's stderr:\n%s", stderr.String())
		}
	})
	return p
}

// await returns the first line the node prints that matches re, failing
// when it exits first.
func (p *nodeProcess) await(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(60 * time.Second)
	var seen []string
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the node exited before printing %q:\n%s", re, strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			if m := rx.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("the node did not print %q:\n%s", re, strings.Join(seen, "\n"))
		}
	}
}

// exit waits for the node to exit (it was refused) and returns its exit
// code.
func (p *nodeProcess) exit(t *testing.T) int {
	t.Helper()
	guard := time.After(60 * time.Second) // against hanging, not a timing assertion
	for open := true; open; {
		select {
		case _, open = <-p.lines:
		case <-guard:
			t.Fatal("the node still runs")
		}
	}
	_ = p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

// listNodes runs toolbelt nodes --json with env.
func listNodes(t *testing.T, env []string) listedNodes {
	t.Helper()
	r := runCLIWith(t, env, "", "", "nodes", "--json").expect(t, 0)
	var l listedNodes
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	return l
}

// TestNodePairedThroughTheCLI: a gateway (toolbelt serve) and a node
// (toolbelt node) in two processes, paired through toolbelt nodes approve
// with the code both show; an agent (a replayed model) runs a command on
// the node and reads a file there; the node's own policy refuses what its
// configuration denies although the gateway's owner asks; the node killed
// (-9) is offline, calls to it fail at once, and started again it
// reconnects; a node with a token the gateway does not know is refused.
func TestNodePairedThroughTheCLI(t *testing.T) {
	t.Parallel()
	gwEnv := cliEnvironment(t)
	banner, _ := serveBanner(t, os.Args[0], gwEnv, "--addr", "127.0.0.1:0", "--workspace", t.TempDir())
	addr := bannerAddr(t, banner)
	gateway := "http://" + addr

	nodeEnv := cliEnvironment(t)
	nodeWS := t.TempDir()
	if err := os.WriteFile(filepath.Join(nodeWS, "hello.txt"), []byte("greetings from the node\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nodeWS, "keep.txt"), []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The node's own configuration: rm is denied there, whoever asks.
	nodeCfg := writeConfig(t, "tools:\n  allow: [\"exec(echo *)\", \"exec(rm *)\"]\n  deny: [\"exec(rm *)\"]\n")
	nodeArgs := []string{"--config", nodeCfg, "--gateway", gateway, "--workspace", nodeWS, "--name", "lab"}
	node := startNodeProcess(t, nodeEnv, nodeArgs...)
	code := node.await(t, `pairing code ([A-Z0-9]{4}-[A-Z0-9]{4}):`)[1]
	l := listNodes(t, gwEnv)
	if len(l.Pending) != 1 || l.Pending[0].Code != code || l.Pending[0].Name != "lab" || len(l.Nodes) != 0 {
		t.Fatalf("before approval: %+v", l)
	}
	r := runCLIWith(t, gwEnv, "", "", "nodes", "approve", code).expect(t, 0)
	if !strings.Contains(r.stdout, "Pairing "+code+" of node lab") || !strings.Contains(r.stdout, "approved") {
		t.Errorf("approve: %s", r.stdout)
	}
	node.await(t, `connected to 127\.0\.0\.1:\d+#[0-9a-f]+ as lab`)
	l = listNodes(t, gwEnv)
	if len(l.Nodes) != 1 || !l.Nodes[0].Online || l.Nodes[0].Name != "lab" || l.Nodes[0].Info["workspace"] == "" || len(l.Pending) != 0 {
		t.Fatalf("after approval: %+v", l)
	}
	r = runCLIWith(t, gwEnv, "", "", "nodes", "approve", code).expect(t, 1)
	if !strings.Contains(r.stderr, "no pairing request with code "+code+" is waiting") {
		t.Errorf("approving twice: %s", r.stderr)
	}

	// An agent on the gateway's store runs a command and reads a file on
	// the node.
	srv := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "nodes", Args: `{"action":"invoke","node":"lab","capability":"run","params":{"command":"echo hi-from-the-node"}}`},
			llmtest.Call{ID: "c2", Name: "nodes", Args: `{"action":"invoke","node":"lab","capability":"read","params":{"path":"hello.txt"}}`})},
		llmtest.Response{Body: llmtest.Chat("", "The node says hi.")})
	cfg := writeConfig(t, "model: replay/test-model\nproviders:\n  replay:\n    base: openai\n    url: "+srv.URL+"/v1\n")
	r = runCLIWith(t, gwEnv, "", "", "--config", cfg, "run", "--yes", "--workspace", t.TempDir(), "greet from the lab").expect(t, 0)
	if !strings.Contains(r.stdout, "The node says hi.") {
		t.Errorf("run: %s %s", r.stdout, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	} else if body := compactJSON(t, reqs[1].Body); !strings.Contains(body, "hi-from-the-node") || !strings.Contains(body, "greetings from the node") {
		t.Errorf("the tool results the model got: %s", body)
	}

	// The owner asks for what the node's policy denies: refused there.
	r = runCLIWith(t, gwEnv, "", "", "call", "nodes", "--yes", "--args", `{"action":"invoke","node":"lab","capability":"run","params":{"command":"rm keep.txt"}}`).expect(t, 1)
	if !strings.Contains(r.stderr, "not allowed here (global: deny exec(rm *))") {
		t.Errorf("the node's deny: %s %s", r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(nodeWS, "keep.txt")); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}

	// Killed, the node is offline and calls fail at once; started again,
	// it reconnects with its token.
	if err := node.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = node.cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); listNodes(t, gwEnv).Nodes[0].Online; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed node is still online")
		}
	}
	r = runCLIWith(t, gwEnv, "", "", "call", "nodes", "--yes", "--args", `{"action":"invoke","node":"lab","capability":"status"}`).expect(t, 1)
	if !strings.Contains(r.stderr, "node lab is offline: last seen ") {
		t.Errorf("an offline node: %s %s", r.stdout, r.stderr)
	}
	node = startNodeProcess(t, nodeEnv, nodeArgs...)
	node.await(t, `connected to 127\.0\.0\.1:\d+#[0-9a-f]+ as lab`)
	r = runCLIWith(t, gwEnv, "", "", "call", "nodes", "--yes", "--json", "--args", `{"action":"notify","node":"lab","text":"tea is ready"}`).expect(t, 0)
	if !strings.Contains(r.stdout, "shown on node lab") {
		t.Errorf("notify: %s", r.stdout)
	}
	node.await(t, `notification: tea is ready`)

	// A node whose token the gateway does not know is refused.
	stranger := cliEnvironment(t)
	var data string
	for _, kv := range stranger {
		if v, ok := strings.CutPrefix(kv, "TOOLBELT_DATA="); ok {
			data = v
		}
	}
	if err := os.MkdirAll(filepath.Join(data, "node"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "node", "node.json"), []byte(`{"id":"node-stranger","name":"stranger","token":"tbn_guess"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, stranger, "", "", "node", "--gateway", gateway, "--workspace", t.TempDir()).expect(t, 2)
	if !strings.Contains(r.stderr, "the gateway refused this node: this node is not paired with the gateway") {
		t.Errorf("a stranger: %s", r.stderr)
	}
	if l := listNodes(t, gwEnv); len(l.Nodes) != 1 || l.Nodes[0].ID == "node-stranger" {
		t.Errorf("the stranger is listed: %+v", l)
	}

	// Removed by the owner, the node is disconnected and refused: it exits.
	r = runCLIWith(t, gwEnv, "", "", "nodes", "remove", "lab").expect(t, 0)
	if !strings.Contains(r.stdout, "Removed node lab (node-") {
		t.Errorf("remove: %s", r.stdout)
	}
	if code := node.exit(t); code != 2 {
		t.Errorf("the removed node exited with %d, want 2", code)
	}
	if l := listNodes(t, gwEnv); len(l.Nodes) != 0 {
		t.Errorf("listed after the removal: %+v", l.Nodes)
	}
	r = runCLIWith(t, gwEnv, "", "", "nodes", "remove", "lab").expect(t, 1)
	if !strings.Contains(r.stderr, `no node "lab"`) {
		t.Errorf("removing it again: %s", r.stderr)
	}
}

// TestNodeRefusesPlainRemoteGateway: toolbelt node refuses a gateway on
// another machine over plain http:// (ws://), naming --insecure.
func TestNodeRefusesPlainRemoteGateway(t *testing.T) {
	t.Parallel()
	r := runCLIWith(t, cliEnvironment(t), "", "", "node", "--gateway", "http://192.0.2.1:7420", "--workspace", t.TempDir()).expect(t, 2)
	if !strings.Contains(r.stderr, "plain ws:// to another machine") || !strings.Contains(r.stderr, "pass --insecure") || !strings.Contains(r.stderr, "wss://") {
		t.Errorf("a plain remote gateway: %s", r.stderr)
	}
}

// TestNodeMovesBetweenGateways: two toolbelt serve processes on one store
// (a SQLite file; PostgreSQL when TOOLBELT_TEST_POSTGRES_URL is set) and a
// node given both: a call made from the store reaches the node through
// the gateway holding it; that gateway killed (-9), the node moves to the
// other, and calls reach it there.
func TestNodeMovesBetweenGateways(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		nodeMoves(t, cliEnvironment(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		nodeMoves(t, append(cliEnvironment(t), "TOOLBELT_DATABASE_URL="+storetest.Postgres(t)))
	})
}

func nodeMoves(t *testing.T, env []string) {
	ws := t.TempDir()
	urlA, a, _ := startServe(t, env, "--workspace", ws)
	urlB, _, _ := startServe(t, env, "--workspace", ws)
	gwA, gwB := strings.TrimSuffix(urlA, "/mcp"), strings.TrimSuffix(urlB, "/mcp")
	node := startNodeProcess(t, cliEnvironment(t), "--gateway", gwA, "--gateway", gwB, "--workspace", t.TempDir(), "--name", "rover")
	code := node.await(t, `pairing code ([A-Z0-9]{4}-[A-Z0-9]{4}):`)[1]
	runCLIWith(t, env, "", "", "nodes", "approve", code).expect(t, 0)
	node.await(t, `connected to `+regexp.QuoteMeta(strings.TrimPrefix(gwA, "http://")))
	status := func() string {
		t.Helper()
		r := runCLIWith(t, env, "", "", "call", "nodes", "--yes", "--args", `{"action":"invoke","node":"rover","capability":"status"}`).expect(t, 0)
		return r.stdout
	}
	if s := status(); !strings.Contains(s, `"name": "rover"`) {
		t.Errorf("status through gateway A: %s", s)
	}
	if l := listNodes(t, env); len(l.Nodes) != 1 || !strings.HasPrefix(l.Nodes[0].Gateway, strings.TrimPrefix(gwA, "http://")+"#") {
		t.Fatalf("held by: %+v", l.Nodes)
	}
	_ = a.Process.Kill()
	_ = a.Wait()
	node.await(t, `connected to `+regexp.QuoteMeta(strings.TrimPrefix(gwB, "http://")))
	if l := listNodes(t, env); len(l.Nodes) != 1 || !l.Nodes[0].Online || !strings.HasPrefix(l.Nodes[0].Gateway, strings.TrimPrefix(gwB, "http://")+"#") {
		t.Fatalf("after the move: %+v", l.Nodes)
	}
	if s := status(); !strings.Contains(s, `"name": "rover"`) {
		t.Errorf("status through gateway B: %s", s)
	}
	r := runCLIWith(t, env, "", "", "nodes", "remove", "rover", "--json").expect(t, 0)
	var removed struct{ ID, Name string }
	if err := json.Unmarshal([]byte(r.stdout), &removed); err != nil || removed.Name != "rover" || !strings.HasPrefix(removed.ID, "node-") {
		t.Errorf("remove --json: %s %v", r.stdout, err)
	}
	if code := node.exit(t); code != 2 {
		t.Errorf("the removed node exited with %d, want 2", code)
	}
}
