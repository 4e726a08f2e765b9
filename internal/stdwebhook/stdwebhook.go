// Package stdwebhook signs and verifies webhooks the Standard Webhooks way
// (standardwebhooks.com): the sender signs "id.timestamp.body" with
// HMAC-SHA256 under the shared secret and sends headers webhook-id,
// webhook-timestamp (Unix seconds) and webhook-signature ("v1,<base64>",
// several separated by spaces). The job queue's incoming webhooks and the
// webhook channel use it.
package stdwebhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how far a webhook's timestamp may be from now.
const Tolerance = 5 * time.Minute

// CheckEndpoint refuses a URL to send signed requests to whose answers
// are trusted unless it is https, or http to this machine (localhost or a
// loopback address): over plain HTTP elsewhere, anyone on the way could
// answer in its place.
// Its errors name the URL as Display shows it.
func CheckEndpoint(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("the URL is not valid: write scheme://host/path")
	case u.Host == "":
		return fmt.Errorf("%q has no host", Display(raw))
	case u.Scheme == "https":
		return nil
	case u.Scheme != "http":
		return fmt.Errorf("%q must be an https URL", Display(raw))
	}
	if h := u.Hostname(); h == "localhost" || net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q must be https: plain http is allowed only to this machine (localhost, 127.0.0.1, ::1)", Display(raw))
}

// Display is a URL as logs, errors and events may show it: without its
// user information, query and fragment, which may hold a token
// ("https://hooks.example/check?token=…" shows as
// "https://hooks.example/check"). A URL that does not parse shows as
// "(an invalid URL)".
func Display(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an invalid URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// CheckSecret refuses a secret that is not "whsec_" followed by the base64
// of at least 16 bytes, saying how to make one.
func CheckSecret(secret string) error {
	_, err := decodeSecret(secret)
	return err
}

// decodeSecret reads a "whsec_<base64>" secret.
func decodeSecret(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, errors.New(`webhook secret must start with "whsec_" followed by base64 (the Standard Webhooks form); make one with: echo whsec_$(head -c 32 /dev/urandom | base64)`)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) < 16 {
		return nil, errors.New(`webhook secret must be "whsec_" followed by the base64 of at least 16 random bytes`)
	}
	return key, nil
}

// Sign returns the webhook-signature header of a webhook: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body" under secret ("whsec_…").
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	return "v1," + sign(key, id, strconv.FormatInt(timestamp.Unix(), 10), body), nil
}

// Header returns the three headers of a webhook signed under secret.
func Header(secret, id string, timestamp time.Time, body []byte) (http.Header, error) {
	sig, err := Sign(secret, id, timestamp, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(timestamp.Unix(), 10))
	h.Set("webhook-signature", sig)
	return h, nil
}

func sign(key []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verify checks a webhook's headers and body against secret, at time now:
// a missing header, a timestamp more than Tolerance away, or no matching
// v1 signature is an error that says which.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := decodeSecret(secret)
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature header")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not Unix seconds", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("webhook-timestamp is %s away from now, more than %s: refused as stale", d.Round(time.Second), Tolerance)
	}
	want := sign(key, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		v, sig, ok := strings.Cut(s, ",")
		if ok && v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches the body: wrong secret, or the body was changed")
}
