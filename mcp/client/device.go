package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// grantDeviceCode is the device authorization grant's type (RFC 8628).
const grantDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"

// DeviceCode is what the person needs to sign in on another device (RFC
// 8628): the page to open and the code to enter there.
type DeviceCode struct {
	// VerificationURI is the page to open.
	VerificationURI string
	// VerificationURIComplete, when the authorization server gives one, is
	// that page with the code in it: nothing to type.
	VerificationURIComplete string
	// UserCode is the code to enter on the page.
	UserCode string
}

// deviceAuthorization is a device authorization endpoint's answer (RFC
// 8628 section 3.2).
type deviceAuthorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
	Error                   string `json:"error"`
	ErrorDescription        string `json:"error_description"`
}

// defaultDeviceInterval is how long to wait between token requests when
// the authorization server names no interval (RFC 8628 section 3.2).
const defaultDeviceInterval = 5 * time.Second

// deviceSignIn signs in with the device authorization grant at endpoint:
// the person is shown a page and a code (h.o.Device) to sign in on any
// device, while Toolbelt asks the token endpoint for the token every
// interval until the person is done, refuses, or the code expires.
func (h *oauthHandler) deviceSignIn(ctx context.Context, as *authServer, endpoint string, scopes []string) error {
	c, err := h.register(ctx, as.meta, "")
	if err != nil {
		return err
	}
	form := url.Values{"resource": {as.resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	status, _, body, err := postForm(ctx, h.o.HTTPClient, endpoint, c, form)
	if err != nil {
		return fmt.Errorf("the device authorization request: %w", err)
	}
	var d deviceAuthorization
	if err := json.Unmarshal(body, &d); err != nil || status != http.StatusOK || d.DeviceCode == "" || d.UserCode == "" || d.VerificationURI == "" {
		return fmt.Errorf("the device authorization endpoint %s refused the request (%d %s %s)", endpoint, status, d.Error, d.ErrorDescription)
	}
	if err := h.o.Device(DeviceCode{VerificationURI: d.VerificationURI, VerificationURIComplete: d.VerificationURIComplete, UserCode: d.UserCode}); err != nil {
		return err
	}
	interval := defaultDeviceInterval
	if d.Interval > 0 {
		interval = time.Duration(d.Interval) * time.Second
	}
	deadline := time.Now().Add(time.Duration(cmp.Or(d.ExpiresIn, 600)) * time.Second)
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the sign-in: %w", ctx.Err())
		case <-time.After(interval):
		}
		if time.Now().After(deadline) {
			return errors.New("the sign-in's code expired before the sign-in ended: run toolbelt mcp login again")
		}
		tok, _, err := requestToken(ctx, h.o.HTTPClient, as.meta.TokenEndpoint, c, url.Values{"grant_type": {grantDeviceCode}, "device_code": {d.DeviceCode}, "resource": {as.resource}})
		var te *TokenError
		switch {
		case errors.As(err, &te) && te.Code == "authorization_pending":
			continue
		case errors.As(err, &te) && te.Code == "slow_down":
			interval += 5 * time.Second
			continue
		case err != nil:
			return fmt.Errorf("the device sign-in: %w", err)
		}
		return h.keep(ctx, as, c, tok, scopes)
	}
}

// deviceEndpoint is the device authorization endpoint (RFC 8628 section
// 4) the authorization server meta describes names in its metadata, or ""
// when it has none (oauthex.AuthServerMeta does not keep it: the metadata
// is read again, at the well-known paths of its issuer).
func deviceEndpoint(ctx context.Context, meta *oauthex.AuthServerMeta, hc *http.Client) string {
	u, err := url.Parse(meta.Issuer)
	if err != nil {
		return ""
	}
	path := strings.TrimSuffix(u.Path, "/")
	root := u.Scheme + "://" + u.Host
	for _, where := range []string{root + "/.well-known/oauth-authorization-server" + path, root + "/.well-known/openid-configuration" + path, root + path + "/.well-known/openid-configuration", root + "/.well-known/oauth-authorization-server"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
		if err != nil {
			return ""
		}
		resp, err := hc.Do(req)
		if err != nil {
			return ""
		}
		var m struct {
			Issuer string `json:"issuer"`
			Device string `json:"device_authorization_endpoint"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK && m.Issuer == meta.Issuer {
			if checkEndpoint(m.Device) != nil {
				return ""
			}
			return m.Device
		}
	}
	return ""
}
