package examples_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// The async video demo: a fake video API (examples/async-video/api) and
// two directory tools over it, run by real `toolbelt serve` processes.

const demoSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// proc is a child process whose output is kept.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder // stdout and stderr, line by line
	seen chan struct{}   // signalled on every line
}

func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), seen: make(chan struct{}, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				p.mu.Lock()
				p.out.WriteString(sc.Text() + "\n")
				p.mu.Unlock()
				select {
				case p.seen <- struct{}{}:
				default:
				}
			}
		})
	}
	go func() { wg.Wait(); p.cmd.Wait() }()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill ends the process group with SIGKILL.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// await waits until the output matches re and returns the first submatch.
func (p *proc) await(t *testing.T, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m[len(m)-1]
		}
		select {
		case <-p.seen:
		case <-deadline:
			t.Fatalf("no %q within %s in:\n%s", re, within, p.output())
		}
	}
}

var (
	apiAddr   = regexp.MustCompile(`video API listening on (http://\S+)`)
	serveAddr = regexp.MustCompile(`listening on (http://\S+)/mcp`)
)

// demo is a fake API and the configuration of servers over it.
type demo struct {
	tb, api, config string
	env             []string
	apiProc         *proc
}

func newDemo(t *testing.T, render string, dbEnv string) *demo {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the demo tools' handler is Python")
	}
	d := &demo{tb: bin(t, "toolbelt")}
	d.apiProc = start(t, []string{"TOOLBELT_WEBHOOK_SECRET=" + demoSecret}, bin(t, "api"), "-addr", "127.0.0.1:0", "-render", render)
	d.api = d.apiProc.await(t, apiAddr, 30*time.Second)
	tools, err := filepath.Abs(filepath.Join("async-video", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d.config = filepath.Join(dir, "toolbelt.yaml")
	cfg := fmt.Sprintf("tools:\n  dirs:\n    - path: %s\n      trusted: true\njobs:\n  stepTimeout: 10s\n", tools)
	if err := os.WriteFile(d.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	d.env = []string{"HOME=" + t.TempDir(), "TOOLBELT_WEBHOOK_SECRET=" + demoSecret, "VIDEO_API_URL=" + d.api, dbEnv}
	return d
}

// serve starts a `toolbelt -v serve` on addr and returns it with its base
// URL.
func (d *demo) serve(t *testing.T, ws, addr string) (*proc, string) {
	t.Helper()
	p := start(t, d.env, d.tb, "-v", "--config", d.config, "serve", "--workspace", ws, "--addr", addr)
	return p, p.await(t, serveAddr, 60*time.Second)
}

// freeAddr returns an address on 127.0.0.1 nobody listens on now, for a
// server that must come back on the same address (the webhook URL senders
// were given).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// cli runs a toolbelt command and returns its standard output.
func (d *demo) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(d.tb, append([]string{"--config", d.config}, args...)...)
	cmd.Env = append(os.Environ(), d.env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolbelt %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

type listedJob struct {
	TaskID      string          `json:"taskId"`
	Tool        string          `json:"tool"`
	Status      string          `json:"status"`
	Progress    int             `json:"progress"`
	CreatedAt   time.Time       `json:"createdAt"`
	CompletedAt *time.Time      `json:"completedAt"`
	Result      json.RawMessage `json:"result"`
}

func (d *demo) jobs(t *testing.T, ws string) []listedJob {
	t.Helper()
	var list []listedJob
	if err := json.Unmarshal([]byte(d.cli(t, "jobs", "--workspace", ws, "--json")), &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// awaitAll waits until n jobs exist and all have completed.
func (d *demo) awaitAll(t *testing.T, ws string, n int, within time.Duration) []listedJob {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		list := d.jobs(t, ws)
		done := 0
		for _, j := range list {
			if j.Status == "completed" {
				done++
			}
		}
		if len(list) == n && done == n {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %+v", within, list)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// submit calls an async tool with toolbelt call (which records the job for
// the servers to work) and returns its task id.
func (d *demo) submit(t *testing.T, ws, toolName, prompt string) string {
	t.Helper()
	out := d.cli(t, "call", "--workspace", ws, "--yes", "--json", toolName, "--args", fmt.Sprintf(`{"prompt":%q}`, prompt))
	var msg struct {
		Details struct{ Status, TaskID string }
	}
	if err := json.Unmarshal([]byte(out), &msg); err != nil || msg.Details.Status != "pending" {
		t.Fatalf("call %s: %q", toolName, out)
	}
	return msg.Details.TaskID
}

func (d *demo) submits(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(d.api + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct{ Submits int }
	json.NewDecoder(resp.Body).Decode(&s)
	return s.Submits
}

// completions counts, per task id, the completions the servers' logs
// report (each job's one completion event).
func completions(logs ...string) map[string]int {
	re := regexp.MustCompile(`msg="job finished" taskId=(\S+) tool=\S+ status=completed`)
	n := map[string]int{}
	for _, l := range logs {
		for _, m := range re.FindAllStringSubmatch(l, -1) {
			n[m[1]]++
		}
	}
	return n
}

// TestAsyncVideoOverMCP calls the webhook demo tool through a real MCP
// client against toolbelt serve: the call returns pending at once, the
// client gets the job's progress notifications through to completion, and
// toolbelt jobs shows the result.
func TestAsyncVideoOverMCP(t *testing.T) {
	t.Parallel()
	d := newDemo(t, "2s", "TOOLBELT_DATA="+t.TempDir())
	ws := t.TempDir()
	_, base := d.serve(t, ws, "127.0.0.1:0")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	notes := make(chan *mcp.ProgressNotificationClientRequest, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { notes <- r },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "video_generate", Arguments: map[string]any{"prompt": "a cat on a skateboard"}}
	params.SetProgressToken("video-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var env struct {
		Status, Tool, TaskID, Message string
		EstimatedTime                 float64
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil || res.IsError {
		t.Fatalf("result: %q", text)
	}
	if env.Status != "pending" || env.Tool != "video_generate" || env.EstimatedTime != 10 || !strings.Contains(env.Message, "job_status") {
		t.Fatalf("envelope: %+v", env)
	}
	var last *mcp.ProgressNotificationClientRequest
	for last == nil || !strings.Contains(last.Params.Message, "tool:async:completed") {
		select {
		case last = <-notes:
			if last.Params.ProgressToken != "video-1" || !strings.Contains(last.Params.Message, env.TaskID) {
				t.Errorf("notification %+v", last.Params)
			}
		case <-ctx.Done():
			t.Fatalf("no completion notification; last %+v", last)
		}
	}
	if last.Params.Progress != 100 || last.Params.Total != 100 {
		t.Errorf("completion notification %+v", last.Params)
	}
	// job_status through MCP reads the result.
	st, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "job_status", Arguments: map[string]any{"taskId": env.TaskID}})
	if err != nil {
		t.Fatal(err)
	}
	// The status line is Toolbelt's; what the handler reported comes after
	// it, wrapped as text from outside.
	var s string
	for _, c := range st.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text + "\n"
		}
	}
	if !strings.Contains(s, "completed") || !strings.Contains(s, "videos.example.com") || !strings.Contains(s, "EXTERNAL_UNTRUSTED_CONTENT") {
		t.Errorf("job_status: %q", s)
	}
	list := d.jobs(t, ws)
	if len(list) != 1 || list[0].TaskID != env.TaskID || list[0].Status != "completed" || list[0].Progress != 100 || list[0].CompletedAt == nil || !strings.Contains(string(list[0].Result), ".mp4") {
		t.Errorf("toolbelt jobs --json: %+v", list)
	}
}

// TestAsyncSurvivesKill9: jobs queued, submitted and being polled or
// awaiting their webhook when toolbelt serve is killed with SIGKILL all
// complete after it restarts, each exactly once (one completion in the
// servers' logs, one submission at the API: the idempotency key makes a
// repeated submit start nothing new), and webhooks sent while the server
// was down arrive when the sender retries.
func TestAsyncSurvivesKill9(t *testing.T) {
	t.Parallel()
	d := newDemo(t, "3s", "TOOLBELT_DATA="+t.TempDir())
	ws := t.TempDir()
	addr := freeAddr(t)
	first, _ := d.serve(t, ws, addr)
	var ids []string
	for i := range 3 {
		ids = append(ids, d.submit(t, ws, "video_generate_polling", fmt.Sprintf("polled %d", i)))
		ids = append(ids, d.submit(t, ws, "video_generate", fmt.Sprintf("webhook %d", i)))
	}
	// Wait until the server has polled one, so some are mid-way.
	first.await(t, regexp.MustCompile(`msg="job step" step=poll`), 60*time.Second)
	first.kill()
	// Queued while no server runs.
	ids = append(ids, d.submit(t, ws, "video_generate_polling", "queued while down"))
	ids = append(ids, d.submit(t, ws, "video_generate", "queued while down"))
	time.Sleep(4 * time.Second) // renders finish; their webhooks fail and are retried
	second, _ := d.serve(t, ws, addr)
	list := d.awaitAll(t, ws, len(ids), 3*time.Minute)
	for _, j := range list {
		if !strings.Contains(string(j.Result), ".mp4") {
			t.Errorf("job %s result %s", j.TaskID, j.Result)
		}
	}
	time.Sleep(2 * time.Second) // a duplicate would show by now
	n := completions(first.output(), second.output())
	for _, id := range ids {
		if n[id] != 1 {
			t.Errorf("job %s completed %d times in the logs", id, n[id])
		}
	}
	if s := d.submits(t); s != len(ids) {
		t.Errorf("the API started %d renders for %d jobs", s, len(ids))
	}
}

// TestAsyncTwoNodesOnPostgres: two toolbelt serve processes on one
// PostgreSQL database share the jobs; one is killed, the other finishes
// every job, each once.
func TestAsyncTwoNodesOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := storetest.Postgres(t)
	d := newDemo(t, "4s", "TOOLBELT_DATABASE_URL="+dsn)
	ws := t.TempDir()
	a, _ := d.serve(t, ws, "127.0.0.1:0")
	b, _ := d.serve(t, ws, "127.0.0.1:0")
	var ids []string
	for i := range 8 {
		ids = append(ids, d.submit(t, ws, "video_generate_polling", fmt.Sprintf("clip %d", i)))
	}
	// Both nodes take work.
	a.await(t, regexp.MustCompile(`msg="job step"`), 60*time.Second)
	b.await(t, regexp.MustCompile(`msg="job step"`), 60*time.Second)
	a.kill()
	d.awaitAll(t, ws, len(ids), 3*time.Minute)
	time.Sleep(2 * time.Second)
	n := completions(a.output(), b.output())
	for _, id := range ids {
		if n[id] != 1 {
			t.Errorf("job %s completed %d times in the logs", id, n[id])
		}
	}
	if s := d.submits(t); s != len(ids) {
		t.Errorf("the API started %d renders for %d jobs", s, len(ids))
	}
}

// TestAsyncVideoThroughRun: in `toolbelt run`, a replayed model calls the
// demo's polling video tool and ends its turn; the run works the job
// against the fake API, hands the video's URL to the model as a follow-up
// and prints the model's answer to it.
func TestAsyncVideoThroughRun(t *testing.T) {
	t.Parallel()
	d := newDemo(t, "1s", "TOOLBELT_DATA="+t.TempDir())
	ws := t.TempDir()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Rendering it.", llmtest.Call{ID: "toolu_01V", Name: "video_generate_polling", Args: `{"prompt": "a cat on a skateboard"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "The video is rendering; I will say when it is ready.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Your video of a cat on a skateboard is ready.")})
	out := d.cli(t, "run", "--yes", "--workspace", ws, "--model", "anthropic/claude-test", "--base-url", s.URL, "make a video of a cat on a skateboard")
	if !strings.Contains(out, "Your video of a cat on a skateboard is ready.") {
		t.Errorf("run printed %q", out)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (the call, the turn's end, the follow-up)", len(reqs))
	}
	if second := string(reqs[1].Body); !strings.Contains(second, `\"status\":\"pending\"`) || !strings.Contains(second, "toolu_01V") {
		t.Errorf("the tool result is not the pending envelope for the call:\n%s", second)
	}
	third := string(reqs[2].Body)
	if !strings.Contains(third, "[Background job task") || !strings.Contains(third, "of video_generate_polling completed.]") || !strings.Contains(third, ".mp4") {
		t.Errorf("the follow-up lacks the job's result:\n%s", third)
	}
	list := d.jobs(t, ws)
	if len(list) != 1 || list[0].Status != "completed" || !strings.Contains(string(list[0].Result), ".mp4") {
		t.Errorf("jobs after the run: %+v", list)
	}
	if n := d.submits(t); n != 1 {
		t.Errorf("the API started %d renders for one call", n)
	}
}
