package shell

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func sh(script string) Child {
	return Child{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", script}, Env: ScrubbedEnv(nil, nil), KillGrace: 100 * time.Millisecond}
}

func TestRunChild(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lines []string
	c := sh(`cat; echo err1 >&2; echo err2 >&2; exit 3`)
	c.Stdin = []byte("hello")
	c.Stderr = func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }
	res, err := RunChild(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "hello" || res.ExitCode != 3 || res.Stopped || res.StdoutOverflow {
		t.Errorf("result = %+v", res)
	}
	if strings.Join(lines, ",") != "err1,err2" {
		t.Errorf("stderr lines = %q", lines)
	}
}

func TestRunChildOverflowAndSignal(t *testing.T) {
	t.Parallel()
	c := sh(`head -c 100000 /dev/zero; sleep 300`)
	c.MaxStdout = 1000
	res, err := RunChild(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.StdoutOverflow || len(res.Stdout) != 1000 || res.ExitCode != -1 || res.Signal != syscall.SIGTERM {
		t.Errorf("result: overflow %v, %d bytes, code %d, signal %v", res.StdoutOverflow, len(res.Stdout), res.ExitCode, res.Signal)
	}
	res, _ = RunChild(context.Background(), sh(`kill -SEGV $$`))
	if res.ExitCode != -1 || SignalName(res.Signal) != "SIGSEGV" {
		t.Errorf("crash: %+v", res)
	}
}

func TestRunChildCancelEndsTheGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The child ignores SIGTERM and leaves a grandchild behind.
	c := sh(`trap '' TERM; sleep 300 & echo $! > ` + pidFile + `; while :; do sleep 1; done`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := RunChild(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Signal != syscall.SIGKILL {
		t.Errorf("result = %+v, want stopped by SIGKILL after the grace", res)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if groupAlive(pid) || syscall.Kill(pid, 0) == nil && !zombie(pid) {
		t.Errorf("the grandchild %d outlived the cancelled child", pid)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

func TestScrubbedEnv(t *testing.T) {
	t.Setenv("CHILD_TEST_SECRET", "s")
	t.Setenv("CHILD_TEST_OK", "ok")
	env := strings.Join(ScrubbedEnv([]string{"CHILD_TEST_ALLOWED_*"}, map[string]string{"CHILD_TEST_SET": "v"}), "\n")
	if strings.Contains(env, "CHILD_TEST_SECRET") || !strings.Contains(env, "CHILD_TEST_OK=ok") || !strings.Contains(env, "CHILD_TEST_SET=v") {
		t.Errorf("env = %s", env)
	}
}
