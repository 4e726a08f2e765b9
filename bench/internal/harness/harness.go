// Package harness holds what the benchmark commands under bench/ share:
// building the servers, the workspace they read, the CPU time of a
// running server, and the URL a server listening over HTTP prints.
package harness

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Check ends the benchmark when err is not nil.
func Check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Build builds the package pkg (a path like ./bench/floor, from the
// repository's root) into dir/name and returns the binary's path.
func Build(dir, name, pkg string) string {
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stderr = os.Stderr
	Check(cmd.Run())
	return out
}

// Workspace makes dir/workspace holding file.txt, the 4 KB file (64 lines
// of 64 bytes) every server reads, and dir/plain.yaml, an empty Toolbelt
// configuration; it returns both paths.
func Workspace(dir string) (ws, plainConfig string) {
	ws = filepath.Join(dir, "workspace")
	Check(os.MkdirAll(ws, 0o755))
	line := strings.Repeat("x", 63) + "\n"
	Check(os.WriteFile(filepath.Join(ws, "file.txt"), []byte(strings.Repeat(line, 64)), 0o644))
	plainConfig = filepath.Join(dir, "plain.yaml")
	Check(os.WriteFile(plainConfig, []byte("{}\n"), 0o644))
	return ws, plainConfig
}

// CPU is the CPU time (user and system, all threads, the garbage collector
// included) a running process has used, from /proc.
func CPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	Check(err)
	// Fields after the command name (which may hold spaces) start at ") ".
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		log.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// serverURL is what a server listening over HTTP prints on stdout.
var serverURL = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`)

// Serve starts cmd, a server that prints its MCP endpoint's URL on stdout,
// and returns that URL; the rest of its output is read and dropped.
func Serve(cmd *exec.Cmd) string {
	out, err := cmd.StdoutPipe()
	Check(err)
	Check(cmd.Start())
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := serverURL.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1]
		}
	}
	log.Fatalf("%s printed no URL", cmd.Path)
	return ""
}

// Stop interrupts a server started by Serve, as Ctrl-C does, so that it
// finishes what it must (an audit spool moved into the log) and waits for
// it to exit; it is killed after ten seconds.
func Stop(cmd *exec.Cmd) {
	Check(cmd.Process.Signal(os.Interrupt))
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
