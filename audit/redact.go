package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
)

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// MaxValueBytes is the longest string value kept as is; a longer one is
// replaced by {"bytes": N, "sha256": "…"}.
const MaxValueBytes = 1024

// Redact returns args (a JSON value, usually an object) with secrets replaced
// by "[redacted]" and string values longer than MaxValueBytes by their size
// and SHA-256, as canonical JSON (object keys sorted). A value is secret when
// its key looks like one (password, token, api_key, authorization, cookie,
// credential, private, secret, key, …; null and booleans are kept) or when
// its content does (a PEM private key, "Bearer …", "Authorization: …", a URL
// with a password, AWS, GitHub, Slack, OpenAI, Anthropic, Stripe and Google
// keys, JWTs). Text that is not JSON is treated as one string value. Empty
// args stay empty.
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
	return canonical(redactValue(v))
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

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if secretKey(k) && val != nil {
				if _, isBool := val.(bool); !isBool {
					x[k] = Redacted
					continue
				}
			}
			x[k] = redactValue(val)
		}
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
	case string:
		if secretContent.MatchString(x) {
			return Redacted
		}
		if len(x) > MaxValueBytes {
			sum := sha256.Sum256([]byte(x))
			return map[string]any{"bytes": len(x), "sha256": hex.EncodeToString(sum[:])}
		}
	}
	return v
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
		case "pwd", "auth", "private":
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

// secretContent matches text that holds a secret, whatever its key.
var secretContent = regexp.MustCompile("(?:" + strings.Join([]string{
	`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`,                  // PEM, OpenSSH, PGP
	`(?i)\bbearer\s+[a-z0-9\-._~+/]{8,}=*`,                            // Authorization: Bearer …
	`(?i)\bauthorization\s*[:=]\s*\S`,                                 // a header line
	`\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@`,                // scheme://user:password@
	`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`,                         // AWS access key id
	`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`,   // GitHub
	`\bxox[abposr]-[A-Za-z0-9-]{10,}`,                                 // Slack token
	`hooks\.slack\.com/services/[A-Za-z0-9/]+`,                        // Slack webhook
	`\bsk-(?:proj-|ant-|svcacct-)?[A-Za-z0-9_\-]{20,}`,                // OpenAI, Anthropic
	`\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}`,                          // Stripe
	`\bAIza[0-9A-Za-z_\-]{35}`,                                        // Google API key
	`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`, // JWT
}, ")|(?:") + ")")
