package config_test

import (
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/config"
)

// An email channel that receives by IMAP needs the login; the poll
// interval must not be negative.
func TestEmailIMAPChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"channels:\n  mail:\n    type: email\n    server: smtp.example.com:587\n    from: bot@example.com\n    imapServer: imap.example.com:993\n",
			"channels.mail.imapServer needs username and passwordEnv to log in to the mailbox"},
		{"channels:\n  mail:\n    type: email\n    server: smtp.example.com:587\n    from: bot@example.com\n    username: bot\n    passwordEnv: P\n    imapServer: imap.example.com:993\n    imapPollSeconds: -1\n",
			"channels.mail.imapPollSeconds is -1: it must not be negative"},
		{"channels:\n  mail:\n    type: email\n    server: smtp.example.com:587\n    from: bot@example.com\n    username: bot\n    passwordEnv: P\n    imapServer: imap.example.com:993\n    imapTls: true\n", ""},
	} {
		_, err := config.Parse("toolbelt.yaml", []byte(tc.yaml))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.yaml, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
