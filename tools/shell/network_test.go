package shell

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// names answers host names from a table: the test's DNS.
type names map[string]string

func (n names) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := n[strings.ToLower(host)]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// registryStandIn serves one npm package, tinypkg 1.0.0, as a registry
// does: its metadata at /tinypkg and its tarball, addressed by the name
// host (which the test's DNS maps to the server's 127.0.0.1). It counts
// the requests it answers.
func registryStandIn(t *testing.T, host string) (url string, hits *atomic.Int64) {
	t.Helper()
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name":"tinypkg","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     `module.exports = "tiny";`,
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	sum1 := sha1.Sum(tgz.Bytes())
	sum512 := sha512.Sum512(tgz.Bytes())
	hits = &atomic.Int64{}
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	url = "http://" + host + ":" + port + "/"
	meta, _ := json.Marshal(map[string]any{
		"name": "tinypkg", "dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": "tinypkg", "version": "1.0.0",
			"dist": map[string]string{
				"tarball":   url + "tinypkg/-/tinypkg-1.0.0.tgz",
				"shasum":    hex.EncodeToString(sum1[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
			},
		}},
	})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/tinypkg":
			w.Header().Set("Content-Type", "application/json")
			w.Write(meta)
		case "/tinypkg/-/tinypkg-1.0.0.tgz":
			w.Write(tgz.Bytes())
		default:
			http.NotFound(w, r)
		}
	})
	return url, hits
}

// npmInstall is the command the tests run in the sandbox.
func npmInstall(registry string) string {
	return "npm install tinypkg --registry " + registry + " --no-audit --no-fund --no-update-notifier --fetch-retries=0 2>&1"
}

// TestSandboxNetworkAllowlist: with tools.exec.network, npm install in the
// sandbox fetches a package from a registry reachable only through the
// proxy, by a name the allowlist holds (and allowPrivate, since the
// stand-in is on loopback); the same command is refused for a name not
// allowed when nobody can be asked about it, and for an allowed name at a
// private address without allowPrivate. The result's details name every host, reached or refused.
func TestSandboxNetworkAllowlist(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed, so npm install through the sandbox's proxy cannot be tested: apt-get install npm")
	}
	registry, hits := registryStandIn(t, "registry.test")
	for _, tc := range []struct {
		name    string
		network map[string]any
		ok      bool
		outcome string
		reason  string
	}{
		{"allowed", map[string]any{"allow": []string{"registry.test"}, "allowPrivate": []string{"registry.test"}}, true, "reached", ""},
		{"not allowed", map[string]any{"allow": []string{"*.registry.test"}}, false, "refused", "registry.test is not in tools.exec.network.allow"},
		{"private", map[string]any{"allow": []string{"registry.test"}}, false, "refused", "resolves to 127.0.0.1, which is a loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := sandboxWorkspace(t)
			var asked atomic.Int64
			e := newEnvAt(t, root, map[string]any{"sandbox": map[string]any{"required": true}, "killGraceMs": 300, "network": tc.network}, nil,
				invoke.WithConfirmer(person(invoke.Answer{}, &invoke.NoOneToAsk{Why: "nobody is there"}, &asked)))
			e.m.resolver = names{"registry.test": "127.0.0.1"}
			before := hits.Load()
			out, info := e.exec(map[string]any{"command": npmInstall(registry), "timeout": 120, "yieldMs": 120000}, false)
			_, statErr := os.Stat(filepath.Join(root, "node_modules", "tinypkg", "index.js"))
			if tc.ok != (statErr == nil) || tc.ok != (info.ExitCode != nil && *info.ExitCode == 0) {
				t.Fatalf("npm install: exit %v, installed %v, want success %v:\n%s", info.ExitCode, statErr == nil, tc.ok, out)
			}
			if !tc.ok && hits.Load() != before {
				t.Errorf("the registry was reached %d times by a refused install", hits.Load()-before)
			}
			found := false
			for _, u := range info.Network {
				if u.Host == "registry.test" && u.Outcome == tc.outcome && strings.Contains(u.Reason, tc.reason) {
					found = true
				}
				if u.Outcome != tc.outcome {
					t.Errorf("network use %+v, want every one %s", u, tc.outcome)
				}
			}
			if !found {
				t.Errorf("details.network = %+v, want registry.test %s (%q)", info.Network, tc.outcome, tc.reason)
			}
		})
	}
}

// TestSandboxNetworkOffByDefault: without tools.exec.network the sandbox
// has no proxy and no proxy variables: the network stays off.
func TestSandboxNetworkOffByDefault(t *testing.T) {
	t.Parallel()
	root, _ := sandboxWorkspace(t)
	e := sandboxed(t, root, nil)
	out, info := e.exec(map[string]any{"command": "echo proxy=${HTTPS_PROXY:-none}; exec 3<>/dev/tcp/127.0.0.1/3128 && echo connected"}, false)
	if !strings.Contains(out, "proxy=none") || strings.Contains(out, "connected") || len(info.Network) != 0 {
		t.Errorf("the sandbox without network: %q %+v", out, info)
	}
}

// audits keeps the audit records of the calls a runner made.
type audits struct {
	mu      sync.Mutex
	records []audit.Record
}

func (a *audits) Append(_ context.Context, r audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, r)
	return nil
}

func (a *audits) all() []audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.records)
}

// person approves every call and answers the questions a call asks
// (those about a host not in tools.exec.network.allow) with answer or
// err, counting them.
func person(answer invoke.Answer, err error, asked *atomic.Int64) invoke.Confirmer {
	return invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
		if c.Reason != "a host not in tools.exec.network.allow" {
			return invoke.Answer{Allow: true, Blanket: true, By: "test (the call)"}, nil
		}
		asked.Add(1)
		return answer, err
	})
}

// TestSandboxNetworkAsks: a host not in tools.exec.network.allow is asked
// about, once for all the requests of a command (npm fetches the
// package's metadata and its tarball from it), through the call's own
// confirmer: npm install in the sandbox succeeds when the person says yes,
// is refused when they say no and when nobody can be asked — each refusal
// saying how to allow the host — and an answer for the session holds for
// the next command. The audit record of each call has the question, who
// answered, and the hosts.
func TestSandboxNetworkAsks(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed, so npm install through the sandbox's proxy cannot be tested: apt-get install npm")
	}
	registry, hits := registryStandIn(t, "new.test")
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(registry, "http://"), "/"))
	for _, tc := range []struct {
		name     string
		answer   invoke.Answer
		err      error
		ok       bool
		answered string // the audit record's answer
		reason   string // what the refusal says
	}{
		{"yes", invoke.Answer{Allow: true, By: "someone"}, nil, true, "allow-once", ""},
		{"no", invoke.Answer{Reason: "not today", By: "someone"}, nil, false, "deny",
			"new.test is not in tools.exec.network.allow, and someone did not allow it: not today; add it to tools.exec.network.allow"},
		{"nobody", invoke.Answer{}, &invoke.NoOneToAsk{Why: "the client cannot ask its user"}, false, "none",
			"new.test is not in tools.exec.network.allow, and nobody could be asked (the client cannot ask its user); add it to tools.exec.network.allow"},
		{"session", invoke.Answer{Allow: true, Grant: invoke.GrantSession, By: "someone"}, nil, true, "allow-session", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := sandboxWorkspace(t)
			var asked atomic.Int64
			log := &audits{}
			e := publicStandIn(t, root, port, person(tc.answer, tc.err, &asked), log)
			before := hits.Load()
			out, info := e.exec(map[string]any{"command": npmInstall(registry), "timeout": 120, "yieldMs": 120000}, false)
			_, statErr := os.Stat(filepath.Join(root, "node_modules", "tinypkg", "index.js"))
			if tc.ok != (statErr == nil) || tc.ok != (info.ExitCode != nil && *info.ExitCode == 0) {
				t.Fatalf("npm install: exit %v, installed %v, want success %v:\n%s", info.ExitCode, statErr == nil, tc.ok, out)
			}
			if !tc.ok && hits.Load() != before {
				t.Errorf("the registry was reached %d times by a refused install", hits.Load()-before)
			}
			if asked.Load() != 1 {
				t.Errorf("asked %d times about new.test, want once", asked.Load())
			}
			want := tool.HostUse{Host: "new.test", Port: port, Outcome: "reached"}
			if !tc.ok {
				want.Outcome = "refused"
			}
			checkHosts := func(what string, got []tool.HostUse) {
				t.Helper()
				if len(got) != 1 || got[0].Host != want.Host || got[0].Port != want.Port || got[0].Outcome != want.Outcome || !strings.HasPrefix(got[0].Reason, tc.reason) {
					t.Errorf("%s = %+v, want %+v with a reason beginning %q", what, got, want, tc.reason)
				}
			}
			checkHosts("details.network", info.Network)
			rec := execRecord(t, log)
			checkHosts("the audit record's network", rec.Network)
			if len(rec.Questions) != 1 || rec.Questions[0].Answer != tc.answered ||
				!strings.Contains(rec.Questions[0].Message, "the command `npm install tinypkg") ||
				!strings.Contains(rec.Questions[0].Message, "wants to reach new.test:"+port) {
				t.Fatalf("the audit record's questions = %+v, want one answered %s", rec.Questions, tc.answered)
			}
			if by := rec.Questions[0].By; tc.err == nil && by != "someone" {
				t.Errorf("the question was answered by %q, want someone", by)
			}
			if tc.answer.Grant != invoke.GrantSession {
				return
			}
			// The next command of the session is not asked again.
			os.RemoveAll(filepath.Join(root, "node_modules"))
			e.exec(map[string]any{"command": npmInstall(registry), "timeout": 120, "yieldMs": 120000}, false)
			if asked.Load() != 1 {
				t.Errorf("asked again after an answer for the session (%d questions)", asked.Load())
			}
			if rec := execRecord(t, log); len(rec.Questions) != 1 || rec.Questions[0].Answer != "allowed-before" {
				t.Errorf("the second call's questions = %+v, want one allowed before", rec.Questions)
			}
		})
	}
}

// execRecord returns the audit record of the last exec call.
func execRecord(t *testing.T, log *audits) audit.Record {
	t.Helper()
	recs := log.all()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Tool == "exec" {
			return recs[i]
		}
	}
	t.Fatalf("no audit record of exec among %+v", recs)
	return audit.Record{}
}

// publicStandIn is a sandboxed exec whose network allows other.test only,
// with confirmer and log, where new.test has a public address: the test's
// dial takes what the proxy's guard let through to the stand-in on port.
func publicStandIn(t *testing.T, root, port string, confirmer invoke.Confirmer, log *audits) *env {
	t.Helper()
	e := newEnvAt(t, root, map[string]any{"sandbox": map[string]any{"required": true}, "killGraceMs": 300,
		"network": map[string]any{"allow": []string{"other.test"}}}, nil,
		invoke.WithConfirmer(confirmer), invoke.WithAudit(log))
	e.m.resolver = names{"new.test": "93.184.215.14"}
	e.m.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != net.JoinHostPort("93.184.215.14", port) {
			return nil, fmt.Errorf("the test dials only the stand-in, not %s", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
	}
	return e
}

// TestSandboxNetworkAfterTheCall: a command left running in the
// background that asks for hosts after its call has returned is not asked
// about a new host (nobody waits on that call): the host is refused with
// how to allow it, and the hosts it asked for are in the audit record of
// the poll that follows, not of the exec call.
func TestSandboxNetworkAfterTheCall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed, so npm install through the sandbox's proxy cannot be tested: apt-get install npm")
	}
	registry, hits := registryStandIn(t, "new.test")
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(registry, "http://"), "/"))
	root, _ := sandboxWorkspace(t)
	var asked atomic.Int64
	log := &audits{}
	e := publicStandIn(t, root, port, person(invoke.Answer{Allow: true, By: "someone"}, nil, &asked), log)
	// The command waits for the file "go", which the test writes once the
	// exec call has returned.
	_, info := e.exec(map[string]any{"command": "while [ ! -e go ]; do sleep 0.05; done; " + npmInstall(registry), "background": true, "timeout": 120}, false)
	if rec := execRecord(t, log); len(rec.Network) != 0 || len(rec.Questions) != 0 {
		t.Fatalf("the exec call's record has hosts before the command asked for any: %+v %+v", rec.Network, rec.Questions)
	}
	writeFile(t, filepath.Join(root, "go"), "", 0o666)
	out, _ := e.process(map[string]any{"action": "poll", "sessionId": info.SessionID, "timeout": 120000})
	if hits.Load() != 0 || asked.Load() != 0 {
		t.Fatalf("after the call returned: %d requests reached the registry, %d questions asked; want none:\n%s", hits.Load(), asked.Load(), out)
	}
	recs := log.all()
	poll := recs[len(recs)-1]
	if poll.Tool != "process" || len(poll.Network) != 1 || poll.Network[0].Host != "new.test" || poll.Network[0].Outcome != "refused" ||
		!strings.Contains(poll.Network[0].Reason, "after its call had returned, when nobody can be asked; add it to tools.exec.network.allow") {
		t.Errorf("the poll's audit record: %s %+v, want new.test refused after the call", poll.Tool, poll.Network)
	}
}

// TestSandboxNetworkDescribed: the model is told what the sandbox's
// network is — none, or the proxy with its allowlist.
func TestSandboxNetworkDescribed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, tc := range []struct {
		network map[string]any
		want    string
	}{
		{nil, "there is no network"},
		{map[string]any{"allow": []string{"registry.npmjs.org", "*.github.com"}}, "only through a proxy that lets through registry.npmjs.org, *.github.com and asks the user about any other host"},
	} {
		m := NewManager()
		t.Cleanup(func() { _ = m.Close() })
		cfg := map[string]any{"sandbox": map[string]any{"required": true}}
		if tc.network != nil {
			cfg["network"] = tc.network
		}
		exe, err := m.execFactory(&tool.Context{Identity: tool.Identity{Workspace: root}, FSRoot: root, Config: tool.Config{ConfigKey: cfg}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(exe.Description, tc.want) {
			t.Errorf("with network %v the description does not say %q:\n%s", tc.network, tc.want, exe.Description)
		}
	}
}
