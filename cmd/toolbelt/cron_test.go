package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tool"
)

// TestCronEndToEnd: toolbelt cron add keeps an every schedule with a tool
// call; toolbelt serve runs it when due, through the pipeline; toolbelt
// cron runs --json shows the run; run now and remove work by id.
func TestCronEndToEnd(t *testing.T) {
	t.Parallel()
	env, ws := cliEnvironment(t), workspaceWith(t)
	cli := func(code int, args ...string) cliResult {
		t.Helper()
		return runCLIWith(t, env, "", "", append(args, "--workspace", ws)...).expect(t, code)
	}
	r := cli(0, "cron", "add", "--name", "greeter", "--every", "1s", "--tool", "test_greet", "--args", `{"name":"Cron"}`, "--json")
	var s tool.Schedule
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.ID == "" || s.Every != "1s" || s.Payload.Tool != "test_greet" || s.NextRun == nil {
		t.Fatalf("%v %s", err, r.stdout)
	}
	if r := cli(0, "cron", "list"); !strings.Contains(r.stdout, s.ID) || !strings.Contains(r.stdout, "every 1s") || !strings.Contains(r.stdout, "greeter") {
		t.Errorf("list: %s", r.stdout)
	}
	if r := cli(0, "cron", "runs", s.ID, "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("runs before any: %s", r.stdout)
	}

	_, cmd, stderr := startServe(t, env, "--workspace", ws)
	var runs []tool.ScheduleRun
	deadline := time.Now().Add(60 * time.Second)
	for len(runs) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		r := cli(0, "cron", "runs", s.ID, "--json")
		if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 && runs[len(runs)-1].Status == tool.RunRunning {
			runs = nil
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if len(runs) == 0 {
		t.Fatalf("toolbelt serve did not run the schedule; its stderr: %s", stderr.String())
	}
	first := runs[len(runs)-1]
	if first.Status != tool.RunOK || first.Summary != "Hello, Cron." || first.Trigger != tool.TriggerSchedule || first.Scheduled == nil {
		t.Fatalf("%+v", first)
	}
	// The call went through the pipeline: the audit log has it, in the
	// schedule's session, on its owner's channel.
	r = runCLIWith(t, env, "", "", "audit", "list", "--json", "--tool", "test_greet").expect(t, 0)
	if audit := compactJSON(t, []byte(r.stdout)); !strings.Contains(audit, `"sessionKey":"cron:`+s.ID+`"`) || !strings.Contains(audit, `"channel":"cli"`) {
		t.Errorf("the scheduled call is not audited as the schedule's: %s", audit)
	}

	r = cli(0, "cron", "run", s.ID, "--json")
	var manual tool.ScheduleRun
	if err := json.Unmarshal([]byte(r.stdout), &manual); err != nil || manual.Trigger != tool.TriggerManual || manual.Summary != "Hello, Cron." {
		t.Fatalf("%v %s", err, r.stdout)
	}
	if r := cli(0, "cron", "runs", s.ID); !strings.Contains(r.stdout, "manual") || !strings.Contains(r.stdout, "Hello, Cron.") {
		t.Errorf("runs table: %s", r.stdout)
	}
	cli(0, "cron", "remove", s.ID)
	if r := cli(2, "cron", "runs", s.ID); !strings.Contains(r.stderr, "no such schedule; toolbelt cron list shows them") {
		t.Errorf("%q", r.stderr)
	}
}

func TestCronAddErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cron", "0 25 * * *", "--tool", "test_greet"}, `expr "0 25 * * *"`},
		{[]string{"--cron", "0 9 * * *", "--tz", "Moon/Base", "--tool", "test_greet"}, `unknown time zone "Moon/Base"`},
		{[]string{"--every", "1h", "--cron", "0 9 * * *", "--tool", "test_greet"}, "give the timing once"},
		{[]string{"--every", "1h"}, "say what the schedule does"},
		{[]string{"--every", "1h", "--tool", "no_such_tool"}, `no tool "no_such_tool"`},
		{[]string{"--every", "1h", "--tool", "test_greet", "--args", "[1]"}, "--args is not a JSON object"},
		{[]string{"--at", "2001-01-01T00:00:00Z", "--tool", "test_greet"}, "is in the past"},
		{[]string{"--at", "noon", "--tool", "test_greet"}, "not an RFC 3339 time"},
	} {
		r := runCLI(t, "", append([]string{"cron", "add"}, tt.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// TestCronMessages: a message schedule runs the agent on its session with
// the message as the prompt (a replayed model); without a model the run
// fails and says why.
func TestCronMessages(t *testing.T) {
	t.Parallel()
	ws := workspaceWith(t)
	env := cliEnvironment(t)
	r := runCLIWith(t, env, "", "", "cron", "add", "--every", "1h", "--message", "water the plants", "--session", "garden", "--workspace", ws, "--json").expect(t, 0)
	var s tool.Schedule
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, "", "", "cron", "run", s.ID, "--workspace", ws, "--json").expect(t, 1)
	var failed tool.ScheduleRun
	if err := json.Unmarshal([]byte(r.stdout), &failed); err != nil || failed.Status != tool.RunError || !strings.Contains(failed.Error, "name the model") {
		t.Fatalf("%v %s", err, r.stdout)
	}

	srv := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "Watered.")})
	cfg := writeConfig(t, "model: replay/test-model\nproviders:\n  replay:\n    base: openai\n    url: "+srv.URL+"/v1\n")
	r = runCLIWith(t, env, "", "", "--config", cfg, "cron", "run", s.ID, "--workspace", ws, "--json").expect(t, 0)
	var ok tool.ScheduleRun
	if err := json.Unmarshal([]byte(r.stdout), &ok); err != nil || ok.Status != tool.RunOK || ok.Summary != "Watered." {
		t.Fatalf("%v %s %s", err, r.stdout, r.stderr)
	}
	if body := compactJSON(t, srv.Requests()[0].Body); !strings.Contains(body, "water the plants") {
		t.Errorf("the message is not the prompt: %s", body)
	}
	r = runCLIWith(t, env, "", "", "--config", cfg, "sessions", "show", "garden", "--json", "--workspace", ws).expect(t, 0)
	if !strings.Contains(r.stdout, "water the plants") || !strings.Contains(r.stdout, "Watered.") {
		t.Errorf("the session does not hold the run: %s", r.stdout)
	}
}

// TestCronTwoServers: two toolbelt serve processes on one database (a
// SQLite file; PostgreSQL when TOOLBELT_TEST_POSTGRES_URL is set) run an
// every-second schedule; each occurrence runs once, and every occurrence
// from the first recorded to the last has exactly one record (a run, or a
// skipped record that covers it).
func TestCronTwoServers(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		twoServers(t, cliEnvironment(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		twoServers(t, append(cliEnvironment(t), "TOOLBELT_DATABASE_URL="+storetest.Postgres(t)))
	})
}

func twoServers(t *testing.T, env []string) {
	ws := workspaceWith(t)
	r := runCLIWith(t, env, "", "", "cron", "add", "-q", "--every", "1s", "--tool", "test_greet", "--args", `{"name":"Both"}`, "--workspace", ws).expect(t, 0)
	id := strings.TrimSpace(r.stdout)
	_, a, errA := startServe(t, env, "--workspace", ws)
	_, b, errB := startServe(t, env, "--workspace", ws)
	var runs []tool.ScheduleRun
	deadline := time.Now().Add(60 * time.Second)
	for len(runs) < 5 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		r := runCLIWith(t, env, "", "", "cron", "runs", id, "--json", "--limit", "200", "--workspace", ws).expect(t, 0)
		if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*exec.Cmd{a, b} {
		_ = p.Process.Signal(os.Interrupt)
		_ = p.Wait()
	}
	if len(runs) < 5 {
		t.Fatalf("%d runs; stderr:\n%s\n%s", len(runs), errA.String(), errB.String())
	}
	records := map[time.Time]int{}
	var first, last time.Time
	for _, run := range runs {
		if run.Scheduled == nil {
			t.Fatalf("a run without its occurrence: %+v", run)
		}
		end := run.Scheduled.Add(time.Second)
		if run.Until != nil {
			end = *run.Until
		}
		for o := *run.Scheduled; o.Before(end); o = o.Add(time.Second) {
			records[o]++
			if first.IsZero() || o.Before(first) {
				first = o
			}
			if o.After(last) {
				last = o
			}
		}
	}
	for o := first; !o.After(last); o = o.Add(time.Second) {
		if records[o] != 1 {
			t.Errorf("the occurrence %s has %d records", o.Format(time.RFC3339), records[o])
		}
	}
	if t.Failed() {
		t.Fatalf("the runs: %+v", runs)
	}
}

// TestCronAddAsPeopleReadIt: cron add keeps a schedule whose call would
// need a person's approval (exec appending to a file) and says, with the
// reason, that each run waits for it in the console of toolbelt serve —
// in its text, in --json, and on stderr with -q — and cron list shows the arguments of a
// schedule as they were given — >> as >>, not JSON-escaped.
func TestCronAddAsPeopleReadIt(t *testing.T) {
	t.Parallel()
	env, ws := cliEnvironment(t), workspaceWith(t)
	cli := func(code int, args ...string) cliResult {
		t.Helper()
		return runCLIWith(t, env, "", "", append(args, "--workspace", ws)...).expect(t, code)
	}
	const waits = "Each run of this call of exec needs a person's approval (high-risk call"
	const console = "it waits for it in the console of `toolbelt serve` for up to 5m0s (console.approvalTimeout), and fails if nobody approves it by then."
	r := cli(0, "cron", "add", "--every", "1h", "--tool", "exec", "--args", `{"command":"echo hi >> log.txt"}`)
	if !strings.Contains(r.stdout, "Added cron_") || !strings.Contains(r.stdout, waits) || !strings.Contains(r.stdout, console) {
		t.Errorf("added with: %s", r.stdout)
	}
	var added tool.Schedule
	r = cli(0, "cron", "add", "--every", "1h", "--tool", "exec", "--args", `{"command":"echo hi >> log.txt"}`, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil || !strings.HasPrefix(added.Approval, waits) || !strings.Contains(added.Approval, console) {
		t.Errorf("added, as JSON: %v %s", err, r.stdout)
	}
	r = cli(0, "cron", "add", "-q", "--every", "1h", "--tool", "exec", "--args", `{"command":"echo hi >> log.txt"}`)
	if !strings.HasPrefix(r.stdout, "cron_") || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stderr, waits) {
		t.Errorf("added quietly with: %s (stderr %s)", r.stdout, r.stderr)
	}
	if r := cli(0, "cron", "list", "--json"); strings.Count(r.stdout, `"id": "cron_`) != 3 {
		t.Errorf("not kept: %s", r.stdout)
	}
	cli(0, "cron", "add", "--every", "1h", "--tool", "test_greet", "--args", `{"name":"a >> b & c"}`)
	if r := cli(0, "cron", "list"); !strings.Contains(r.stdout, `test_greet {"name":"a >> b & c"}`) {
		t.Errorf("list: %s", r.stdout)
	}
}
