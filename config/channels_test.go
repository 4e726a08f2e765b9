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

// Slack, Discord and Telegram owners, allow entries and route peers are
// user ids: a username, which can change hands, is refused with where to
// find the id; a plain number (as YAML reads it) and allow: ["*"] pass.
func TestChatChannelSendersAreIDs(t *testing.T) {
	t.Parallel()
	_, err := config.Parse("toolbelt.yaml", []byte(`agents:
  helper: {}
channels:
  team:
    type: slack
    tokenEnv: SLACK_BOT_TOKEN
    signingSecretEnv: SLACK_SIGNING_SECRET
    owners: [U0123ADA, ada]
    allow: ["*"]
  dc:
    type: discord
    tokenEnv: DISCORD_BOT_TOKEN
    owners: [80351110224678912]
    allow: ["@bob", "8035*"]
  tg:
    type: telegram
    tokenEnv: TELEGRAM_BOT_TOKEN
    owners: ["123456789"]
    allow: [carol]
routes:
  - channel: tg
    peer: ada
    agent: helper
  - channel: dc
    peer: "80351110224678912"
    agent: helper
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`toolbelt.yaml:8:24: channels.team.owners[1] is "ada": on a slack channel give a user id (such as U0123ADA; find it in the member ID`,
		`channels.dc.allow[0] is "@bob": on a discord channel give a user id (a number such as 80351110224678912; find it in Discord's Developer Mode`,
		`channels.dc.allow[1] is "8035*"`,
		`channels.tg.allow[0] is "carol": on a telegram channel give a user id (a number such as 123456789; find it in the from.id`,
		`routes[0].peer is "ada": on a telegram channel a peer is a user id (a number such as 123456789), not a name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	for _, not := range []string{"owners[0]", `"*"`, "channels.dc.owners", "channels.tg.owners", "routes[1]"} {
		if strings.Contains(err.Error(), not) {
			t.Errorf("the error names %s, which is valid:\n%v", not, err)
		}
	}
}
