package shell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

func TestExecResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	writeFile(t, filepath.Join(e.root, "notexec.sh"), "#!/bin/sh\necho hi\n", 0o644)
	tests := []struct {
		name    string
		args    map[string]any
		want    string // the end of the text
		status  string
		wantErr bool
	}{
		{"output", map[string]any{"command": "echo hello"}, "hello", "exited", false},
		{"exact output", map[string]any{"command": "printf 'a\\n\\nb'"}, "a\n\nb", "exited", false},
		{"no output", map[string]any{"command": "true"}, "(no output)", "exited", false},
		{"interleaved", map[string]any{"command": "echo one; echo two >&2; echo three"}, "one\ntwo\nthree", "exited", false},
		{"non-zero exit", map[string]any{"command": "echo partial; exit 3"}, "partial\n\n(Command exited with code 3)", "exited", false},
		{"not found", map[string]any{"command": "no-such-command-xyz 2>/dev/null"}, "(Command exited with code 127: Command not found)", "exited", false},
		{"not executable", map[string]any{"command": "./notexec.sh 2>/dev/null"}, "(Command exited with code 126: Command not executable (permission denied))", "exited", false},
		{"signal", map[string]any{"command": "kill -KILL $$"}, "(Command was killed by signal SIGKILL)", "signaled", false},
		{"child signal", map[string]any{"command": "sh -c 'kill -SEGV $$'; exit $?"}, "(Command exited with code 139, which usually means it was killed by SIGSEGV)", "exited", false},
		{"env", map[string]any{"command": "echo $GREETING", "env": map[string]any{"GREETING": "hi there"}}, "hi there", "exited", false},
		{"runs in the workspace", map[string]any{"command": "mkdir -p sub/dir && cd sub/dir && pwd -P"}, filepath.Join(e.root, "sub", "dir"), "exited", false},
		{"invalid UTF-8", map[string]any{"command": `printf 'a\377b'`}, "a\uFFFDb", "exited", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, info := e.exec(tt.args, tt.wantErr)
			if !strings.HasSuffix(got, tt.want) {
				t.Errorf("text = %q, want it to end with %q", got, tt.want)
			}
			if info.Status != tt.status {
				t.Errorf("status = %q, want %q", info.Status, tt.status)
			}
			if info.SessionID != "" {
				t.Errorf("a finished command offers session %q to follow", info.SessionID)
			}
		})
	}
}

func TestExecWorkdir(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "proj")
	outside := filepath.Join(base, "outside")
	sibling := filepath.Join(base, "proj2") // shares the root's prefix
	for _, d := range []string{filepath.Join(root, "src", "pkg"), outside, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "file.txt"), "x", 0o644)
	for link, target := range map[string]string{
		"out-link":    outside,
		"etc-link":    "/etc",
		"sib-link":    "../proj2",
		"inside-link": "src",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnvAt(t, root, nil, nil)

	t.Run("inside", func(t *testing.T) {
		for workdir, want := range map[string]string{
			"":                          root,
			".":                         root,
			"src/pkg":                   filepath.Join(root, "src", "pkg"),
			filepath.Join(root, "src"):  filepath.Join(root, "src"),
			"inside-link/pkg":           filepath.Join(root, "src", "pkg"),
			"src/../src/pkg/../../src/": filepath.Join(root, "src"),
		} {
			got, _ := e.exec(map[string]any{"command": "pwd -P", "workdir": workdir}, false)
			if got != want {
				t.Errorf("workdir %q: ran in %q, want %q", workdir, got, want)
			}
		}
	})

	tests := []struct {
		name, workdir, want string
	}{
		{"parent", "..", "outside the workspace"},
		{"dot dot etc", "../../../../../../etc", "outside the workspace"},
		{"absolute outside", outside, "outside the workspace"},
		{"absolute etc", "/etc", "outside the workspace"},
		{"sibling sharing the prefix", sibling, "outside the workspace"},
		{"relative sibling", "../proj2", "outside the workspace"},
		{"symlink to outside", "out-link", "through a symbolic link"},
		{"symlink to /etc", "etc-link", "through a symbolic link"},
		{"symlink to sibling", "sib-link", "through a symbolic link"},
		{"below a symlink to outside", "out-link/.", "through a symbolic link"},
		{"NUL byte", "src\x00/../..", "NUL byte"},
		{"missing", "nope", "does not exist"},
		{"a file", "file.txt", "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := "ran-" + strings.ReplaceAll(tt.name, " ", "-")
			// The command would leave a marker wherever it ran.
			msg := e.call("exec", map[string]any{"command": "touch " + marker + " && pwd", "workdir": tt.workdir})
			if !msg.IsError || !strings.Contains(text(msg), tt.want) {
				t.Fatalf("workdir %q: isError=%v, text %q; want a refusal containing %q", tt.workdir, msg.IsError, text(msg), tt.want)
			}
			for _, dir := range []string{root, outside, sibling, "/etc", base} {
				mustNotExist(t, filepath.Join(dir, marker))
			}
		})
	}
}

func TestExecEnvRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, env := range []map[string]any{
		{"LD_PRELOAD": "/tmp/evil.so"},
		{"ld_library_path": "/tmp"},
		{"DYLD_INSERT_LIBRARIES": "/tmp/evil.dylib"},
		{"PATH": "/tmp/evil:/usr/bin"},
		{"BASH_ENV": "/tmp/evil.sh"},
		{"ENV": "/tmp/evil.sh"},
		{"HOME": "/tmp"},
		{"ZDOTDIR": "/tmp"},
		{"BASH_FUNC_ls%%": "() { touch pwned; }"},
		{"OK": "fine", "LD_AUDIT": "/tmp/evil.so"},
	} {
		t.Run(fmt.Sprint(env), func(t *testing.T) {
			msg := e.call("exec", map[string]any{"command": "touch ran", "env": env})
			got := text(msg)
			if !msg.IsError || !strings.Contains(got, "env was refused and the command was not run") {
				t.Fatalf("isError=%v, text %q; want the env refused", msg.IsError, got)
			}
			for name := range env {
				if name != "OK" && !strings.Contains(got, strings.TrimSuffix(name, "%%")) {
					t.Errorf("the refusal does not name %s: %q", name, got)
				}
			}
			mustNotExist(t, filepath.Join(e.root, "ran"))
		})
	}
}

// TestExecSecretsScrubbed sets variables of the server's own environment,
// so it cannot run in parallel.
func TestExecSecretsScrubbed(t *testing.T) {
	secrets := map[string]string{
		"TOOLBELT_TEST_API_KEY":       "sk-secret-1",
		"TOOLBELT_TEST_SECRET":        "secret-2",
		"TOOLBELT_TEST_github_token":  "secret-3",
		"TOOLBELT_TEST_DB_PASSWORD":   "secret-4",
		"TOOLBELT_TEST_CREDENTIALS":   "secret-5",
		"TOOLBELT_TEST_ALLOWED_TOKEN": "allowed-6",
		"TOOLBELT_TEST_PLAIN":         "plain-7",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	e := newEnv(t, map[string]any{"envAllow": []string{"TOOLBELT_TEST_ALLOWED_*"}})
	out, _ := e.exec(map[string]any{"command": "env; cat /proc/self/environ | tr '\\0' '\\n'"}, false)
	for k, v := range secrets {
		visible := strings.Contains(out, v)
		wantVisible := k == "TOOLBELT_TEST_ALLOWED_TOKEN" || k == "TOOLBELT_TEST_PLAIN"
		if visible != wantVisible {
			t.Errorf("%s visible to the command = %v, want %v", k, visible, wantVisible)
		}
	}
	// A value the call sets itself is passed, whatever its name.
	out, _ = e.exec(map[string]any{"command": "echo $MY_API_KEY", "env": map[string]any{"MY_API_KEY": "given"}}, false)
	if out != "given" {
		t.Errorf("a variable set by the call: got %q, want %q", out, "given")
	}
}

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	tests := []struct{ name, command string }{
		{"sleep", "sleep 3600"},
		{"children", "sleep 3600 & sleep 3600 & (sleep 3600; echo never) & wait"},
		{"ignores SIGTERM", "trap '' TERM; sleep 3600 & sh -c 'trap \"\" TERM; sleep 3600' & wait"},
		{"output before", "echo started; sleep 3600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, info := e.exec(map[string]any{"command": tt.command, "timeout": 2, "yieldMs": 60_000}, true)
			if !strings.Contains(got, "(Command timed out after 2s and was stopped") ||
				!strings.Contains(got, `"timeout": 4`) || !strings.Contains(got, `"background": true`) {
				t.Errorf("text %q does not say it timed out and how to run it longer", got)
			}
			if info.Status != "timeout" || info.PID == 0 {
				t.Errorf("details = %+v, want status timeout and a pid", info)
			}
			if !groupGone(info.PID) {
				t.Errorf("process group %d still has processes after the timeout", info.PID)
			}
			if strings.Contains(got, "never") {
				t.Errorf("a child ran to completion: %q", got)
			}
		})
	}
}

func TestExecCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	ready := filepath.Join(e.root, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the command is running.
		for {
			if _, err := os.Stat(ready); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	msg := e.callCtx(ctx, "exec", map[string]any{"command": "sleep 3600 & touch ready; wait", "yieldMs": 600_000})
	info := details(msg)
	if !msg.IsError || !strings.Contains(text(msg), "cancelled") || info.Status != "cancelled" {
		t.Fatalf("isError=%v status=%q text %q; want a cancelled result", msg.IsError, info.Status, text(msg))
	}
	if !groupGone(info.PID) {
		t.Errorf("process group %d survived the cancellation", info.PID)
	}
}

func TestExecYieldsBeforeDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	// The call must end within 3 s, so exec returns before then and leaves
	// the command running rather than have it stopped with the call.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	msg := e.callCtx(ctx, "exec", map[string]any{"command": "echo working; sleep 3600", "yieldMs": 600_000})
	info := details(msg)
	if msg.IsError || !strings.Contains(text(msg), "continues in the background") || info.Status != "running" {
		t.Fatalf("isError=%v status=%q text %q; want the command left running", msg.IsError, info.Status, text(msg))
	}
	poll, _ := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID})
	if !strings.Contains(poll, "Process still running") {
		t.Errorf("poll after the call's deadline: %q", poll)
	}
	e.process(map[string]any{"action": "kill", "sessionId": info.SessionID})
	if !groupGone(info.PID) {
		t.Errorf("process group %d survived kill", info.PID)
	}
}

func TestExecLeftoverChildrenStopped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	// The shell exits at once, leaving a child that holds the output open.
	got, info := e.exec(map[string]any{"command": "sleep 3600 & echo parent done"}, false)
	if got != "parent done" || info.Status != "exited" {
		t.Errorf("text %q status %q, want the shell's output and exit", got, info.Status)
	}
	if !groupGone(info.PID) {
		t.Errorf("the child left in process group %d was not stopped", info.PID)
	}
}

func TestExecTimeoutLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"maxTimeout": 10, "defaultTimeout": 5})
	msg := e.call("exec", map[string]any{"command": "touch ran", "timeout": 11})
	if !msg.IsError || !strings.Contains(text(msg), "timeout") {
		t.Fatalf("a timeout above the maximum: isError=%v text %q", msg.IsError, text(msg))
	}
	mustNotExist(t, filepath.Join(e.root, "ran"))
	_, info := e.exec(map[string]any{"command": "true", "background": true}, false)
	poll, _ := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 60_000})
	if !strings.Contains(poll, "(Command exited with code 0)") {
		t.Errorf("poll: %q", poll)
	}
}

func TestExecPTY(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	const probe = "if [ -t 0 ] && [ -t 1 ]; then echo terminal; else echo no terminal; fi; tty >/dev/null && echo has tty"
	got, info := e.exec(map[string]any{"command": probe, "pty": true}, false)
	if got != "terminal\nhas tty" || !info.PTY {
		t.Errorf("pty: text %q, pty %v; want a terminal", got, info.PTY)
	}
	got, _ = e.exec(map[string]any{"command": probe}, false)
	if got != "no terminal\n\n(Command exited with code 1)" {
		t.Errorf("without pty: text %q, want no terminal", got)
	}
	// Input to a program reading the terminal.
	_, info = e.exec(map[string]any{"command": "read -r line; echo \"got [$line]\"", "pty": true, "background": true}, false)
	e.process(map[string]any{"action": "write", "sessionId": info.SessionID, "data": "hello\n"})
	poll, _ := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 60_000})
	if !strings.Contains(poll, "got [hello]") || !strings.Contains(poll, "(Command exited with code 0)") {
		t.Errorf("poll after writing to the terminal: %q", poll)
	}
}

// TestExecHugeOutput checks that a command printing 1 GB is drained to
// the end with memory bounded. It measures the process's allocations, so it
// does not run in parallel with other tests.
func TestExecHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 1 GB")
	}
	// The pipeline cuts long results too; keep below its limit to see ours.
	const limit = 20_000
	e := newEnv(t, map[string]any{"maxOutputChars": limit})
	const size = 1 << 30
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, info := e.exec(map[string]any{
		"command": fmt.Sprintf("echo BEGIN; yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c %d; echo; echo END", size),
		"timeout": 600, "yieldMs": 600_000,
	}, false)
	runtime.ReadMemStats(&after)
	if info.Status != "exited" || *info.ExitCode != 0 {
		t.Fatalf("details %+v, want a clean exit (the command was drained to the end)", info)
	}
	if want := int64(size + len("BEGIN\n\nEND\n")); info.OutputBytes != want {
		t.Errorf("output bytes = %d, want %d", info.OutputBytes, want)
	}
	if !info.Truncated {
		t.Error("details do not say the output was truncated")
	}
	if len(got) > limit+100 {
		t.Errorf("result text is %d bytes, want at most about %d", len(got), limit)
	}
	if !strings.HasPrefix(got, "BEGIN\n0123456789") || !strings.HasSuffix(got, "\nEND") || !strings.Contains(got, "GB of output omitted …]") {
		t.Errorf("result does not keep the head and tail with an omission marker: %q … %q", got[:50], got[len(got)-50:])
	}
	const bound = 100 << 20
	if grew := after.TotalAlloc - before.TotalAlloc; grew > bound {
		t.Errorf("the call allocated %d MB, want < %d MB", grew>>20, bound>>20)
	}
	t.Logf("allocated %.1f MB while the command printed 1 GB", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
}

func TestFactoriesNeedWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	writeFile(t, file, "", 0o644)
	tests := []struct {
		name string
		tc   *tool.Context
		want string
	}{
		{"no root", &tool.Context{}, "no file-system root"},
		{"missing workspace", &tool.Context{Identity: tool.Identity{Workspace: filepath.Join(dir, "gone")}}, "need a workspace: stat " + filepath.Join(dir, "gone") + ": no such file"},
		{"workspace without root", &tool.Context{Identity: tool.Identity{Workspace: dir}}, dir + " is not open as the file-system root"},
		{"missing root", &tool.Context{FSRoot: filepath.Join(dir, "nope")}, "unusable"},
		{"root is a file", &tool.Context{FSRoot: file}, "not a directory"},
		{"bad config", &tool.Context{FSRoot: dir, Config: tool.Config{ConfigKey: map[string]any{"maxTimeout": -1}}}, "must not be negative"},
		{"bad ttl", &tool.Context{FSRoot: dir, Config: tool.Config{ConfigKey: map[string]any{"sessionTtl": "soon"}}}, "sessionTtl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registry.New()
			m, err := Register(reg)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			errs := map[string]error{}
			tools := reg.ResolveAll(tt.tc, func(id string, err error) { errs[id] = err })
			if len(tools) != 0 {
				t.Errorf("resolved %d tools, want none", len(tools))
			}
			for _, id := range []string{"exec", "process"} {
				if errs[id] == nil || !strings.Contains(errs[id].Error(), tt.want) {
					t.Errorf("%s: error %v, want one containing %q", id, errs[id], tt.want)
				}
			}
		})
	}
	t.Run("available", func(t *testing.T) {
		reg := registry.New()
		m, err := Register(reg)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		tools := reg.ResolveAll(&tool.Context{FSRoot: dir}, func(id string, err error) { t.Errorf("%s: %v", id, err) })
		if len(tools) != 2 || tools[0].Name != "exec" || tools[1].Name != "process" {
			t.Fatalf("resolved %v, want exec and process", tools)
		}
		ex := tools[0].Meta
		if ex.Risk != tool.RiskHigh || !ex.Capabilities.Background || !ex.Capabilities.PTY || ex.Source != tool.SourceCore || ex.Section != "runtime" {
			t.Errorf("exec meta = %+v", ex)
		}
		if p := tools[1].Meta; p.Risk != tool.RiskMedium || p.Source != tool.SourceCore || p.Section != "runtime" {
			t.Errorf("process meta = %+v", p)
		}
		if max := tools[0].Parameters.Properties["timeout"].Maximum; max == nil || *max != defaultMaxTimeout {
			t.Errorf("timeout maximum = %v, want %d", max, defaultMaxTimeout)
		}
	})
}

func TestManagerClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]any{"killGraceMs": 300})
	_, info := e.exec(map[string]any{"command": "sleep 3600", "background": true}, false)
	if groupGone(info.PID) {
		t.Fatal("the background command is not running")
	}
	// Close says which command it stopped: its caller was told it would go on.
	if err := e.m.Close(); err == nil || err.Error() != "stopped 1 command still running in the background: "+info.SessionID+" (sleep 3600)" {
		t.Errorf("Close: %v", err)
	}
	if !groupGone(info.PID) {
		t.Errorf("process group %d survived Close", info.PID)
	}
	msg := e.call("exec", map[string]any{"command": "touch ran"})
	if !msg.IsError || !strings.Contains(text(msg), "shut down") {
		t.Errorf("exec after Close: isError=%v text %q", msg.IsError, text(msg))
	}
	mustNotExist(t, filepath.Join(e.root, "ran"))
}
