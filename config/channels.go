package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// ChannelTypes are the kinds of channel an entry of channels: may connect
// (its type:); an entry without a type is only a policy layer for calls
// that come from a channel of that name (cli, mcp, …).
var ChannelTypes = []string{"webhook", "irc", "email", "slack", "discord", "telegram"}

// Channel is one entry of channels: the tool policy of calls that come
// from it and, with a type, a place people talk to agents — a webhook, an
// IRC network, a mailbox (docs/channels.md). Secrets are never written
// here: the *Env fields name the environment variables that hold them.
type Channel struct {
	// Type is what the channel connects to: webhook, irc, email, slack,
	// discord or telegram; none for a policy layer only.
	Type string `yaml:"type"`
	// Tools is the channel's tool policy layer.
	Tools Rules `yaml:"tools"`
	// Owners are the senders whose messages run as the owner's (IRC
	// nicks or nick!user@host masks, email addresses, webhook senders; *
	// globs allowed). On Slack, Discord and Telegram they are user ids
	// (U0123ADA; 123456789), never usernames, which can change hands.
	Owners []string `yaml:"owners"`
	// Allow are the other senders whose messages agents answer; anyone
	// neither an owner nor allowed is ignored, and audited. On Slack,
	// Discord and Telegram they are user ids, or * for anyone.
	Allow []string `yaml:"allow"`
	// RateLimit is how many messages one sender may send a minute before
	// the rest are ignored (and audited).
	RateLimit int `yaml:"rateLimit" default:"20"`
	// FirstContact asks a person before the message tool sends to a
	// recipient it has not sent to before (the first time only).
	FirstContact bool `yaml:"firstContact" default:"false"`
	// URL is where a webhook channel POSTs what it sends.
	URL string `yaml:"url"`
	// Path is where toolbelt serve takes a webhook channel's incoming
	// messages, or a Slack channel's Events API requests (default
	// /channels/NAME).
	Path string `yaml:"path"`
	// SecretEnv names the variable holding a webhook channel's Standard
	// Webhooks secret ("whsec_…"), for what it signs and what it accepts.
	SecretEnv string `yaml:"secretEnv"`
	// Server is an IRC server's or an SMTP server's host:port.
	Server string `yaml:"server"`
	// TLS connects to an IRC server over TLS (port 6697 usually).
	TLS bool `yaml:"tls" default:"false"`
	// Nick is the IRC nick the channel uses (default toolbelt).
	Nick string `yaml:"nick"`
	// Rooms are the IRC channels joined (#ops, …).
	Rooms []string `yaml:"rooms"`
	// Username is the SASL PLAIN account on IRC, the SMTP login on email.
	Username string `yaml:"username"`
	// PasswordEnv names the variable holding the SASL or SMTP password.
	PasswordEnv string `yaml:"passwordEnv"`
	// From is the address an email channel sends from.
	From string `yaml:"from"`
	// StartTLS refuses to send email over a connection the SMTP server
	// will not upgrade with STARTTLS; false sends in the clear.
	StartTLS *bool `yaml:"startTls" default:"true"`
	// TokenEnv names the variable holding a Slack, Discord or Telegram
	// channel's bot token (Slack's xoxb-…).
	TokenEnv string `yaml:"tokenEnv"`
	// SigningSecretEnv names the variable holding a Slack app's signing
	// secret, which verifies the Events API's requests.
	SigningSecretEnv string `yaml:"signingSecretEnv"`
	// APIURL is the base URL of a Slack, Discord or Telegram bot API
	// (default https://slack.com/api, https://discord.com/api/v10,
	// https://api.telegram.org): a proxy's, or a local fake's in tests.
	APIURL string `yaml:"apiUrl"`
	// IMAPServer is the host:port of the IMAP server whose INBOX an email
	// channel receives from, logging in as username with passwordEnv's
	// password; without it the channel only sends.
	IMAPServer string `yaml:"imapServer"`
	// IMAPTLS connects to the IMAP server over TLS (port 993 usually);
	// otherwise the connection is upgraded with STARTTLS, and refused in
	// the clear unless startTls is false.
	IMAPTLS bool `yaml:"imapTls" default:"false"`
	// IMAPPollSeconds is how often an email channel looks for new mail
	// when its IMAP server cannot IDLE, and the longest it idles between
	// two looks when it can.
	IMAPPollSeconds int `yaml:"imapPollSeconds" default:"60"`
	// AuthservID is the authserv-id of the mail server that receives the
	// channel's mail, as its Authentication-Results headers name it
	// (mx.example.com). A mail taken by IMAP counts as from its From
	// address only when that server's topmost Authentication-Results say
	// dmarc=pass, or dkim=pass for the From's domain; any other mail is
	// from unverified:ADDRESS, which owners and allow entries do not match
	// (anyone can write any From). Without it every mail is unverified.
	AuthservID string `yaml:"authservId"`
}

// RequiresStartTLS says whether an email channel must upgrade its SMTP
// connection (startTls, true unless set false).
func (ch Channel) RequiresStartTLS() bool { return ch.StartTLS == nil || *ch.StartTLS }

// Route maps incoming messages to an agent: those of a channel, and
// optionally only those from one peer, in one room, or that mention the
// channel's nick. The first route that matches a message takes it.
type Route struct {
	// Channel is the name of the channel (an entry of channels).
	Channel string `yaml:"channel"`
	// Peer keeps the route to messages from this sender.
	Peer string `yaml:"peer"`
	// Room keeps the route to messages in this conversation (an IRC
	// channel, a webhook's conversation, a Slack channel id — its threads
	// included — or a Discord or Telegram channel's id).
	Room string `yaml:"room"`
	// Mention keeps the route to messages that address the channel by name
	// (in a room, "toolbelt: …"); direct messages always do.
	Mention bool `yaml:"mention" default:"false"`
	// Agent is the configured agent that answers.
	Agent string `yaml:"agent"`
}

// channelNeeds are the settings each type of channel cannot do without.
var channelNeeds = map[string][]string{
	"webhook":  {"url", "secretEnv"},
	"irc":      {"server"},
	"email":    {"server", "from"},
	"slack":    {"tokenEnv", "signingSecretEnv"},
	"discord":  {"tokenEnv"},
	"telegram": {"tokenEnv"},
}

// validateChannels checks the channels' types and needs, and that routes
// name channels and agents that are configured.
func (c *Config) validateChannels() []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Channels)) {
		ch, path := c.Channels[name], "$.channels.'"+name+"'"
		if ch.Type == "" {
			continue
		}
		needs, ok := channelNeeds[ch.Type]
		if !ok {
			errs = append(errs, c.errorAt(path+".type", fmt.Sprintf("channels.%s.type is %q: use one of %s", name, ch.Type, strings.Join(ChannelTypes, ", "))))
			continue
		}
		set := map[string]bool{"url": ch.URL != "", "secretEnv": ch.SecretEnv != "", "server": ch.Server != "", "from": ch.From != ""}
		set["tokenEnv"], set["signingSecretEnv"] = ch.TokenEnv != "", ch.SigningSecretEnv != ""
		for _, need := range needs {
			if !set[need] {
				errs = append(errs, c.errorAt(path, fmt.Sprintf("channels.%s (type %s) has no %s", name, ch.Type, need)))
			}
		}
		if u, err := url.Parse(ch.APIURL); ch.APIURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			errs = append(errs, c.errorAt(path+".apiUrl", fmt.Sprintf("channels.%s.apiUrl is %q: give an http(s) URL such as https://slack.com/api", name, ch.APIURL)))
		}
		if ch.Type == "email" && ch.IMAPServer != "" && (ch.Username == "" || ch.PasswordEnv == "") {
			errs = append(errs, c.errorAt(path+".imapServer", fmt.Sprintf("channels.%s.imapServer needs username and passwordEnv to log in to the mailbox", name)))
		}
		if ch.IMAPPollSeconds < 0 {
			errs = append(errs, c.errorAt(path+".imapPollSeconds", fmt.Sprintf("channels.%s.imapPollSeconds is %d: it must not be negative (0 means the default)", name, ch.IMAPPollSeconds)))
		}
		errs = append(errs, c.checkSenderIDs(name, path, ch)...)
		if ch.RateLimit < 0 {
			errs = append(errs, c.errorAt(path+".rateLimit", fmt.Sprintf("channels.%s.rateLimit is %d: it must not be negative (0 means the default)", name, ch.RateLimit)))
		}
	}
	for i, r := range c.Routes {
		path := fmt.Sprintf("$.routes[%d]", i)
		ch, ok := c.Channels[r.Channel]
		if !ok || ch.Type == "" {
			errs = append(errs, c.errorAt(path+".channel", fmt.Sprintf("routes[%d].channel is %q, which is not a configured channel with a type", i, r.Channel)))
		}
		if id := senderIDs[ch.Type]; r.Peer != "" && id.form != nil && !id.form.MatchString(r.Peer) {
			errs = append(errs, c.errorAt(path+".peer", fmt.Sprintf("routes[%d].peer is %q: on a %s channel a peer is a user id (%s), not a name", i, r.Peer, ch.Type, id.example)))
		}
		if _, ok := c.Agents[r.Agent]; !ok {
			errs = append(errs, c.errorAt(path+".agent", fmt.Sprintf("routes[%d].agent is %q, which is not a configured agent (configured: %s)", i, r.Agent, strings.Join(slices.Sorted(maps.Keys(c.Agents)), ", "))))
		}
	}
	return errs
}

// senderIDs are the forms of the user ids that Slack, Discord and
// Telegram channels' owners, allow entries and route peers must be: their
// usernames can be changed and then taken by someone else, so they are
// never trusted.
var senderIDs = map[string]struct {
	form    *regexp.Regexp
	example string
	find    string
}{
	"slack":    {regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`), "such as U0123ADA", "the member ID in the user's Slack profile (⋮, Copy member ID)"},
	"discord":  {regexp.MustCompile(`^[0-9]{1,20}$`), "a number such as 80351110224678912", "Discord's Developer Mode, then Copy User ID on the user"},
	"telegram": {regexp.MustCompile(`^[0-9]{1,20}$`), "a number such as 123456789", "the from.id of a message they sent, as getUpdates shows it"},
}

// checkSenderIDs checks that a Slack, Discord or Telegram channel's
// owners and allow entries are user ids (allow may also be *).
func (c *Config) checkSenderIDs(name, path string, ch Channel) []error {
	id, ok := senderIDs[ch.Type]
	if !ok {
		return nil
	}
	var errs []error
	for _, list := range []struct {
		key     string
		entries []string
	}{{"owners", ch.Owners}, {"allow", ch.Allow}} {
		key := list.key
		for i, e := range list.entries {
			if id.form.MatchString(e) || (key == "allow" && e == "*") {
				continue
			}
			errs = append(errs, c.errorAt(fmt.Sprintf("%s.%s[%d]", path, key, i), fmt.Sprintf(
				"channels.%s.%s[%d] is %q: on a %s channel give a user id (%s; find it in %s), not a username, which its owner can change and someone else then take", name, key, i, e, ch.Type, id.example, id.find)))
		}
	}
	return errs
}
