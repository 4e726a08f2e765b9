package audit

import (
	"unicode/utf8"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/toolbelt/toolbelt/content"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// MaxValueBytes is the longest string value kept as is; a longer one is
// replaced by {"bytes": N, "sha256": "…"}.
const MaxValueBytes = 1024

// Redact returns args (a JSON value, usually an object) with secrets replaced
// by "[redacted]" and string values longer than their limit by their size
// and SHA-256, as canonical JSON (object keys sorted). Text that is not JSON
// is treated as one string value. Empty args stay empty.
//
// A value is secret when its key looks like one (password, token, api_key,
// authorization, cookie, credential, private, secret, key, …): a string or
// number is replaced, an object or array is redacted inside, null and
// booleans are kept. Inside every string, only the secret itself is
// replaced and the rest stays readable (see RedactText), so a command or
// URL that carries a secret is still recorded.
//
// Long values: a command-like value (under a key such as command, cmd,
// script, code, url, query) is kept up to MaxCommandBytes, and beyond that
// its first and last MaxCommandBytes/2 bytes are kept with its size and
// hash; any other string longer than MaxValueBytes is replaced by its size
// and hash.
func Redact(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		v = string(args)
	}
	return canonical(redactValue(v, true))
}

// MaxCommandBytes is the longest command-like value kept whole: 128 KiB,
// the longest single argument Linux passes to a program (MAX_ARG_STRLEN),
// so a command exec ran (as bash -c COMMAND) is always kept whole — text
// in the middle of a padded command cannot fall out of the record.
const MaxCommandBytes = 128 << 10

// commandKeys are the keys whose values are commands, code or addresses:
// they are what the audit is for, so they are never cut to a hash. data
// and stdin are what a call types into a running program (process write
// to a shell in the background): commands too.
var commandKeys = map[string]bool{
	"command": true, "cmd": true, "commands": true, "script": true, "code": true, "args": true, "argv": true,
	"program": true, "url": true, "urls": true, "query": true, "sql": true, "expression": true, "shell": true,
	"data": true, "stdin": true,
}

// canonical encodes v as compact JSON with sorted keys, HTML left alone.
func canonical(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Values decoded from JSON always encode.
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func redactValue(v any, command bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if secretKey(k) {
				x[k] = redactAll(val)
				continue
			}
			x[k] = redactValue(val, commandKeys[strings.ToLower(k)])
		}
	case []any:
		for i := range x {
			x[i] = redactValue(x[i], command)
		}
	case string:
		x = RedactText(x)
		switch {
		case command && len(x) > MaxCommandBytes:
			sum := sha256.Sum256([]byte(x))
			head, tail := content.HeadBytes(x, MaxCommandBytes/2), tailBytes(x, MaxCommandBytes/2)
			return map[string]any{"bytes": len(x), "sha256": hex.EncodeToString(sum[:]), "head": head, "tail": tail}
		case !command && len(x) > MaxValueBytes:
			sum := sha256.Sum256([]byte(x))
			return map[string]any{"bytes": len(x), "sha256": hex.EncodeToString(sum[:])}
		}
		return x
	}
	return v
}

// redactAll redacts a value under a secret key: every string and number in
// it, however deep; the shape (keys, lengths of arrays), nulls and booleans
// stay.
func redactAll(v any) any {
	switch x := v.(type) {
	case nil, bool:
		return v
	case map[string]any:
		for k, val := range x {
			x[k] = redactAll(val)
		}
		return x
	case []any:
		for i := range x {
			x[i] = redactAll(x[i])
		}
		return x
	}
	return Redacted
}

// tailBytes returns the last n bytes of s or fewer, starting on a
// character boundary.
func tailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// secretWords are words that make a key secret wherever they appear in it
// (as a word or a word's end: "clientSecret", "accesstoken").
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "secrets", "token",
	"credential", "credentials", "cookie", "cookies", "authorization",
	"apikey", "privatekey", "secretkey", "accesskey",
}

// secretKey says whether a key names a secret. It splits the key into
// words ("X-Api-Key", "apiKey", "AWS_SECRET_ACCESS_KEY") and looks for a
// secret word; "key" is one as the last word ("ssh_key", not "key_id"),
// unless the word before says otherwise ("public_key", "sessionKey").
func secretKey(k string) bool {
	ws := words(k)
	for i, w := range ws {
		switch w {
		case "pwd", "pass", "auth", "private":
			return true
		case "key":
			if i == len(ws)-1 && (i == 0 || !notSecretKey[ws[i-1]]) {
				return true
			}
			continue
		}
		for _, s := range secretWords {
			if strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	return false
}

// notSecretKey are words before "key" that make it a name, not a secret.
var notSecretKey = map[string]bool{
	"public": true, "session": true, "sort": true, "primary": true, "foreign": true,
	"partition": true, "cache": true, "idempotency": true, "hot": true, "lookup": true,
	"group": true, "object": true, "routing": true, "dedupe": true, "map": true,
}

// words splits a key into lower-case words at non-letters-or-digits and at
// camelCase boundaries ("XMLHttpToken" → xml, http, token).
func words(k string) []string {
	var out []string
	rs := []rune(k)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, strings.ToLower(string(rs[start:end])))
			start = -1
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return out
}

// A rule finds secrets in text: re matches where one is, and its group
// named "s" is the secret to replace (the whole match when it has none);
// the rest of the match (an option's name, a header's name, a URL's user)
// stays. Every rule is a row of the table in docs/security.md.
type rule struct {
	name string
	re   *regexp.Regexp
	// keep, when set, says whether a match is not a secret after all (the
	// name before "=" is not a secret's name).
	keep func(m []string, names []string) bool
	// need says what an ASCII text must hold for re to match in it: every
	// group of words, one word of each (in lower case when fold is set,
	// for the rules that ignore case). It is checked first, with
	// strings.Contains, and spares most texts the expression: a rule
	// matches seldom, and running all of them cost a short command
	// ~100 µs. TestRuleNeedsAreNecessary holds them to their expressions.
	need [][]string
	fold bool
}

// mayMatch says whether r's expression may match in s; lower is s in lower
// case, for ASCII s only (where case folding is plain ASCII).
func (r rule) mayMatch(s, lower string, ascii bool) bool {
	if !ascii || r.need == nil {
		return true
	}
	in := s
	if r.fold {
		in = lower
	}
	for _, group := range r.need {
		found := false
		for _, w := range group {
			if strings.Contains(in, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// rules are applied in order; each sees the text with the secrets of the
// rules before it already replaced. They are compiled on first use, not at
// start: a command that redacts nothing does not pay for them (issue 12).
var rules = sync.OnceValue(func() []rule {
	return []rule{
		// The body of a key block is base64 with headers ("Proc-Type: 4,ENCRYPTED"):
		// it ends at the END line, or at the first character a body cannot
		// hold, so an unterminated block cannot hide the command after it.
		{name: "private key block", re: regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----(?P<s>[A-Za-z0-9+/=\s:,.\-]*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|[^A-Za-z0-9+/=\s:,.\-]|\z)`), need: [][]string{{"-----BEGIN"}}},
		// Before the header rules: "https://x-access-token:T@github.com/o/r"
		// is a URL's user and password, not an X-Access-Token header whose
		// value would run to the end of the URL.
		{name: "URL user:password", re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@'"]+:(?P<s>[^/\s@'"&;|<>()\x60]+)@`), need: [][]string{{"://"}, {"@"}}},
		{name: "authorization header", re: regexp.MustCompile(`(?i)\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest|bot|apikey)\s+)?(?P<s>[^\s'",;|&<>()\x60]+)`), need: [][]string{{"authorization"}}, fold: true},
		{name: "API key and token headers", re: regexp.MustCompile(`(?i)\b(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|anthropic-api-key|x-vault-token)\s*:\s*(?P<s>[^\s'"&;|<>()\x60]+)`), need: [][]string{{":"}, {"api-key", "-token"}}, fold: true},
		// A cookie header's value is name=value pairs separated by "; ".
		{name: "cookie header", re: regexp.MustCompile(`(?i)\b(?:set-)?cookie\s*:\s*(?P<s>[^\s'"&;|<>()\x60]+(?:;\s*[A-Za-z0-9_.\-]+=[^\s'"&;|<>()\x60]*)*)`), need: [][]string{{"cookie"}, {":"}}, fold: true},
		{name: "bearer token", re: regexp.MustCompile(`(?i)\bbearer\s+(?P<s>[a-z0-9\-._~+/]{8,}=*)`), need: [][]string{{"bearer"}}, fold: true},
		{name: "secret query parameter", re: regexp.MustCompile(`(?i)[?&;](?:[a-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|signature|sig|auth|credential|session)[a-z0-9_\-]*)=(?P<s>[^&#\s'";|<>()\x60]+)`), need: [][]string{{"="}, {"?", "&", ";"}}, fold: true},
		{name: "password and token options", re: regexp.MustCompile(`(?i)(?:^|\s)--?(?:[a-z0-9]+[-_])*(?:password|passwd|pass|passphrase|token|secret|api-?key|access-?key|secret-?key|auth|credentials?|private-?key)(?:=|\s+)(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60]+)`), need: [][]string{{"-"}}, fold: true},
		{name: "mysql -pPASSWORD", re: regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b[^;|&\n]*?\s-p(?P<s>[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*|'[^']*'|"[^"]*")`), need: [][]string{{"mysql", "mariadb"}, {"-p"}}},
		{name: "mysql -p PASSWORD, sshpass -p PASSWORD", re: regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb|sshpass)\b[^;|&\n]*?\s-p\s+(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*)`), need: [][]string{{"mysql", "mariadb", "sshpass"}, {"-p"}}},
		{name: "curl -u USER:PASSWORD", re: regexp.MustCompile(`\bcurl\b[^;|&\n]*?\s(?:-u\s*|-U\s*|--user(?:\s+|=)|--proxy-user(?:\s+|=))['"]?[^\s:'"&;|<>()\x60]*:(?P<s>[^\s'"&;|<>()\x60]+)`), need: [][]string{{"curl"}, {":"}}},
		{name: "redis-cli -a PASSWORD", re: regexp.MustCompile(`\bredis-cli\b[^;|&\n]*?\s-a\s+(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*)`), need: [][]string{{"redis-cli"}, {"-a"}}},
		{name: "registry login -p PASSWORD", re: regexp.MustCompile(`\b(?:docker|podman|buildah|skopeo|nerdctl|helm)\b[^;|&\n]*?\slogin\b[^;|&\n]*?\s-p(?:\s+|=)?(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*)`), need: [][]string{{"login"}, {"-p"}}},
		{name: "secret assignment (PGPASSWORD=, API_TOKEN=, password=)", re: regexp.MustCompile(`(?:^|[\s;&|('"{,])(?:export\s+)?(?P<n>[A-Za-z_][A-Za-z0-9_.\-]*)\s*=\s*(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60]+)`), need: [][]string{{"="}},
			keep: func(m []string, names []string) bool { return !secretKey(m[index(names, "n")]) }},
		{name: "AWS access key id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), need: [][]string{{"AKIA", "ASIA", "ABIA", "ACCA"}}},
		{name: "GitHub token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`), need: [][]string{{"gh", "github_pat_"}, {"_"}}},
		{name: "Slack token", re: regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), need: [][]string{{"xox"}}},
		{name: "Slack webhook", re: regexp.MustCompile(`hooks\.slack\.com/services/(?P<s>[A-Za-z0-9/]+)`), need: [][]string{{"hooks.slack.com/services/"}}},
		{name: "OpenAI / Anthropic key", re: regexp.MustCompile(`\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), need: [][]string{{"sk-"}}},
		{name: "Stripe key", re: regexp.MustCompile(`\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}`), need: [][]string{{"k_live_", "k_test_"}}},
		{name: "Google API key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), need: [][]string{{"AIza"}}},
		{name: "JWT", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`), need: [][]string{{"eyJ"}, {"."}}},
	}
})

func index(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// RedactText replaces each secret in s by "[redacted]" and keeps the rest:
// "curl -H 'Authorization: Bearer T' https://x" becomes
// "curl -H 'Authorization: Bearer [redacted]' https://x".
func RedactText(s string) string {
	ascii, lower := isASCII(s), ""
	if ascii {
		lower = strings.ToLower(s)
	}
	for _, r := range rules() {
		if !r.mayMatch(s, lower, ascii) {
			continue
		}
		if t := r.apply(s); t != s {
			s = t
			if ascii {
				lower = strings.ToLower(s)
			}
		}
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isCode says whether a would-be secret is shell code or a reference to
// one rather than a literal: a command or process substitution, a variable.
// It is kept, since hiding it would hide what the command runs.
func isCode(v string) bool {
	v = strings.Trim(v, `"`)
	return strings.ContainsAny(v, "`") || strings.Contains(v, "$(") || strings.Contains(v, "${") || strings.Contains(v, "<(") ||
		strings.Contains(v, ">(") || strings.HasPrefix(v, "$")
}

func (r rule) apply(s string) string {
	names := r.re.SubexpNames()
	si := index(names, "s")
	ms := r.re.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		start, end := m[0], m[1]
		if si >= 0 {
			start, end = m[2*si], m[2*si+1]
		}
		if start < 0 || start < last {
			continue
		}
		if r.keep != nil {
			sub := make([]string, len(names))
			for i := range names {
				if m[2*i] >= 0 {
					sub[i] = s[m[2*i]:m[2*i+1]]
				}
			}
			if r.keep(sub, names) {
				continue
			}
		}
		secret := s[start:end]
		// A value that holds a secret an earlier rule replaced is that
		// secret's surroundings ("x-access-token:[redacted]@github.com/o/r"
		// after the URL rule): replacing it would hide the rest.
		if strings.Contains(secret, Redacted) || secret == "" || isCode(secret) {
			continue
		}
		b.WriteString(s[last:start])
		// A quoted secret keeps its quotes, so the command still parses.
		if len(secret) >= 2 && (secret[0] == '\'' || secret[0] == '"') && secret[len(secret)-1] == secret[0] {
			b.WriteString(secret[:1] + Redacted + secret[:1])
		} else {
			b.WriteString(Redacted)
		}
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}
