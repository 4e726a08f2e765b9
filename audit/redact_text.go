package audit

import (
	"iter"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// A rule finds secrets in text: re matches where one is, and its group
// named "s" is the secret to replace (the whole match when it has none);
// the rest of the match (an option's name, a header's name, a URL's user)
// stays. Every rule is a row of the table in docs/security.md.
//
// A rule reads one line at a time: a secret, and what names it, never
// span a line, so the line after "password=" or "--token" is never taken
// for the secret.
type rule struct {
	name string
	re   func() *regexp.Regexp // compiled at its first use (lazyRegexp)
	// keep, when set, says whether a match is not a secret after all (the
	// name before "=" is not a secret's name).
	keep func(m []string, names []string) bool
	// find, when set, finds the rule's secrets in a whole text, for a rule
	// that follows lines (a private key block); re then matches where one
	// starts.
	find func(s string) []edit
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
// rules before it already replaced. Each expression is compiled when a text
// first holds what its rule needs, not at start: a command that redacts
// nothing does not pay for them (issue 12), and a call whose record holds
// no ":" or "=" pays for none (compiling all 22 was 1.9% of the CPU of a
// `toolbelt call memory_search` process, issue 36).
//
// An option or header takes its value on its own line only, and "NAME= X"
// (a space after "=" but none before) is an empty assignment followed by a
// program, as the shell reads it, so X is not taken; "name = value" (a
// configuration line) is.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		{name: "private key block", re: keyBegin, find: keyBlockEdits, need: [][]string{{"-----BEGIN"}}},
		// Before the header rules: "https://x-access-token:T@github.com/o/r"
		// is a URL's user and password, not an X-Access-Token header whose
		// value would run to the end of the URL.
		{name: "URL user:password", re: lazyRegexp(`\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@'"]+:(?P<s>[^/\s@'"&;|<>()\x60]+)@`), need: [][]string{{"://"}, {"@"}}},
		{name: "authorization header", re: lazyRegexp(`(?i)\b(?:proxy-)?authorization(?:\s*:\s*|=|\s+=\s*)(?:(?:bearer|basic|token|digest|bot|apikey)\s+)?(?P<s>[^\s'",;|&<>()\x60]+)`), need: [][]string{{"authorization"}}, fold: true},
		{name: "API key and token headers", re: lazyRegexp(`(?i)\b(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|anthropic-api-key|x-vault-token)\s*:\s*(?P<s>[^\s'"&;|<>()\x60]+)`), need: [][]string{{":"}, {"api-key", "-token"}}, fold: true},
		// A cookie header's value is name=value pairs separated by "; ".
		{name: "cookie header", re: lazyRegexp(`(?i)\b(?:set-)?cookie\s*:\s*(?P<s>[^\s'"&;|<>()\x60]+(?:;\s*[A-Za-z0-9_.\-]+=[^\s'"&;|<>()\x60]*)*)`), need: [][]string{{"cookie"}, {":"}}, fold: true},
		{name: "bearer token", re: lazyRegexp(`(?i)\bbearer\s+(?P<s>[a-z0-9\-._~+/]{8,}=*)`), need: [][]string{{"bearer"}}, fold: true},
		{name: "secret query parameter", re: lazyRegexp(`(?i)[?&;](?:[a-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|signature|sig|auth|credential|session)[a-z0-9_\-]*)=(?P<s>[^&#\s'";|<>()\x60]+)`), need: [][]string{{"="}, {"?", "&", ";"}}, fold: true},
		{name: "password and token options", re: lazyRegexp(`(?i)(?:^|\s)--?(?:[a-z0-9]+[-_])*(?:password|passwd|pass|passphrase|token|secret|api-?key|access-?key|secret-?key|auth|credentials?|private-?key)(?:=|\s+)(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60]+)`), need: [][]string{{"-"}}, fold: true},
		// The program-specific rules look back only as far as the program's
		// own words: not past an operator, nor into a substitution.
		{name: "mysql -pPASSWORD", re: lazyRegexp(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b[^;|&()\x60\n]*?\s-p(?P<s>[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*|'[^']*'|"[^"]*")`), need: [][]string{{"mysql", "mariadb"}, {"-p"}}},
		{name: "mysql -p PASSWORD, sshpass -p PASSWORD", re: lazyRegexp(`\b(?:mysql|mysqldump|mysqladmin|mariadb|sshpass)\b[^;|&()\x60\n]*?\s-p\s+(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*)`), need: [][]string{{"mysql", "mariadb", "sshpass"}, {"-p"}}},
		{name: "curl -u USER:PASSWORD", re: lazyRegexp(`\bcurl\b[^;|&()\x60\n]*?\s(?:-u\s*|-U\s*|--user(?:\s+|=)|--proxy-user(?:\s+|=))['"]?[^\s:'"&;|<>()\x60]*:(?P<s>[^\s'"&;|<>()\x60]+)`), need: [][]string{{"curl"}, {":"}}},
		{name: "redis-cli -a PASSWORD", re: lazyRegexp(`\bredis-cli\b[^;|&()\x60\n]*?\s-a\s+(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*)`), need: [][]string{{"redis-cli"}, {"-a"}}},
		{name: "registry login -p PASSWORD", re: lazyRegexp(`\b(?:docker|podman|buildah|skopeo|nerdctl|helm)\b[^;|&()\x60\n]*?\slogin\b[^;|&()\x60\n]*?\s-p(?:\s+|=)?(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60-][^\s'"&;|<>()\x60]*)`), need: [][]string{{"login"}, {"-p"}}},
		{name: "secret assignment (PGPASSWORD=, API_TOKEN=, password=)", re: lazyRegexp(`(?:^|[\s;&|('"{,])(?:export\s+)?(?P<n>[A-Za-z_][A-Za-z0-9_.\-]*)(?:=|\s+=\s*)(?P<s>'[^']*'|"[^"]*"|[^\s'"&;|<>()\x60]+)`), need: [][]string{{"="}},
			keep: func(m []string, names []string) bool { return !secretKey(m[index(names, "n")]) }},
		{name: "AWS access key id", re: lazyRegexp(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), need: [][]string{{"AKIA", "ASIA", "ABIA", "ACCA"}}},
		{name: "GitHub token", re: lazyRegexp(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`), need: [][]string{{"gh", "github_pat_"}, {"_"}}},
		{name: "Slack token", re: lazyRegexp(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), need: [][]string{{"xox"}}},
		{name: "Slack webhook", re: lazyRegexp(`hooks\.slack\.com/services/(?P<s>[A-Za-z0-9/]+)`), need: [][]string{{"hooks.slack.com/services/"}}},
		{name: "OpenAI / Anthropic key", re: lazyRegexp(`\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), need: [][]string{{"sk-"}}},
		{name: "Stripe key", re: lazyRegexp(`\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}`), need: [][]string{{"k_live_", "k_test_"}}},
		{name: "Google API key", re: lazyRegexp(`\bAIza[0-9A-Za-z_\-]{35}`), need: [][]string{{"AIza"}}},
		{name: "JWT", re: lazyRegexp(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`), need: [][]string{{"eyJ"}, {"."}}},
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
//
// A replacement never covers a line break, a shell operator (; & | < > ( )
// and the backquote) or a quote: a secret with one inside is replaced on
// each side of it ("Cookie: a=1; b=2" becomes "Cookie: [redacted];
// [redacted]"). A command under a command key of Redact is redacted more
// carefully still (see Redact).
func RedactText(s string) string {
	return redact(s, applyEdits)
}

// redact applies the rules to s in order, each to the text the rules
// before it left: accept makes those of a rule's edits it accepts and
// returns the text they give.
func redact(s string, accept func(s string, es []edit) string) string {
	ascii, lower := isASCII(s), ""
	if ascii {
		lower = strings.ToLower(s)
	}
	for _, r := range rules() {
		if !r.mayMatch(s, lower, ascii) {
			continue
		}
		es := r.edits(s, lower, ascii)
		if len(es) == 0 {
			continue
		}
		if t := accept(s, es); t != s {
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

// An edit replaces s[start:end] by Redacted.
type edit struct{ start, end int }

// applyEdits makes es (in order, not overlapping) in s.
func applyEdits(s string, es []edit) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, e := range es {
		b.WriteString(s[last:e.start])
		b.WriteString(Redacted)
		last = e.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// edits returns the replacements r makes in s, in order, looking at one
// line at a time.
func (r rule) edits(s, lower string, ascii bool) []edit {
	if r.find != nil {
		return r.find(s)
	}
	var out []edit
	for start, line := range lines(s) {
		lowerLine := ""
		if ascii {
			lowerLine = lower[start : start+len(line)]
		}
		if r.mayMatch(line, lowerLine, ascii) {
			out = r.lineEdits(out, line, start)
		}
	}
	return out
}

// lines yields each line of s, without its "\n", and the offset in s it
// starts at. An empty s has no line, and a final "\n" ends the last line
// rather than starting another.
func lines(s string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for start := 0; start < len(s); {
			end := strings.IndexByte(s[start:], '\n')
			if end < 0 {
				end = len(s)
			} else {
				end += start
			}
			if !yield(start, s[start:end]) {
				return
			}
			start = end + 1
		}
	}
}

// lineEdits appends the replacements r makes in line, which starts at
// offset in its text.
func (r rule) lineEdits(out []edit, line string, offset int) []edit {
	re := r.re()
	names := re.SubexpNames()
	si := index(names, "s")
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(line, -1) {
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
					sub[i] = line[m[2*i]:m[2*i+1]]
				}
			}
			if r.keep(sub, names) {
				continue
			}
		}
		secret := line[start:end]
		// A value that holds a secret an earlier rule replaced is that
		// secret's surroundings ("x-access-token:[redacted]@github.com/o/r"
		// after the URL rule): replacing it would hide the rest.
		if strings.Contains(secret, Redacted) || secret == "" || isCode(secret) {
			continue
		}
		out = appendSecret(out, line, start, end, offset)
		last = end
	}
	return out
}

// isCode says whether a would-be secret is shell code or a reference to
// one rather than a literal: a command or process substitution, a variable.
// It is kept, since hiding it would hide what the command runs.
func isCode(v string) bool {
	v = strings.Trim(v, `"`)
	return strings.ContainsAny(v, "`") || strings.Contains(v, "$(") || strings.Contains(v, "${") || strings.Contains(v, "<(") ||
		strings.Contains(v, ">(") || strings.HasPrefix(v, "$")
}

// kept are the characters a replacement never covers: line breaks, the
// shell's operators and its quotes, so that a redacted command still has
// the lines, operators and quoting it had ("'abc 123'" becomes
// "'[redacted]'").
const kept = "\n;&|<>()`'\""

// appendSecret appends the edits that replace the secret s[start:end]: one
// for each run of it between kept characters, without the blanks at a
// run's ends or a backslash that escapes the character after the run.
func appendSecret(out []edit, s string, start, end, offset int) []edit {
	for i := start; i < end; {
		if strings.IndexByte(kept, s[i]) >= 0 || s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < end && strings.IndexByte(kept, s[j]) < 0 {
			j++
		}
		k := j
		for k > i && (s[k-1] == ' ' || s[k-1] == '\t') {
			k--
		}
		if n := trailingBackslashes(s[i:k]); n%2 == 1 {
			k--
		}
		if k > i {
			out = append(out, edit{offset + i, offset + k})
		}
		i = j
	}
	return out
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// keyBegin and keyEnd are a private key block's first and last lines
// (PEM, OpenSSH, PGP).
var (
	keyBegin = lazyRegexp(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	keyEnd   = lazyRegexp(`-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	// keyHeader is a header line inside a block ("Proc-Type: 4,ENCRYPTED").
	keyHeader = lazyRegexp(`^[A-Za-z][A-Za-z0-9-]*:[ \t]`)
)

// lazyRegexp returns expr compiled at the first call, once.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// keyBlockEdits replaces the body of each private key block in s, line by
// line: the runs of base64 after the BEGIN line's dashes (a key written on
// one line, its lines joined by spaces or "\n"), up to the first
// character a key cannot hold, and, when the line holds nothing else, each
// following line that is one run of base64, up to the END line. Header lines and empty
// lines stay; any other line ends the block, so a block without an END
// line takes only the key lines that follow it, never a command.
func keyBlockEdits(s string) []edit {
	var out []edit
	in := false
	for start, line := range lines(s) {
		if in {
			body := line
			if loc := keyEnd().FindStringIndex(line); loc != nil {
				body, in = line[:loc[0]], false
			}
			words, n := keyWords(body)
			switch ok := n == len(body); {
			case ok && (len(words) <= 1 || !in):
				out = appendWords(out, words, start)
			case in && keyHeader().MatchString(line):
			default:
				in = false
			}
		}
		if loc := keyBegin().FindStringIndex(line); !in && loc != nil {
			rest := line[loc[1]:]
			closed := false
			if e := keyEnd().FindStringIndex(rest); e != nil {
				rest, closed = rest[:e[0]], true
			}
			words, n := keyWords(rest)
			out = appendWords(out, words, start+loc[1])
			in = !closed && n == len(rest)
		}
	}
	return out
}

// keyWords returns the runs of base64 at the start of a key's body, runs
// separated by blanks or by a written "\n", and where they end: at the
// first character a body cannot hold, or len(body).
func keyWords(body string) (words []edit, end int) {
	for i := 0; i < len(body); {
		switch c := body[i]; {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(body) && body[i+1] == 'n':
			i += 2
		case isBase64(c):
			j := i
			for j < len(body) && isBase64(body[j]) {
				j++
			}
			words = append(words, edit{i, j})
			i = j
		default:
			return words, i
		}
	}
	return words, len(body)
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

func appendWords(out, words []edit, offset int) []edit {
	for _, w := range words {
		out = append(out, edit{offset + w.start, offset + w.end})
	}
	return out
}
