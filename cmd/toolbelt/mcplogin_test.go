package main

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/internal/oauthtest"
)

// TestMCPOAuthLogin: an imported server behind a real authorization
// server (oauthtest, on 127.0.0.1) is not reached before a sign-in;
// `mcp login --no-browser` prints the sign-in URL and waits, an HTTP
// client following the URL's redirects plays the browser (dynamic
// registration, PKCE S256, the resource parameter are checked by the
// server); the imported tool is then called in new processes; a token
// the server no longer takes is refreshed once and the rotated grant is
// kept (the next process needs no refresh); logout forgets it. No token
// the server issued appears in any output, log line, or file of the data
// directory (the database with its audit log, the spool).
func TestMCPOAuthLogin(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "toolbelt.yaml")
	must(t, os.WriteFile(cfg, []byte("mcpServers:\n  remote:\n    url: "+as.URL+"/mcp\n    oauth: {}\n"), 0o644))
	env := sharedEnvironment(t, data, envTokenKey+"=", envTokenKeyFile+"=")
	var outputs strings.Builder
	cli := func(code int, args ...string) cliResult {
		t.Helper()
		r := runCLIWith(t, env, dir, "", append([]string{"--config", cfg, "--verbose"}, args...)...)
		outputs.WriteString(r.stdout + r.stderr)
		return r.expect(t, code)
	}

	if r := cli(0, "mcp", "servers"); !regexp.MustCompile(`(?m)^remote +http +(down|starting) +0 +[0-9]+ +oauth: not signed in — run toolbelt mcp login remote +.*not signed in to remote`).MatchString(r.stdout) {
		t.Errorf("before the sign-in:\n%s", r.stdout)
	}
	login(t, env, dir, cfg, "Signed in to remote.", &outputs)
	if got := as.Granted("authorization_code"); got != 1 {
		t.Fatalf("%d codes exchanged, want 1", got)
	}
	if r := cli(0, "call", "remote__echo", "--args", `{"text":"hi"}`); !strings.Contains(r.stdout, "\necho: hi\n") { // wrapped as external content
		t.Errorf("call: %q", r.stdout)
	}
	as.Expire()
	if r := cli(0, "call", "remote__echo", "--args", `{"text":"again"}`); !strings.Contains(r.stdout, "\necho: again\n") {
		t.Errorf("call after expiry: %q", r.stdout)
	}
	cli(0, "call", "remote__echo", "--args", `{"text":"kept"}`)
	if got := as.Granted("refresh_token"); got != 1 {
		t.Errorf("%d refreshes, want 1: one after the expiry, and the rotated grant kept for the next process", got)
	}
	if r := cli(0, "mcp", "servers"); !regexp.MustCompile(`(?m)^remote +http +ready +1 +0 +oauth: signed in, expires .* \(then refreshed\)$`).MatchString(r.stdout) {
		t.Errorf("signed in:\n%s", r.stdout)
	}
	cli(0, "describe", "remote__echo") // the tool as tools and models see it
	cli(0, "list", "--json")

	if r := cli(0, "mcp", "logout", "remote"); r.stdout != "Signed out of remote: its tokens are forgotten.\n" {
		t.Errorf("logout: %q", r.stdout)
	}
	if r := cli(0, "mcp", "servers"); !strings.Contains(r.stdout, "oauth: not signed in — run toolbelt mcp login remote") {
		t.Errorf("after logout:\n%s", r.stdout)
	}
	if r := cli(0, "mcp", "logout", "remote"); r.stdout != "Not signed in to remote: nothing to forget.\n" {
		t.Errorf("second logout: %q", r.stdout)
	}

	seen := outputs.String()
	files := map[string][]byte{}
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[path], _ = os.ReadFile(path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("the data directory is empty")
	}
	for _, tok := range as.Issued() {
		if strings.Contains(seen, tok) {
			t.Errorf("a token is in the CLI's output or logs")
		}
		for path, b := range files {
			if bytes.Contains(b, []byte(tok)) {
				t.Errorf("a token is in %s", path)
			}
		}
	}
	if info, err := os.Stat(filepath.Join(data, "oauth-token.key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the key file: %v %v", info, err)
	}
}

// login runs `mcp login remote --no-browser`, follows the URL it prints
// with an HTTP client (the browser: the authorization server redirects to
// the command's loopback listener, or approves the device code), checks
// the page it ends on shows page, and waits for the command to end.
func login(t *testing.T, env []string, dir, cfg, page string, outputs *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--config", cfg, "mcp", "login", "remote", "--no-browser")
	cmd.Env, cmd.Dir = env, dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	var printed strings.Builder
	url := ""
	for url == "" && sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if u, ok := strings.CutPrefix(sc.Text(), "  http"); ok {
			url = "http" + u
		}
	}
	if url == "" {
		_ = cmd.Wait()
		t.Fatalf("no sign-in URL printed:\n%s\n%s", printed.String(), stderr.String())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(got), page) {
		t.Errorf("the sign-in's page: %d %s", resp.StatusCode, got)
	}
	for sc.Scan() { // the rest, some of it read by sc already
		printed.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil || !strings.HasSuffix(printed.String(), "Signed in to remote.\n") {
		t.Fatalf("mcp login: %v\n%s\n%s", err, printed.String(), stderr.String())
	}
	outputs.WriteString(printed.String() + stderr.String())
}

// TestMCPOAuthLoginDevice: where the authorization server offers the
// device authorization grant (RFC 8628), `mcp login --no-browser` prints
// the verification page and the code instead of a redirect URL, and waits
// while the person approves on another device (an HTTP client opening the
// page); the imported tool is then called.
func TestMCPOAuthLoginDevice(t *testing.T) {
	t.Parallel()
	as := oauthtest.New()
	defer as.Close()
	as.DeviceFlow()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	must(t, os.WriteFile(cfg, []byte("mcpServers:\n  remote:\n    url: "+as.URL+"/mcp\n    oauth: {}\n"), 0o644))
	env := sharedEnvironment(t, filepath.Join(dir, "data"), envTokenKey+"=", envTokenKeyFile+"=")
	var outputs strings.Builder
	login(t, env, dir, cfg, "Approved", &outputs)
	if !regexp.MustCompile(`Sign in to remote on any device: open\n\n  http://127\.0\.0\.1:[0-9]+/device\?user_code=\w+\n\nand enter the code \w+\.\n`).MatchString(outputs.String()) {
		t.Errorf("mcp login printed:\n%s", outputs.String())
	}
	if as.Granted(deviceGrant) != 1 || as.Granted("authorization_code") != 0 {
		t.Errorf("%d device grants, %d codes", as.Granted(deviceGrant), as.Granted("authorization_code"))
	}
	r := runCLIWith(t, env, dir, "", "--config", cfg, "call", "remote__echo", "--args", `{"text":"hi"}`).expect(t, 0)
	if !strings.Contains(r.stdout, "\necho: hi\n") {
		t.Errorf("call: %q", r.stdout)
	}
}

// deviceGrant is the device authorization grant's type.
const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"
