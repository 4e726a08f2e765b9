package audit

import (
	"strings"
	"testing"
)

// needCorpus holds texts each rule matches, near misses, and plain text.
var needCorpus = []string{
	"file.txt", "", "go test ./invoke -run TestSomething -count 1 2>&1 | tail -20 && git status --short",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "x -----BEGIN PGP PRIVATE KEY BLOCK-----abc",
	`curl -H 'Authorization: Bearer abcdef123456' https://api.example.com`, `AUTHORIZATION=xyz`, `Proxy-Authorization: Basic dXNlcjpwYXNz`,
	`curl -H 'X-Api-Key: 12345abcde' https://x`, `X-ACCESS-TOKEN: abc`, `private-token:abc`, `Anthropic-Api-Key : k`,
	`curl -H "Cookie: sid=abc; theme=dark" https://x`, `SET-COOKIE: a=b`, `token is BEARER abc.def-ghi_123`,
	`psql postgres://app:s3cret@db:5432/app -c 'select 1'`, `https://x-access-token:T@github.com/o/r`,
	`curl 'https://api.x.com/v1/items?API_KEY=abc123&page=2'`, `https://x.com/cb?state=1&access_token=ya29.abc&x=y`, `a;Session=1`,
	`pg_dump --password=hunter2 --host db`, `tool --PASSWORD hunter2 run`, `gh auth login --token abc123`, `llm --api-key "abc 123" ask`, `-Secret-Key=x`,
	`mysql -u root -phunter2 shop -e 'show tables'`, `mysqldump -u root -p hunter2 shop > dump.sql`, `mariadb -pX`, `sshpass -p hunter2 ssh host`,
	`curl -u admin:s3cret https://h/api && ls`, `curl --user=a:b x`, `curl --proxy-user a:b x`, `redis-cli -h r -a hunter2 ping`,
	`docker login -u me -p hunter2 registry`, `helm registry login x --password-stdin -p=abc`,
	`PGPASSWORD=hunter2 psql`, `export API_TOKEN="abc"`, `{password = 'x'}`, `a=b c=d`, `name=value`,
	"AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE", "ghp_" + strings.Repeat("a", 36), "github_pat_" + strings.Repeat("B", 22),
	"xoxb-1234567890-abc", "https://hooks.slack.com/services/T000/B000/XXXX", "sk-proj-" + strings.Repeat("z", 24), "sk-ant-" + strings.Repeat("q", 30),
	"rk_live_" + strings.Repeat("9", 16), "pk_test_" + strings.Repeat("x", 20), "AIza" + strings.Repeat("Q", 35),
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
	"Authorization: ſecret", "coo\u212Aie: a=b", "ΑΚΙΑ", "bearer éééééééééé", "x=é", "--passwörd=x",
}

// TestRuleNeedsAreNecessary: where a rule's expression matches an ASCII
// text, the words its need names are in it — the check before a rule can
// only skip what the expression would not have matched.
func TestRuleNeedsAreNecessary(t *testing.T) {
	for _, s := range needCorpus {
		checkNeeds(t, s)
	}
}

func checkNeeds(t *testing.T, s string) {
	t.Helper()
	ascii := isASCII(s)
	for _, r := range rules() {
		if r.re().MatchString(s) && !r.mayMatch(s, strings.ToLower(s), ascii) {
			t.Errorf("rule %q matches %q, which its need %v says it cannot", r.name, s, r.need)
		}
	}
	if got, want := RedactText(s), redactEveryRule(s); got != want {
		t.Errorf("RedactText(%q) = %q, every rule run gives %q", s, got, want)
	}
}

// redactEveryRule is RedactText without the needs.
func redactEveryRule(s string) string {
	for _, r := range rules() {
		s = applyEdits(s, r.edits(s, "", false))
	}
	return s
}

// TestRuleNeedsSkip: on plain text the needs spare the expressions (and
// none is left without one).
func TestRuleNeedsSkip(t *testing.T) {
	for _, r := range rules() {
		if r.need == nil {
			t.Errorf("rule %q has no need", r.name)
		}
	}
	for _, s := range []string{"file.txt", "src/main.go", "hello world"} {
		for _, r := range rules() {
			if r.mayMatch(s, strings.ToLower(s), true) {
				t.Errorf("rule %q would run on %q", r.name, s)
			}
		}
	}
}

func FuzzRuleNeeds(f *testing.F) {
	for _, s := range needCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkNeeds(t, s)
	})
}
