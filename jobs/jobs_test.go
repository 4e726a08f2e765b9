package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/tool"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// fakeAPI is an external service: Submit starts a task (once per
// idempotency key), Poll reports it, finishing after polls polls.
type fakeAPI struct {
	mu       sync.Mutex
	submits  map[string]int // idempotency key → times submitted
	ids      map[string]string
	polls    map[string]int
	finishAt int
	failPoll int // polls that fail before one succeeds
	failAll  bool
}

func newFakeAPI(finishAt int) *fakeAPI {
	return &fakeAPI{submits: map[string]int{}, ids: map[string]string{}, polls: map[string]int{}, finishAt: finishAt}
}

func (f *fakeAPI) Submit(ctx context.Context, req tool.AsyncSubmit) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAll {
		return "", errors.New("service unavailable")
	}
	f.submits[req.IdempotencyKey]++
	if id, ok := f.ids[req.IdempotencyKey]; ok {
		return id, nil
	}
	id := fmt.Sprintf("ext-%d", len(f.ids)+1)
	f.ids[req.IdempotencyKey] = id
	return id, nil
}

func (f *fakeAPI) Poll(ctx context.Context, ext string) (tool.AsyncStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failPoll > 0 {
		f.failPoll--
		return tool.AsyncStatus{}, errors.New("timeout talking to the service")
	}
	f.polls[ext]++
	n := f.polls[ext]
	if n >= f.finishAt {
		return tool.AsyncStatus{Status: tool.AsyncCompleted, Result: json.RawMessage(`{"url":"https://example.com/` + ext + `.mp4"}`)}, nil
	}
	return tool.AsyncStatus{Status: tool.AsyncProcessing, Progress: n * 100 / f.finishAt, Message: fmt.Sprintf("step %d", n)}, nil
}

func (f *fakeAPI) OnWebhook(ctx context.Context, body json.RawMessage) (tool.AsyncStatus, error) {
	var st tool.AsyncStatus
	err := json.Unmarshal(body, &st)
	return st, err
}

func asyncTool(name string, spec tool.AsyncSpec, h tool.AsyncHandler) tool.Tool {
	return tool.Tool{Name: name, Description: "test", Async: &spec, Handler: h}
}

func open(t *testing.T, dsn string, tools ...tool.Tool) *jobs.Queue {
	t.Helper()
	return openConfig(t, dsn, jobs.Config{Run: true, WebhookSecret: secret}, tools...)
}

// openConfig is open with cfg.
func openConfig(t *testing.T, dsn string, cfg jobs.Config, tools ...tool.Tool) *jobs.Queue {
	t.Helper()
	q, err := jobs.Open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Register(tools...); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("closing the queue: %v", err)
		}
	})
	return q
}

// waitFinal waits for the job's final event and returns the events seen.
func waitFinal(t *testing.T, events <-chan tool.JobEvent, taskID string) []tool.JobEvent {
	t.Helper()
	var seen []tool.JobEvent
	timeout := time.After(60 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Job.TaskID != taskID {
				continue
			}
			seen = append(seen, e)
			if e.Type == tool.JobCompleted || e.Type == tool.JobFailed {
				return seen
			}
		case <-timeout:
			t.Fatalf("job %s did not finish; events: %+v", taskID, seen)
		}
	}
}

var scope = tool.Scope{Workspace: "/w", Session: "s1"}

// submitAndWait submits call of vt to q for scope and waits for the job's
// final event; it returns the job as submitted and the job's events.
func submitAndWait(t *testing.T, q *jobs.Queue, vt *tool.Tool, call tool.Call) (tool.JobInfo, []tool.JobEvent) {
	t.Helper()
	events, stop := q.Subscribe(0)
	defer stop()
	j, err := q.Submit(context.Background(), vt, call, scope)
	if err != nil {
		t.Fatal(err)
	}
	return j, waitFinal(t, events, j.TaskID)
}

func TestPollingJobCompletesOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := newFakeAPI(3)
		api.failPoll = 1
		vt := asyncTool("video", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 20 * time.Millisecond, EstimatedTime: 2 * time.Second, MaxRetries: 3}, api)
		q := open(t, dsn, vt)
		ctx := context.Background()
		j, seen := submitAndWait(t, q, &vt, tool.Call{ID: "call_1", Name: "video", Arguments: json.RawMessage(`{"prompt":"cat"}`)})
		if j.Status != jobs.StatusPending || j.EstimatedTime != 2 || j.Session != "s1" || j.Workspace != "/w" {
			t.Fatalf("submitted job = %+v", j)
		}
		if seen[0].Type != tool.JobSubmitted || seen[len(seen)-1].Type != tool.JobCompleted {
			t.Fatalf("events = %+v", seen)
		}
		var progress []int
		for _, e := range seen {
			if e.Type == tool.JobProgress {
				progress = append(progress, e.Job.Progress)
			}
		}
		if len(progress) == 0 {
			t.Errorf("no progress events: %+v", seen)
		}
		got, err := q.Job(ctx, scope, j.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != jobs.StatusCompleted || got.Progress != 100 || got.CompletedAt == nil || !strings.Contains(string(got.Result), "ext-1.mp4") {
			t.Fatalf("job = %+v", got)
		}
		if api.submits[j.TaskID] != 1 {
			t.Errorf("submits with the job's idempotency key = %v", api.submits)
		}
		// Its submission, a failed poll and three polls were one River job.
		if n := storetest.Count(t, storetest.Open(t, dsn), "river_job"); n != 1 {
			t.Errorf("River jobs = %d, want 1 for the job's submission and polls", n)
		}
		// Another workspace does not see it; another session of it neither.
		if _, err := q.Job(ctx, tool.Scope{Workspace: "/other"}, j.TaskID); !errors.Is(err, jobs.ErrNotFound) {
			t.Errorf("other workspace: err = %v", err)
		}
		if _, err := q.Job(ctx, tool.Scope{Workspace: "/w", Session: "s2"}, j.TaskID); !errors.Is(err, jobs.ErrNotFound) {
			t.Errorf("other session: err = %v", err)
		}
		if p, err := q.Pending(ctx, "s1"); err != nil || len(p) != 0 {
			t.Errorf("pending = %v, %v", p, err)
		}
		if _, err := q.CancelAny(ctx, j.TaskID); err == nil || !strings.Contains(err.Error(), "already finished") {
			t.Errorf("cancelling a finished job: %v", err)
		}
	})
}

func TestJobFailsAfterRetryBudgetAndRetries(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := newFakeAPI(1)
		api.failAll = true
		vt := asyncTool("video", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond, MaxRetries: 1}, api)
		q := open(t, dsn, vt)
		ctx := context.Background()
		j, seen := submitAndWait(t, q, &vt, tool.Call{ID: "c", Name: "video"})
		last := seen[len(seen)-1]
		if last.Type != tool.JobFailed || !strings.Contains(last.Job.Error, "service unavailable") || !strings.Contains(last.Job.Error, "after 2 attempts") {
			t.Fatalf("last event = %+v", last)
		}
		api.mu.Lock()
		api.failAll = false
		api.mu.Unlock()
		events, stop := q.Subscribe(0)
		defer stop()
		if _, err := q.Retry(ctx, j.TaskID); err != nil {
			t.Fatal(err)
		}
		seen = waitFinal(t, events, j.TaskID)
		if last := seen[len(seen)-1]; last.Type != tool.JobCompleted {
			t.Fatalf("after retry: %+v", seen)
		}
		if api.submits[j.TaskID+".r1"] != 1 {
			t.Errorf("the retry did not submit with a new idempotency key: %v", api.submits)
		}
		if _, err := q.Retry(ctx, j.TaskID); err == nil || !strings.Contains(err.Error(), "only a failed or cancelled job") {
			t.Errorf("retrying a completed job: %v", err)
		}
	})
}

func TestCancelStopsPolling(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := newFakeAPI(1 << 30)
		vt := asyncTool("video", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond}, api)
		q := open(t, dsn, vt)
		events, stop := q.Subscribe(0)
		defer stop()
		ctx := context.Background()
		j, err := q.Submit(ctx, &vt, tool.Call{ID: "c", Name: "video"}, scope)
		if err != nil {
			t.Fatal(err)
		}
		for e := range events { // wait until it is polled
			if e.Type == tool.JobProgress && e.Job.Progress >= 0 && e.Job.Message != "" {
				break
			}
		}
		if _, err := q.Cancel(ctx, tool.Scope{Workspace: "/w", Session: "other"}, j.TaskID); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("cancel from another session: %v", err)
		}
		got, err := q.Cancel(ctx, scope, j.TaskID)
		if err != nil || got.Status != jobs.StatusCancelled || got.CompletedAt == nil {
			t.Fatalf("cancel = %+v, %v", got, err)
		}
		// A poll in flight cannot complete it afterwards.
		api.mu.Lock()
		api.finishAt = 0
		api.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		if got, _ := q.Get(ctx, j.TaskID); got.Status != jobs.StatusCancelled {
			t.Fatalf("after cancel: %+v", got)
		}
	})
}

func post(t *testing.T, url string, id string, ts time.Time, body string, sec string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	sig, err := jobs.Sign(sec, id, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", fmt.Sprint(ts.Unix()))
	req.Header.Set("webhook-signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = fmt.Fprint(&b, resp.Status)
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	return resp.StatusCode, string(buf[:n])
}

func TestWebhookVerifiedAndIdempotent(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := newFakeAPI(1)
		vt := asyncTool("render", tool.AsyncSpec{Type: tool.AsyncWebhook, WebhookPath: "/webhooks/render"}, api)
		q := open(t, dsn, vt)
		mux := http.NewServeMux()
		for _, p := range q.WebhookPaths() {
			mux.Handle(p, q.WebhookHandler())
		}
		srv := httptest.NewServer(mux)
		defer srv.Close()
		events, stop := q.Subscribe(0)
		defer stop()
		ctx := context.Background()
		j, err := q.Submit(ctx, &vt, tool.Call{ID: "c", Name: "render"}, scope)
		if err != nil {
			t.Fatal(err)
		}
		for e := range events { // submitted, then processing once Submit ran
			if e.Type == tool.JobProgress {
				break
			}
		}
		url := srv.URL + "/webhooks/render"
		done := fmt.Sprintf(`{"taskId":%q,"status":"completed","result":"done.mp4"}`, j.TaskID)
		now := time.Now()
		cases := []struct {
			name string
			id   string
			ts   time.Time
			body string
			sec  string
			code int
			msg  string
		}{
			{"wrong secret", "msg_1", now, done, "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401, "no webhook-signature matches"},
			{"stale", "msg_1", now.Add(-6 * time.Minute), done, secret, 401, "stale"},
			{"future", "msg_1", now.Add(6 * time.Minute), done, secret, 401, "stale"},
			{"unknown job", "msg_0", now, `{"taskId":"task_nope","status":"completed"}`, secret, 404, "no job of render"},
			{"bad status", "msg_0", now, fmt.Sprintf(`{"taskId":%q,"status":"weird"}`, j.TaskID), secret, 400, "not one of"},
			{"progress", "msg_p", now, fmt.Sprintf(`{"taskId":%q,"status":"processing","progress":40,"message":"rendering"}`, j.TaskID), secret, 200, "applied"},
			{"ok", "msg_1", now, done, secret, 200, "applied"},
			{"duplicate", "msg_1", now, done, secret, 200, "duplicate"},
			{"second delivery, new id", "msg_2", now, done, secret, 409, `"applied":false,"taskId":"` + j.TaskID + `","status":"completed"`},
		}
		for _, c := range cases {
			code, msg := post(t, url, c.id, c.ts, c.body, c.sec)
			if code != c.code || !strings.Contains(msg, c.msg) {
				t.Errorf("%s: %d %q, want %d %q", c.name, code, msg, c.code, c.msg)
			}
		}
		var completed, progress int
		timeout := time.After(2 * time.Second)
	loop:
		for {
			select {
			case e := <-events:
				switch e.Type {
				case tool.JobCompleted:
					completed++
				case tool.JobProgress:
					progress++
					if e.Job.Progress != 40 || e.Job.Message != "rendering" {
						t.Errorf("progress event = %+v", e.Job)
					}
				}
			case <-timeout:
				break loop
			}
		}
		if completed != 1 || progress != 1 {
			t.Errorf("completed events = %d, progress events = %d; want 1 and 1", completed, progress)
		}
		got, _ := q.Get(ctx, j.TaskID)
		if got.Status != jobs.StatusCompleted || string(got.Result) != `"done.mp4"` {
			t.Errorf("job = %+v", got)
		}
		// Without a secret nothing is accepted; GET is not a webhook.
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET: %d", resp.StatusCode)
		}
	})
}

// TestWebhookForAFinishedJob: a verified delivery for a job that has
// finished — cancelled, or completed by an earlier delivery — is answered
// 409 with a body that says it was not applied and why, and changes
// nothing: not the job, not its events, not the deliveries recorded (the
// same delivery sent again is still refused, not a duplicate).
func TestWebhookForAFinishedJob(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		vt := asyncTool("render", tool.AsyncSpec{Type: tool.AsyncWebhook, WebhookPath: "/webhooks/render"}, newFakeAPI(1))
		q := open(t, dsn, vt)
		srv := httptest.NewServer(q.WebhookHandler())
		defer srv.Close()
		url := srv.URL + "/webhooks/render"
		ctx := context.Background()
		cancelled, err := q.Submit(ctx, &vt, tool.Call{ID: "c1", Name: "render"}, scope)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.CancelAny(ctx, cancelled.TaskID); err != nil {
			t.Fatal(err)
		}
		completed, err := q.Submit(ctx, &vt, tool.Call{ID: "c2", Name: "render"}, scope)
		if err != nil {
			t.Fatal(err)
		}
		done := func(j tool.JobInfo, result string) string {
			return fmt.Sprintf(`{"taskId":%q,"status":"completed","result":%q}`, j.TaskID, result)
		}
		if code, body := post(t, url, "msg_first", time.Now(), done(completed, "first.mp4"), secret); code != http.StatusOK {
			t.Fatalf("the first completion: %d %s", code, body)
		}
		events, stop := q.Subscribe(0)
		defer stop()
		for _, tc := range []struct {
			name, id, body string
			job            tool.JobInfo
			status, result string
		}{
			{"completion of a cancelled job", "msg_c", done(cancelled, "late.mp4"), cancelled, jobs.StatusCancelled, ""},
			{"the same again", "msg_c", done(cancelled, "late.mp4"), cancelled, jobs.StatusCancelled, ""},
			{"progress of a cancelled job", "msg_p", fmt.Sprintf(`{"taskId":%q,"status":"processing","progress":50}`, cancelled.TaskID), cancelled, jobs.StatusCancelled, ""},
			{"a second completion", "msg_second", done(completed, "second.mp4"), completed, jobs.StatusCompleted, `"first.mp4"`},
		} {
			code, body := post(t, url, tc.id, time.Now(), tc.body, secret)
			var d struct {
				Applied                 bool
				TaskID, Status, Message string
			}
			if err := json.Unmarshal([]byte(body), &d); err != nil || code != http.StatusConflict || d.Applied || d.TaskID != tc.job.TaskID || d.Status != tc.status ||
				!strings.Contains(d.Message, "was not applied") {
				t.Errorf("%s: %d %s, want 409 and a body saying it was not applied to a %s job", tc.name, code, body, tc.status)
			}
			if got, _ := q.Get(ctx, tc.job.TaskID); got.Status != tc.status || string(got.Result) != tc.result {
				t.Errorf("%s: the job became %s with result %s", tc.name, got.Status, got.Result)
			}
		}
		select {
		case e := <-events:
			t.Errorf("a refused delivery reported %s for %s", e.Type, e.Job.TaskID)
		default:
		}
	})
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dsn := t.TempDir() + "/t.db"
	if _, err := jobs.Open(context.Background(), dsn, jobs.Config{WebhookSecret: "hunter2"}); err == nil || !strings.Contains(err.Error(), "whsec_") {
		t.Errorf("bad secret: %v", err)
	}
	q, err := jobs.Open(context.Background(), dsn, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop(context.Background())
	h := newFakeAPI(1)
	a := asyncTool("a", tool.AsyncSpec{Type: tool.AsyncWebhook, WebhookPath: "/hook"}, h)
	b := asyncTool("b", tool.AsyncSpec{Type: tool.AsyncWebhook, WebhookPath: "/hook"}, h)
	if err := q.Register(a, b); err == nil || !strings.Contains(err.Error(), "both use webhook path /hook") {
		t.Errorf("shared path: %v", err)
	}
	bad := asyncTool("c", tool.AsyncSpec{Type: "sometimes"}, h)
	if err := q.Register(bad); err == nil || !strings.Contains(err.Error(), "use polling or webhook") {
		t.Errorf("bad type: %v", err)
	}
	if err := q.Start(context.Background()); err == nil {
		t.Error("Start of a queue opened without Run succeeded")
	}
}

// TestPruneKeepsUnfinishedJobs: pruning deletes the jobs that finished
// before the cut, never one still pending, however old.
func TestPruneKeepsUnfinishedJobs(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		quick, slow := newFakeAPI(1), newFakeAPI(1000)
		qt := asyncTool("quick", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond, MaxRetries: 1}, quick)
		st := asyncTool("slow", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: time.Hour, MaxRetries: 1}, slow)
		q := open(t, dsn, qt, st)
		ctx := context.Background()
		waiting, err := q.Submit(ctx, &st, tool.Call{ID: "call_s", Name: "slow", Arguments: json.RawMessage(`{}`)}, scope)
		if err != nil {
			t.Fatal(err)
		}
		done, _ := submitAndWait(t, q, &qt, tool.Call{ID: "call_q", Name: "quick", Arguments: json.RawMessage(`{}`)})
		if n, err := q.Prune(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("pruned %d jobs that finished after the cut: %v", n, err)
		}
		if n, err := q.Prune(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("pruned %d jobs, want the finished one: %v", n, err)
		}
		if _, err := q.Get(ctx, done.TaskID); err == nil {
			t.Error("the finished job is still there after pruning")
		}
		if j, err := q.Get(ctx, waiting.TaskID); err != nil || j.Status == jobs.StatusCompleted {
			t.Errorf("the unfinished job after pruning: %+v %v", j, err)
		}
	})
}

func TestSubmitFailingItsLastAttemptNeverPolls(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := newFakeAPI(1)
		api.failAll = true
		vt := asyncTool("video", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond, MaxRetries: 1}, api)
		q := open(t, dsn, vt)
		_, seen := submitAndWait(t, q, &vt, tool.Call{ID: "c", Name: "video"})
		if last := seen[len(seen)-1]; last.Type != tool.JobFailed || !strings.Contains(last.Job.Error, "submitting: service unavailable") {
			t.Fatalf("last event = %+v", last)
		}
		if err := q.Stop(context.Background()); err != nil { // waits for the step to end
			t.Fatal(err)
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		if len(api.polls) != 0 {
			t.Errorf("a job whose submission failed was polled: %v", api.polls)
		}
	})
}

// slowAPI is a service whose Submit blocks until the step's context ends
// when blockSubmit, and whose first Poll does always.
type slowAPI struct {
	blockSubmit bool
	mu          sync.Mutex
	submits     int
	polls       int
}

func (s *slowAPI) Submit(ctx context.Context, _ tool.AsyncSubmit) (string, error) {
	s.mu.Lock()
	s.submits++
	s.mu.Unlock()
	if s.blockSubmit {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "ext-1", nil
}

func (s *slowAPI) Poll(ctx context.Context, ext string) (tool.AsyncStatus, error) {
	s.mu.Lock()
	s.polls++
	first := s.polls == 1
	s.mu.Unlock()
	if first {
		<-ctx.Done()
		return tool.AsyncStatus{}, ctx.Err()
	}
	return tool.AsyncStatus{Status: tool.AsyncCompleted, Result: json.RawMessage(`"` + ext + `"`)}, nil
}

func (s *slowAPI) OnWebhook(context.Context, json.RawMessage) (tool.AsyncStatus, error) {
	return tool.AsyncStatus{}, errors.New("no webhooks")
}

func TestFirstPollTimingOutSubmitsOnce(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := &slowAPI{}
		vt := asyncTool("video", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond, MaxRetries: 2}, api)
		q := openConfig(t, dsn, jobs.Config{Run: true, StepTimeout: 200 * time.Millisecond}, vt)
		_, seen := submitAndWait(t, q, &vt, tool.Call{ID: "c", Name: "video"})
		if last := seen[len(seen)-1]; last.Type != tool.JobCompleted || string(last.Job.Result) != `"ext-1"` {
			t.Fatalf("last event = %+v", last)
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		if api.submits != 1 || api.polls != 2 {
			t.Errorf("submits = %d, polls = %d; want 1 submission and a poll after the one that timed out", api.submits, api.polls)
		}
	})
}

func TestEveryStepTimingOutFails(t *testing.T) {
	storetest.Run(t, func(t *testing.T, dsn string) {
		api := &slowAPI{blockSubmit: true}
		vt := asyncTool("video", tool.AsyncSpec{Type: tool.AsyncPolling, PollingInterval: 10 * time.Millisecond, MaxRetries: 1}, api)
		q := openConfig(t, dsn, jobs.Config{Run: true, StepTimeout: 200 * time.Millisecond}, vt)
		j, seen := submitAndWait(t, q, &vt, tool.Call{ID: "c", Name: "video"})
		if last := seen[len(seen)-1]; last.Type != tool.JobFailed || !strings.Contains(last.Job.Error, "submitting: context deadline exceeded (after 2 attempts)") {
			t.Fatalf("last event = %+v", last)
		}
		got, err := q.Get(context.Background(), j.TaskID)
		if err != nil || got.Status != jobs.StatusFailed {
			t.Fatalf("job = %+v, %v", got, err)
		}
	})
}
