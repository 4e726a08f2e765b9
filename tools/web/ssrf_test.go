package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tools/web"
)

// TestSSRFBattery sends every way of naming a private, loopback or special
// address we know of through the tool, and checks each is refused with a
// reason, before anything is dialed, and that the private server the
// addresses point at never sees a request.
func TestSSRFBattery(t *testing.T) {
	t.Parallel()
	private := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "SECRET internal data")
	}))
	// The allowed server redirects wherever it is told to, with the status
	// it is told (302 by default), by header or by <meta http-equiv=refresh>.
	allowed := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if to := q.Get("meta"); to != "" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><head><meta http-equiv="refresh" content="0; url=%s"><title>Moved</title></head><body><p>This page moved.</p></body></html>`, html.EscapeString(to))
			return
		}
		if to := q.Get("to"); to != "" {
			code := http.StatusFound
			if c, err := strconv.Atoi(q.Get("code")); err == nil {
				code = c
			}
			w.Header().Set("Location", to)
			w.WriteHeader(code)
			return
		}
		fmt.Fprint(w, "public page")
	}))
	pport := private.port()
	res := newResolver(map[string][][]string{
		"internal.test":    {{"10.0.0.5"}},
		"metadata.test":    {{"169.254.169.254"}},
		"loop.test":        {{"127.0.0.1"}},
		"mixed.test":       {{"93.184.216.34", "127.0.0.1"}},
		"mixed6.test":      {{"93.184.216.34", "2606:4700::1", "fe80::1"}},
		"v6loop.test":      {{"::1"}},
		"v6mapped.test":    {{"::ffff:10.0.0.1"}},
		"ula.test":         {{"fd00::1234"}},
		"cgnat.test":       {{"100.100.100.100"}},
		"nat64.test":       {{"64:ff9b::c0a8:0101"}},
		"unspecified.test": {{"0.0.0.0"}},
	})
	dialer := &fakeDialer{}
	h := newHarness(t, setup{
		fetch: map[string]any{"allowHosts": []string{allowed.hostPort()}, "cacheTtl": "0s"},
		opts:  web.Options{Resolver: res, Dial: dialer.Dial},
	})
	redirect := func(to string) string { return allowed.URL + "/?to=" + url.QueryEscape(to) }
	redirectWith := func(code int, to string) string { return redirect(to) + "&code=" + strconv.Itoa(code) }
	cases := []struct {
		url, why string
	}{
		// Literal addresses.
		{"http://127.0.0.1:" + pport + "/", "loopback"},
		{"http://127.0.0.2/", "loopback"},
		{"http://0.0.0.0:" + pport + "/", "unspecified"},
		{"http://10.0.0.1/", "private address (10.0.0.0/8)"},
		{"http://172.16.5.4/", "private address (172.16.0.0/12)"},
		{"http://172.31.255.255/", "private address (172.16.0.0/12)"},
		{"http://192.168.1.1/", "private address (192.168.0.0/16)"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://100.64.0.1/", "carrier-grade NAT"},
		{"http://224.0.0.1/", "multicast"},
		{"http://239.255.255.250:1900/", "multicast"},
		{"http://240.0.0.1/", "reserved"},
		{"http://255.255.255.255/", "reserved"},
		{"http://192.0.2.1/", "documentation"},
		{"http://198.18.0.1/", "benchmarking"},
		{"http://192.0.0.8/", "IETF protocol"},
		// Other spellings of IPv4 addresses.
		{"http://2130706433:" + pport + "/", "loopback"},
		{"http://0x7f000001:" + pport + "/", "loopback"},
		{"http://0x7f.1:" + pport + "/", "loopback"},
		{"http://0177.0.0.1:" + pport + "/", "loopback"},
		{"http://0177.1/", "loopback"},
		{"http://127.1:" + pport + "/", "loopback"},
		{"http://127.0.1/", "loopback"},
		{"http://0/", "unspecified"},
		{"http://10.1/", "private address (10.0.0.0/8)"},
		{"http://3232235777/", "private address (192.168.0.0/16)"},
		{"http://0300.0250.0001.0001/", "private address (192.168.0.0/16)"},
		{"http://0xa9fea9fe/", "link-local"},
		{"http://0xA9.0xFE.0xA9.0xFE/", "link-local"},
		{"http://127.0.0.1.:" + pport + "/", "loopback"},
		{"http://2130706433.:" + pport + "/", "loopback"},
		{"http://0000:" + pport + "/", "unspecified"},
		{"http://00000000000000000000177.1:" + pport + "/", "loopback"},
		{"http://0x0000007f.1:" + pport + "/", "loopback"},
		{"HTTP://127.0.0.1:" + pport + "/", "loopback"},
		{"http://127.0.0.1:" + pport + "#@example.com/", "loopback"},
		{"http://0x7f.0x0.0x0.0x1.0x1/", "not a valid one"},
		{"http://4294967296/", "not a valid one"},
		// IPv6 forms.
		{"http://[::1]:" + pport + "/", "IPv6 loopback"},
		{"http://[0:0:0:0:0:0:0:1]/", "IPv6 loopback"},
		{"http://[::]/", "unspecified IPv6"},
		{"http://[::ffff:127.0.0.1]:" + pport + "/", "IPv4-mapped IPv6 form of 127.0.0.1"},
		{"http://[::ffff:7f00:1]/", "IPv4-mapped IPv6 form of 127.0.0.1"},
		{"http://[0:0:0:0:0:ffff:169.254.169.254]/", "IPv4-mapped IPv6 form of 169.254.169.254"},
		{"http://[::ffff:0:a00:1]/", "IPv4-translated IPv6 form of 10.0.0.1"},
		{"http://[::127.0.0.1]/", "IPv4-compatible IPv6 form of 127.0.0.1"},
		{"http://[::c0a8:101]/", "IPv4-compatible IPv6 form of 192.168.1.1"},
		{"http://[2002:7f00:1::]/", "6to4 IPv6 form of 127.0.0.1"},
		{"http://[2002:c0a8:101::1]/", "6to4 IPv6 form of 192.168.1.1"},
		{"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "Teredo IPv6 (client) form of 127.0.0.1"},
		{"http://[2001:0:a00:1::1]/", "Teredo IPv6 (server) form of 10.0.0.1"},
		{"http://[64:ff9b::7f00:1]/", "NAT64 IPv6 form of 127.0.0.1"},
		{"http://[64:ff9b::a9fe:a9fe]/", "NAT64 IPv6 form of 169.254.169.254"},
		{"http://[64:ff9b:1::1]/", "local-use NAT64"},
		{"http://[fc00::1]/", "unique-local"},
		{"http://[fd12:3456:789a::1]/", "unique-local"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fe80::1%25eth0]/", "zone"},
		{"http://[fec0::1]/", "site-local"},
		{"http://[ff02::1]/", "multicast"},
		{"http://[2001:db8::1]/", "documentation"},
		{"http://[100::1]/", "discard"},
		{"http://[2001:2::1]/", "benchmarking"},
		{"http://[2001:20::1]/", "ORCHIDv2"},
		{"http://[3fff::1]/", "documentation"},
		{"http://[5f00::1]/", "segment-routing"},
		// Full-width digits: IDNA maps them to ASCII, so the connection
		// would go to 127.0.0.1; the dialer's check refuses it.
		{"http://１２７.０.０.１:" + pport + "/", "127.0.0.1 is a loopback address"},
		{"http://①②⑦.0.0.1:" + pport + "/", "127.0.0.1 is a loopback address"},
		// Ideographic full stops are dots to IDNA.
		{"http://127。0。0。1:" + pport + "/", "127.0.0.1 is a loopback address"},
		// Circled letters, a soft hyphen and a zero-width space all map to
		// plain "localhost"; the dialer refuses the name itself, whatever
		// the resolver would answer.
		{"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:" + pport + "/", "localhost names this machine"},
		{"http://local\u00adhost:" + pport + "/", "localhost names this machine"},
		{"http://loc\u200balhost:" + pport + "/", "localhost names this machine"},
		// Names.
		{"http://localhost:" + pport + "/", "loopback"},
		{"http://LOCALHOST.:" + pport + "/", "loopback"},
		{"http://api.localhost/", "loopback"},
		{"http://internal.test/", "internal.test resolves to 10.0.0.5"},
		{"http://metadata.test/latest/meta-data/", "link-local"},
		{"http://loop.test:" + pport + "/", "loopback"},
		{"http://mixed.test/", "mixed.test resolves to 127.0.0.1"},
		{"http://mixed6.test/", "mixed6.test resolves to fe80::1, which is an IPv6 link-local address"},
		{"http://v6loop.test/", "IPv6 loopback"},
		{"http://v6mapped.test/", "v6mapped.test resolves to 10.0.0.1, which is a private address"},
		{"http://ula.test/", "unique-local"},
		{"http://cgnat.test/", "carrier-grade NAT"},
		{"http://nat64.test/", "NAT64 IPv6 form of 192.168.1.1"},
		{"http://unspecified.test/", "unspecified"},
		// Schemes and credentials.
		{"file:///etc/passwd", "scheme \"file\" is not allowed"},
		{"ftp://example.com/file", "scheme \"ftp\" is not allowed"},
		{"gopher://127.0.0.1:6379/_INFO", "scheme \"gopher\" is not allowed"},
		{"data:text/html,<h1>hi</h1>", "scheme \"data\" is not allowed"},
		{"javascript:alert(1)", "scheme \"javascript\" is not allowed"},
		{"//127.0.0.1/", "no scheme"},
		{"/etc/passwd", "no scheme"},
		{"http://user:secret@example.com/", "credentials"},
		{"http://user@" + allowed.hostPort() + "/", "credentials"},
		{"http://a@127.0.0.1:" + pport + "/", "credentials"},
		{"http://example.com:" + pport + "@127.0.0.1:" + pport + "/", "credentials"},
		{"http:\\\\127.0.0.1:" + pport + "/", "no host"},
		{"http:/127.0.0.1:" + pport + "/", "no host"},
		// Port 0 and ports past 65535 are no port a server listens on.
		{"http://127.0.0.1:0/", "port 0 is not a TCP port"},
		{"http://example.com:0/", "port 0 is not a TCP port"},
		{"http://example.com:65536/", "port 65536 is not a TCP port"},
		{"http:///path", "no host"},
		// Redirects from an allowed host to places it may not send us.
		{redirect("http://127.0.0.1:" + pport + "/"), "a redirect from " + allowed.URL},
		{redirect("http://localhost:" + pport + "/"), "loopback"},
		{redirect("http://[::1]:" + pport + "/"), "IPv6 loopback"},
		{redirect("http://169.254.169.254/latest/meta-data/"), "link-local"},
		{redirect("http://2130706433:" + pport + "/"), "loopback"},
		{redirect("http://[::ffff:127.0.0.1]:" + pport + "/"), "IPv4-mapped"},
		{redirect("http://internal.test/"), "10.0.0.5"},
		{redirect("file:///etc/passwd"), "scheme \"file\""},
		{redirect("http://admin:pw@" + allowed.hostPort() + "/"), "credentials"},
		{redirect("//127.0.0.1:" + pport + "/"), "loopback"},
		{redirect("http://0:" + pport + "/"), "unspecified"},
		{redirect("http://[::ffff:7f00:1]:" + pport + "/"), "IPv4-mapped"},
		{redirect("http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:" + pport + "/"), "localhost names this machine"},
		{redirect("http:\\\\127.0.0.1:" + pport + "/"), "no host"},
		{redirectWith(http.StatusMovedPermanently, "http://127.0.0.1:"+pport+"/"), "a redirect from " + allowed.URL},
		{redirectWith(http.StatusSeeOther, "http://10.0.0.1/"), "private address (10.0.0.0/8)"},
		{redirectWith(http.StatusTemporaryRedirect, "http://127.0.0.1:"+pport+"/"), "a redirect from " + allowed.URL},
		{redirectWith(http.StatusPermanentRedirect, "http://[::1]:"+pport+"/"), "IPv6 loopback"},
		{redirectWith(http.StatusPermanentRedirect, "http://metadata.test/"), "link-local"},
		// An allowed host:port does not allow the same host on another port.
		{"http://127.0.0.1:" + pport + "/other-port", "loopback"},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	t.Logf("%d refused URLs", len(cases))
	for _, tc := range cases {
		before := len(dialer.addrs())
		text, msg := h.fetch(map[string]any{"url": tc.url})
		if !msg.IsError {
			t.Errorf("%s: fetched:\n%s", tc.url, text)
			continue
		}
		if !strings.Contains(text, "refused") || !strings.Contains(text, tc.why) {
			t.Errorf("%s: the refusal does not say %q:\n%s", tc.url, tc.why, text)
		}
		// Only a redirect's first hop, to the allowed server, is dialed.
		for _, a := range dialer.addrs()[before:] {
			if a != allowed.hostPort() {
				t.Errorf("%s: dialed %s", tc.url, a)
			}
		}
	}
	// URLs Go cannot parse (a backslash in the authority, raw or escaped
	// control bytes in the host) are rejected before the guard, never sent.
	for _, u := range []string{
		"http://example.com\\@127.0.0.1:" + pport + "/",
		"http://127.0.0.1:" + pport + "\\@example.com/",
		"http://%31%32%37.0.0.1:" + pport + "/",
		"http://127.0.0.1%00.example.com:" + pport + "/",
		"http://127.0.0.1\t:" + pport + "/",
		"http://127.0.0.1:+" + pport + "/",
	} {
		before := len(dialer.addrs())
		text, msg := h.fetch(map[string]any{"url": u})
		if !msg.IsError || !strings.Contains(text, "is not a URL") {
			t.Errorf("%s: %s", u, text)
		}
		if n := len(dialer.addrs()) - before; n != 0 {
			t.Errorf("%s: %d dials", u, n)
		}
	}
	// A <meta http-equiv=refresh> is not a redirect web_fetch follows: the
	// page that says it moved is what comes back.
	text, msg := h.fetch(map[string]any{"url": allowed.URL + "/?meta=" + url.QueryEscape("http://127.0.0.1:"+pport+"/")})
	if msg.IsError || !strings.Contains(text, "This page moved.") || strings.Contains(text, "SECRET") {
		t.Errorf("meta refresh: %s", text)
	}
	if n := private.hits.Load(); n != 0 {
		t.Errorf("the private server got %d requests", n)
	}
	if res.count("mixed.test") != 1 {
		t.Errorf("mixed.test was resolved %d times, want once", res.count("mixed.test"))
	}
}

// TestSSRFRebinding uses a resolver that answers a public address first and
// a private one after, as a rebinding attacker's DNS server does: the
// connection goes to the address that was checked, the name is not resolved
// again for it, and the next fetch, which gets the private answer, is
// refused.
func TestSSRFRebinding(t *testing.T) {
	t.Parallel()
	private := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "SECRET internal data")
	}))
	public := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bounce" {
			// The attacker's page sends the client to a second name that
			// now points inside.
			http.Redirect(w, r, "http://rebind2.test/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "harmless public page")
	}))
	res := newResolver(map[string][][]string{
		"rebind.test":   {{"93.184.216.34"}, {"127.0.0.1"}},
		"rebind2.test":  {{"127.0.0.1"}},
		"attacker.test": {{"93.184.216.34"}},
	})
	dialer := &fakeDialer{routes: map[string]string{"93.184.216.34:80": public.hostPort()}}
	h := newHarness(t, setup{
		fetch: map[string]any{"cacheTtl": "0s"},
		opts:  web.Options{Resolver: res, Dial: dialer.Dial},
	})
	text, msg := h.fetch(map[string]any{"url": "http://rebind.test/"})
	if msg.IsError || !strings.Contains(text, "harmless public page") {
		t.Fatalf("first fetch: %s", text)
	}
	if res.count("rebind.test") != 1 {
		t.Errorf("resolved %d times for one fetch, want once", res.count("rebind.test"))
	}
	text, msg = h.fetch(map[string]any{"url": "http://rebind.test/"})
	if !msg.IsError || !strings.Contains(text, "rebind.test resolves to 127.0.0.1") {
		t.Errorf("second fetch, private answer: %s", text)
	}
	text, msg = h.fetch(map[string]any{"url": "http://attacker.test/bounce"})
	if !msg.IsError || !strings.Contains(text, "a redirect from http://attacker.test/bounce led here, and rebind2.test resolves to 127.0.0.1") {
		t.Errorf("redirect to a name that resolves inside: %s", text)
	}
	for _, a := range dialer.addrs() {
		if strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("dialed %s", a)
		}
	}
	if private.hits.Load() != 0 {
		t.Errorf("the private server got %d requests", private.hits.Load())
	}
}

// TestSSRFAllowHosts shows the allowlist: an allowed private host is
// reached, by name or host:port, and a redirect from it to a host not
// allowed is refused like any other.
func TestSSRFAllowHosts(t *testing.T) {
	t.Parallel()
	other := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") }))
	docs := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "internal docs")
	}))
	res := newResolver(map[string][][]string{"docs.internal": {{"127.0.0.1"}}})
	h := newHarness(t, setup{
		fetch: map[string]any{"allowHosts": []string{"docs.internal", docs.hostPort()}},
		opts:  web.Options{Resolver: res, Dial: (&fakeDialer{}).Dial},
	})
	for _, u := range []string{docs.URL + "/", "http://docs.internal:" + docs.port() + "/", "http://DOCS.INTERNAL.:" + docs.port() + "/"} {
		text, msg := h.fetch(map[string]any{"url": u})
		if msg.IsError || !strings.Contains(text, "internal docs") {
			t.Errorf("%s: %s", u, text)
		}
	}
	text, msg := h.fetch(map[string]any{"url": docs.URL + "/moved"})
	if !msg.IsError || !strings.Contains(text, "refused") || !strings.Contains(text, "a redirect from "+docs.URL+"/moved led here") {
		t.Errorf("redirect to a host not allowed: %s", text)
	}
	if other.hits.Load() != 0 {
		t.Errorf("the host not allowed got %d requests", other.hits.Load())
	}
}
