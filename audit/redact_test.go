package audit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
)

// Secrets that look real, built so the source does not hold them whole.
var (
	pemKey    = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
	rsaKey    = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
	pgpKey    = "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\nlQOYBF\n"
	awsKey    = "AKIA" + "IOSFODNN7EXAMPLE"
	ghToken   = "ghp_" + strings.Repeat("aB3", 12)
	ghPAT     = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
	slackTok  = "xoxb-" + "1234567890-abcdefghij"
	slackHook = "https://hooks.slack.com/services/" + "T000/B000/XXXXXXXX"
	openAIKey = "sk-" + "proj-" + strings.Repeat("Ab1", 10)
	antKey    = "sk-" + "ant-api03-" + strings.Repeat("xY9", 10)
	stripeKey = "sk_" + "live_" + strings.Repeat("4eC39HqLyjWDarjtT1zdp7dc", 1)
	googleKey = "AIza" + "SyA-1234567890abcdefghijklmnopqrstu"
	jwt       = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestRedact(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", audit.MaxValueBytes+1)
	for _, tc := range []struct {
		name, in, want string
	}{
		// Keys that look secret: the value goes, whatever its type.
		{"password", `{"password":"hunter2"}`, `{"password":"[redacted]"}`},
		{"passwd", `{"db_passwd":"x"}`, `{"db_passwd":"[redacted]"}`},
		{"pwd", `{"PWD":"x"}`, `{"PWD":"[redacted]"}`},
		{"passphrase", `{"passphrase":"x"}`, `{"passphrase":"[redacted]"}`},
		{"secret", `{"clientSecret":"x"}`, `{"clientSecret":"[redacted]"}`},
		{"token", `{"access_token":"x","refreshToken":"y","csrftoken":"z"}`, `{"access_token":"[redacted]","csrftoken":"[redacted]","refreshToken":"[redacted]"}`},
		{"api key forms", `{"api_key":"a","apiKey":"b","apikey":"c","X-Api-Key":"d","OPENAI_API_KEY":"e"}`,
			`{"OPENAI_API_KEY":"[redacted]","X-Api-Key":"[redacted]","apiKey":"[redacted]","api_key":"[redacted]","apikey":"[redacted]"}`},
		{"key", `{"key":"x","ssh_key":"y","AWS_SECRET_ACCESS_KEY":"z"}`, `{"AWS_SECRET_ACCESS_KEY":"[redacted]","key":"[redacted]","ssh_key":"[redacted]"}`},
		{"authorization", `{"headers":{"Authorization":"Basic dXNlcjpwYXNz","Accept":"text/html"}}`, `{"headers":{"Accept":"text/html","Authorization":"[redacted]"}}`},
		{"auth", `{"auth":{"user":"bob","pass":"x","on":true}}`, `{"auth":{"on":true,"pass":"[redacted]","user":"[redacted]"}}`},
		{"cookie", `{"Cookie":"sid=1","set-cookie":"a=b"}`, `{"Cookie":"[redacted]","set-cookie":"[redacted]"}`},
		{"credential", `{"credentials":["a","b"],"aws_credential":"x"}`, `{"aws_credential":"[redacted]","credentials":["[redacted]","[redacted]"]}`},
		{"private", `{"private_key":"x","privateKey":"y","private":"z"}`, `{"private":"[redacted]","privateKey":"[redacted]","private_key":"[redacted]"}`},
		{"numbers too", `{"pin_password":123456}`, `{"pin_password":"[redacted]"}`},
		{"nested in arrays", `{"env":[{"name":"A","token":"x"}]}`, `{"env":[{"name":"A","token":"[redacted]"}]}`},
		// Content that looks secret, under any key: the secret goes, the
		// rest stays (TestRedactText has a row per rule).
		{"pem", `{"content":` + q(pemKey) + `}`, `{"content":"-----BEGIN OPENSSH PRIVATE KEY-----\n[redacted]\n-----END OPENSSH PRIVATE KEY-----\n"}`},
		{"url password", `{"env":{"DATABASE_URL":"postgres://app:s3cret@db:5432/app"}}`, `{"env":{"DATABASE_URL":"postgres://app:[redacted]@db:5432/app"}}`},
		{"in an array", `["ls", ` + q(ghToken) + `]`, `["ls","[redacted]"]`},
		// Large values: size and hash.
		{"large", `{"content":"` + long + `"}`, `{"content":{"bytes":1025,"sha256":"` + sha(long) + `"}}`},
		{"exactly the limit", `{"content":"` + long[1:] + `"}`, `{"content":"` + long[1:] + `"}`},
		{"large command kept", `{"command":"` + long + `"}`, `{"command":"` + long + `"}`},
		// Kept as they are.
		{"plain", `{"path":"src/key.go","command":"ls -la","max_tokens":100,"keyword":"x","keys":["a"]}`,
			`{"command":"ls -la","keys":["a"],"keyword":"x","max_tokens":100,"path":"src/key.go"}`},
		{"names ending in key", `{"sessionKey":"agent:main","public_key":"ssh-ed25519 AAAAC3Nza","sort_key":"name","keyId":"k1"}`,
			`{"keyId":"k1","public_key":"ssh-ed25519 AAAAC3Nza","sessionKey":"agent:main","sort_key":"name"}`},
		{"prose", `{"content":"Set the password and the API token in basic configuration; use a Bearer token."}`,
			`{"content":"Set the password and the API token in basic configuration; use a Bearer token."}`},
		{"urls without password", `{"url":"https://user@example.com/a?b=c&d=<e>"}`, `{"url":"https://user@example.com/a?b=c&d=<e>"}`},
		{"hashes and ids", `{"sha":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","id":"550e8400-e29b-41d4-a716-446655440000"}`,
			`{"id":"550e8400-e29b-41d4-a716-446655440000","sha":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}`},
		{"flags and nulls under secret keys", `{"private":true,"token":null}`, `{"private":true,"token":null}`},
		{"author is not auth", `{"author":"Ada","tokens":5,"tokenizer":"cl100k"}`, `{"author":"Ada","tokenizer":"cl100k","tokens":5}`},
		{"big numbers", `{"n":12345678901234567890123,"f":1.50}`, `{"f":1.50,"n":12345678901234567890123}`},
		// Shapes.
		{"empty", ``, ``},
		{"spaces", "  \n", ``},
		{"not JSON", `{"path": "a"`, `"{\"path\": \"a\""`},
		{"not JSON, secret", `token=` + ghToken, `"token=[redacted]"`},
		{"trailing data", `{"a":1} {"b":2}`, `"{\"a\":1} {\"b\":2}"`},
		{"scalar", `"just text"`, `"just text"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := string(audit.Redact(json.RawMessage(tc.in))); got != tc.want {
				t.Errorf("Redact(%.80q)\n got %.300s\nwant %.300s", tc.in, got, tc.want)
			}
		})
	}
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
