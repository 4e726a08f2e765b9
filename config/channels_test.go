package config_test

import (
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/config"
)

// Slack, Discord and Telegram channels need their secrets' variables
// named; an apiUrl must be an http(s) URL.
func TestChatChannelNeeds(t *testing.T) {
	t.Parallel()
	_, err := config.Parse("toolbelt.yaml", []byte(`channels:
  team:
    type: slack
    tokenEnv: SLACK_BOT_TOKEN
    apiUrl: slack.example.com/api
  dc:
    type: discord
  tg:
    type: telegram
    tokenEnv: TELEGRAM_BOT_TOKEN
    apiUrl: http://127.0.0.1:8081
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"channels.team (type slack) has no signingSecretEnv",
		`channels.team.apiUrl is "slack.example.com/api": give an http(s) URL`,
		"channels.dc (type discord) has no tokenEnv",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "channels.tg") {
		t.Errorf("the telegram channel is complete, yet:\n%v", err)
	}
}
