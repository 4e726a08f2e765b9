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
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
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
// allowed, and for an allowed name at a private address without
// allowPrivate. The result's details name every host, reached or refused.
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
			e := sandboxed(t, root, map[string]any{"network": tc.network})
			e.m.resolver = names{"registry.test": "127.0.0.1"}
			before := hits.Load()
			out, info := e.exec(map[string]any{"command": npmInstall(registry), "timeout": 120}, false)
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
