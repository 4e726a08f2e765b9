package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/changeset"
	"github.com/toolbelt/toolbelt/store"
)

// stopEnv, when set to N, makes the CLI of the test binary stop for good
// right after its Nth write or removal of a file in a workspace — a tool's
// or recovery's — saying so on stderr (stoppedLine), so that a test kills
// it there with SIGKILL: between two files of one change, or between a
// change and its answer.
const stopEnv = "TOOLBELT_TEST_STOP_AFTER"

// stoppedLine begins the line the CLI writes when it stops (stopEnv).
const stoppedLine = "toolbelt-test: stopped after"

// stopAfter returns the wrapper of workspace bridges stopEnv's value spec
// asks for; nil when it asks for none.
func stopAfter(spec string) func(fsbridge.Bridge) fsbridge.Bridge {
	n, err := strconv.ParseInt(spec, 10, 64)
	if err != nil || n <= 0 {
		return nil
	}
	steps := new(atomic.Int64) // shared by every bridge of the process
	return func(b fsbridge.Bridge) fsbridge.Bridge { return &stopping{Bridge: b, after: n, steps: steps} }
}

// stopping is a bridge that stops the process after its steps reach after.
type stopping struct {
	fsbridge.Bridge
	after int64
	steps *atomic.Int64
}

func (s *stopping) WriteFile(ctx context.Context, p string, data []byte, perm fs.FileMode) error {
	err := s.Bridge.WriteFile(ctx, p, data, perm)
	s.step("writing", p)
	return err
}

func (s *stopping) Remove(ctx context.Context, p string) error {
	err := s.Bridge.Remove(ctx, p)
	s.step("removing", p)
	return err
}

func (s *stopping) step(what, p string) {
	if s.steps.Add(1) != s.after {
		return
	}
	fmt.Fprintf(os.Stderr, "%s %s %s\n", stoppedLine, what, p)
	for {
		time.Sleep(time.Hour)
	}
}

// stopped starts the CLI with args in environ, stopping after its nth
// write or removal (stopEnv), and returns it once it has stopped there;
// kill kills it with SIGKILL and waits for it.
func stopped(t *testing.T, environ []string, n int, args ...string) (kill func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(slices.Clone(environ), fmt.Sprintf("%s=%d", stopEnv, n))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		cancel()
	}
	t.Cleanup(kill)
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), stoppedLine) {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return kill
		}
	}
	kill()
	t.Fatalf("toolbelt %s ended without stopping after its step %d:\n%s", strings.Join(args, " "), n, seen.String())
	return nil
}

// killedAt runs the CLI with args until it stops after its nth write or
// removal, and kills it there with SIGKILL.
func killedAt(t *testing.T, environ []string, n int, args ...string) {
	t.Helper()
	stopped(t, environ, n, args...)()
}

// files returns the regular files directly in dir, by name.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			out[e.Name()] = readFile(t, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// putFiles makes the files in dir.
func putFiles(t *testing.T, dir string, fs map[string]string) {
	t.Helper()
	for name, content := range fs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// restart is the next start after a crash: a toolbelt call that runs a
// tool in the workspace (ls).
func restart(t *testing.T, environ []string, ws string) {
	t.Helper()
	runCLIWith(t, environ, "", "", "call", "ls", "--workspace", ws, "--args", `{"path":"."}`).expect(t, 0)
}

// interrupted checks that the audit holds exactly one record of the call,
// the record recovery makes of an interrupted call, with outcome, and
// returns it.
func interrupted(t *testing.T, environ []string, id, tool, outcome string) audit.Record {
	t.Helper()
	rs := auditRecords(t, environ, "--call", id)
	if len(rs) != 1 {
		var got []string
		for _, r := range rs {
			got = append(got, fmt.Sprintf("record %d (%q) %s", r.Seq, r.ErrorClass, r.Arguments))
		}
		t.Fatalf("call %s has %d audit records, want 1: %s", id, len(rs), strings.Join(got, "; "))
	}
	r := rs[0]
	var args struct {
		Arguments json.RawMessage      `json:"arguments"`
		Recovery  changeset.Settlement `json:"recovery"`
	}
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		t.Fatalf("the record's arguments %s: %v", r.Arguments, err)
	}
	if r.ErrorClass != "interrupted" || !r.IsError || r.Tool != tool || args.Recovery.Outcome != outcome || len(args.Arguments) == 0 {
		t.Errorf("record %+v (recovery %+v), want an interrupted %s call %s, with its arguments", r, args.Recovery, tool, outcome)
	}
	return r
}

// Three changes of one patch: f0 changed, f1 added, f2 deleted; written in
// that order (files written before files removed).
const (
	patchOf3 = "*** Begin Patch\n*** Update File: f0.txt\n@@\n-zero\n+ZERO\n*** Add File: f1.txt\n+one\n*** Delete File: f2.txt\n*** End Patch"
)

var (
	beforePatch = map[string]string{"f0.txt": "zero\n", "f2.txt": "two\n"}
	afterPatch  = map[string]string{"f0.txt": "ZERO\n", "f1.txt": "one\n"}
)

// TestInterruptedChangeIsWholeAndRecorded: a real `toolbelt call` killed
// with SIGKILL in the middle of its change — between two files of a
// patch, or after its last file (a patch's, a write's rename) but before
// its answer — leaves the files, after the next start, all as they were or
// all as the call made them; the audit holds the call, once, as
// interrupted, saying what recovery found and did; a change kept is the
// call's journal entry, which toolbelt undo takes back.
func TestInterruptedChangeIsWholeAndRecorded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name            string
		tool, args      string
		stopAfter       int
		start, killed   map[string]string // the files before the call, and when it was killed
		outcome         string
		recovered, undo map[string]string // the files after the next start, and after undo (nil: nothing to undo)
	}{
		{"a patch killed between its first and second file", "apply_patch", mustJSON(t, map[string]string{"patch": patchOf3}), 1,
			beforePatch, map[string]string{"f0.txt": "ZERO\n", "f2.txt": "two\n"}, changeset.RolledBack, beforePatch, nil},
		{"a patch killed between its writes and its removal", "apply_patch", mustJSON(t, map[string]string{"patch": patchOf3}), 2,
			beforePatch, map[string]string{"f0.txt": "ZERO\n", "f1.txt": "one\n", "f2.txt": "two\n"}, changeset.RolledBack, beforePatch, nil},
		{"a patch killed after its last file, before its answer", "apply_patch", mustJSON(t, map[string]string{"patch": patchOf3}), 3,
			beforePatch, afterPatch, changeset.Kept, afterPatch, beforePatch},
		{"a write killed after its rename, before its answer", "write", `{"path":"f0.txt","content":"new\n"}`, 1,
			map[string]string{"f0.txt": "old\n"}, map[string]string{"f0.txt": "new\n"}, changeset.Kept, map[string]string{"f0.txt": "new\n"}, map[string]string{"f0.txt": "old\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			environ := sharedEnvironment(t, t.TempDir())
			ws := t.TempDir()
			putFiles(t, ws, c.start)
			const id = "cli_killed"
			killedAt(t, environ, c.stopAfter, "call", c.tool, "--id", id, "--workspace", ws, "--args", c.args)
			if got := files(t, ws); !maps.Equal(got, c.killed) {
				t.Fatalf("when the call was killed the files were %v, want %v", got, c.killed)
			}
			restart(t, environ, ws)
			if got := files(t, ws); !maps.Equal(got, c.recovered) {
				t.Errorf("after the next start the files are %v, want %v", got, c.recovered)
			}
			r := interrupted(t, environ, id, c.tool, c.outcome)
			if real, _ := filepath.EvalSymlinks(ws); r.Workspace != real || r.Channel != "cli" || !r.Owner {
				t.Errorf("record's workspace %q, channel %q, owner %v; want %q, cli, the owner", r.Workspace, r.Channel, r.Owner, real)
			}
			if want := compactJSON(t, []byte(c.args)); !strings.Contains(string(r.Arguments), `"arguments":`+want) {
				t.Errorf("record's arguments %s lack the call's %s", r.Arguments, want)
			}
			if c.undo == nil {
				if u := runCLIWith(t, environ, "", "", "undo", id).expect(t, 1); !strings.Contains(u.stderr, "nothing to undo for call "+id) {
					t.Errorf("undo of a change rolled back: %s", u.stderr)
				}
			} else {
				runCLIWith(t, environ, "", "", "undo", id).expect(t, 0)
				if got := files(t, ws); !maps.Equal(got, c.undo) {
					t.Errorf("after undo the files are %v, want %v", got, c.undo)
				}
			}
			interrupted(t, environ, id, c.tool, c.outcome) // still once
			runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0)
		})
	}
}

// TestRecoveryBesideAnotherAndKilled: recovery is idempotent and safe with
// several processes. Three patches of three files each are stopped after
// their second file, and killed together. The next process stops while it
// rolls back the first (after recording it) and holds it; a process
// starting beside it settles the other two and leaves the first alone.
// Killed in turn, the first process leaves its patch to the next start,
// which finishes it: every patch whole, every call recorded once.
func TestRecoveryBesideAnotherAndKilled(t *testing.T) {
	t.Parallel()
	environ := sharedEnvironment(t, t.TempDir())
	ws := t.TempDir()
	name := func(g, f int) string { return fmt.Sprintf("g%d-f%d.txt", g, f) }
	state := func(g int) string {
		got := files(t, ws)
		return got[name(g, 0)] + got[name(g, 1)] + got[name(g, 2)]
	}
	const before, half = "0\n1\n2\n", "A\nB\n2\n"
	var ids []string
	var kills []func()
	for g := range 3 {
		var p strings.Builder
		p.WriteString("*** Begin Patch\n")
		for f, to := range []string{"A", "B", "C"} {
			putFiles(t, ws, map[string]string{name(g, f): fmt.Sprintf("%d\n", f)})
			fmt.Fprintf(&p, "*** Update File: %s\n@@\n-%d\n+%s\n", name(g, f), f, to)
		}
		p.WriteString("*** End Patch")
		id := fmt.Sprintf("cli_patch%d", g)
		ids = append(ids, id)
		// Stopped, not killed yet: a process that runs keeps its change.
		kills = append(kills, stopped(t, environ, 2, "call", "apply_patch", "--id", id, "--workspace", ws, "--args", mustJSON(t, map[string]string{"patch": p.String()})))
	}
	for g, kill := range kills {
		kill()
		if got := state(g); got != half {
			t.Fatalf("patch %d was killed with its files %q, want %q", g, got, half)
		}
	}
	// The first recovering process puts g0-f0.txt back, then stops there.
	kill := stopped(t, environ, 1, "call", "ls", "--workspace", ws, "--args", `{"path":"."}`)
	interrupted(t, environ, ids[0], "apply_patch", changeset.RolledBack) // recorded before any file is put back
	restart(t, environ, ws)
	if got := state(0); got != "0\nB\n2\n" {
		t.Errorf("patch 0, which a running process holds, is %q", got)
	}
	for g := 1; g < 3; g++ {
		if got := state(g); got != before {
			t.Errorf("a process beside the stopped one left patch %d as %q", g, got)
		}
		interrupted(t, environ, ids[g], "apply_patch", changeset.RolledBack)
	}
	kill()
	restart(t, environ, ws)
	for g := range 3 {
		if got := state(g); got != before {
			t.Errorf("patch %d is %q after the last start", g, got)
		}
		interrupted(t, environ, ids[g], "apply_patch", changeset.RolledBack)
	}
	runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0)
}

// TestInterruptedCallRecordedOnce: a call killed after its audit record
// was made but before its change was closed in the journal keeps that one
// record (recovery adds none) and its change, which undo takes back.
func TestInterruptedCallRecordedOnce(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	ws := t.TempDir()
	putFiles(t, ws, map[string]string{"a.txt": "old\n"})
	const id = "cli_answered"
	killedAt(t, environ, 1, "call", "write", "--id", id, "--workspace", ws, "--args", `{"path":"a.txt","content":"new\n"}`)
	// The record the killed process had made of its answer.
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	err = auditlog.New(st).Append(ctx, audit.Record{CallID: id, Tool: "write", Channel: "cli", Owner: true, Arguments: json.RawMessage(`{"path":"a.txt"}`)})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	restart(t, environ, ws)
	rs := auditRecords(t, environ, "--call", id)
	if len(rs) != 1 || rs[0].ErrorClass != "" {
		t.Fatalf("call %s has %d records %v, want its own only", id, len(rs), rs)
	}
	runCLIWith(t, environ, "", "", "undo", id).expect(t, 0)
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "old\n" {
		t.Errorf("after undo a.txt is %q", got)
	}
}

// TestInterruptedMCPCallRecoveredAtStart: a `toolbelt mcp` killed in the
// middle of a patch; the next server, asked for nothing but its tools,
// settles and records the change once it has answered.
func TestInterruptedMCPCallRecoveredAtStart(t *testing.T) {
	t.Parallel()
	environ := sharedEnvironment(t, t.TempDir())
	ws := t.TempDir()
	putFiles(t, ws, beforePatch)
	cmd := exec.Command(os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = append(slices.Clone(environ), stopEnv+"=1")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "intents-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), stoppedLine) {
				close(stop)
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "apply_patch", Arguments: map[string]any{"patch": patchOf3}})
	}()
	select {
	case <-stop:
	case <-ctx.Done():
		t.Fatal("the server did not stop after its first file")
	}
	_ = cmd.Process.Kill()
	_ = cs.Close()
	pw.Close()
	if got := files(t, ws); got["f0.txt"] != "ZERO\n" || got["f2.txt"] != "two\n" {
		t.Fatalf("the patch was not killed half made: %v", got)
	}
	next, nextCmd := mcpSession(t, environ, ws)
	defer func() { _ = nextCmd.Process.Kill(); _ = next.Close() }()
	if _, err := next.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rs := auditRecordsUntil(t, environ, func(rs []audit.Record) bool { return len(rs) > 0 }, "--tool", "apply_patch")
	if len(rs) != 1 {
		t.Fatalf("%d apply_patch records, want the interrupted call's: %+v", len(rs), rs)
	}
	r := interrupted(t, environ, rs[0].CallID, "apply_patch", changeset.RolledBack)
	if r.Channel != "mcp" {
		t.Errorf("the record's channel is %q, want mcp", r.Channel)
	}
	if got := files(t, ws); !maps.Equal(got, beforePatch) {
		t.Errorf("after the next start the files are %v, want %v", got, beforePatch)
	}
}

// TestInterruptedCallsSpoolHeldWhileItExits: the process that made a
// change is killed after it spooled its call's record but before it
// closed the change's intent, and its locks go one by one as it exits —
// its process lock already free, its spool still held. Recovery waits for
// the spool, moves the call's own record in, and records nothing more: the
// call has one record, its own, even when the spool is let go of later
// than recovery first looked.
func TestInterruptedCallsSpoolHeldWhileItExits(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	ws := t.TempDir()
	putFiles(t, ws, map[string]string{"a.txt": "old\n"})
	const id = "cli_spooled"
	killedAt(t, environ, 1, "call", "write", "--id", id, "--workspace", ws, "--args", `{"path":"a.txt","content":"new\n"}`)
	locks, err := filepath.Glob(filepath.Join(data, "locks", "*.lock"))
	if err != nil || len(locks) != 1 {
		t.Fatalf("want the killed process's lock file, found %v (%v)", locks, err)
	}
	pid, _, _ := strings.Cut(filepath.Base(locks[0]), "-")
	// The killed process's spool, with its call's record, held as if the
	// process were still exiting.
	line, err := json.Marshal(audit.Record{ID: "rec-" + id, CallID: id, Tool: "write", Channel: "cli", Owner: true, Arguments: json.RawMessage(`{"path":"a.txt"}`)})
	if err != nil {
		t.Fatal(err)
	}
	spool := filepath.Join(data, "audit-spool", pid+"-exitng.spool")
	if err := os.MkdirAll(filepath.Dir(spool), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spool, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(spool)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	let := time.AfterFunc(time.Second, func() { held.Close() })
	defer let.Stop()
	restart(t, environ, ws)
	restart(t, environ, ws) // which moves in whatever the first left
	rs := auditRecords(t, environ, "--call", id)
	if len(rs) != 1 || rs[0].ErrorClass != "" {
		var got []string
		for _, r := range rs {
			got = append(got, fmt.Sprintf("record %d (%q)", r.Seq, r.ErrorClass))
		}
		t.Fatalf("call %s has %d records (%s), want its own only", id, len(rs), strings.Join(got, "; "))
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "new\n" {
		t.Errorf("a.txt is %q: the recorded change was rolled back", got)
	}
}
