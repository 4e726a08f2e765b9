package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/content"
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
// URL that carries a secret is still recorded. A shell command (under a
// key such as command, cmd, script, or data: what is typed into a running
// shell) is redacted only where that leaves it the command that ran: the
// programs it starts, its operators and its lines all stay.
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
	return canonical(redactValue(v, true, false))
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

// shellKeys are the command keys whose values a shell runs, which are
// redacted as commands (see redactCommand).
var shellKeys = map[string]bool{
	"command": true, "cmd": true, "commands": true, "script": true, "shell": true, "data": true, "stdin": true,
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

// redactValue redacts v, found under a command key when command is set,
// under one whose value a shell runs when shell is.
func redactValue(v any, command, shell bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if secretKey(k) {
				x[k] = redactAll(val)
				continue
			}
			lk := strings.ToLower(k)
			x[k] = redactValue(val, commandKeys[lk], shellKeys[lk])
		}
	case []any:
		for i := range x {
			x[i] = redactValue(x[i], command, shell)
		}
	case string:
		if shell {
			x = redactCommand(x)
		} else {
			x = RedactText(x)
		}
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
