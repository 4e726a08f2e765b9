package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// oauthClient is an OAuth client as a token endpoint knows it: its id, its
// secret (none for a public client) and how it authenticates (RFC 6749
// section 2.3.1: the secret in a Basic header or in the form).
type oauthClient struct {
	id, secret string
	style      oauth2.AuthStyle
}

// authStyle is how a client with a secret authenticates at the token
// endpoint: the configured method (tokenEndpointAuth) wins, then the one
// it registered with, then the first the authorization server supports of
// client_secret_basic (the default of RFC 7591) and client_secret_post.
func authStyle(configured, registered string, supported []string) oauth2.AuthStyle {
	for _, m := range []string{configured, registered} {
		switch m {
		case "client_secret_basic":
			return oauth2.AuthStyleInHeader
		case "client_secret_post", "none":
			return oauth2.AuthStyleInParams
		}
	}
	if !slices.Contains(supported, "client_secret_basic") && slices.Contains(supported, "client_secret_post") {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// tokenResponse is a token endpoint's answer (RFC 6749 section 5, RFC 8693
// section 2.2.1), or its error.
type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	RefreshToken     string `json:"refresh_token"`
	ExpiresIn        int64  `json:"expires_in"`
	Scope            string `json:"scope"`
	IssuedTokenType  string `json:"issued_token_type"`
	IDToken          string `json:"id_token"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// TokenError is a token endpoint's refusal (RFC 6749 section 5.2).
type TokenError struct {
	Endpoint    string
	Status      int
	Code        string // invalid_grant, invalid_client, …
	Description string
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("the token endpoint %s refused the request (%d %s", e.Endpoint, e.Status, e.Code)
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg + ")"
}

// postForm posts form to endpoint as c, authenticating it as c.style
// says (a public client, without a secret, names itself in the form), and
// returns the answer's status, media type and body.
func postForm(ctx context.Context, hc *http.Client, endpoint string, c oauthClient, form url.Values) (int, string, []byte, error) {
	form = cloneValues(form)
	if c.id != "" && (c.secret == "" || c.style != oauth2.AuthStyleInHeader) {
		form.Set("client_id", c.id)
	}
	if c.secret != "" && c.style != oauth2.AuthStyleInHeader {
		form.Set("client_secret", c.secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.secret != "" && c.style == oauth2.AuthStyleInHeader {
		req.SetBasicAuth(url.QueryEscape(c.id), url.QueryEscape(c.secret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode, ct, body, err
}

// requestToken posts form to the token endpoint as c and returns the
// token it answers with.
func requestToken(ctx context.Context, hc *http.Client, endpoint string, c oauthClient, form url.Values) (*oauth2.Token, *tokenResponse, error) {
	status, ct, body, err := postForm(ctx, hc, endpoint, c, form)
	if err != nil {
		return nil, nil, err
	}
	var tr tokenResponse
	if ct == "application/x-www-form-urlencoded" || ct == "text/plain" {
		v, _ := url.ParseQuery(string(body))
		tr = tokenResponse{AccessToken: v.Get("access_token"), TokenType: v.Get("token_type"), RefreshToken: v.Get("refresh_token"),
			Scope: v.Get("scope"), Error: v.Get("error"), ErrorDescription: v.Get("error_description")}
	} else if err := json.Unmarshal(body, &tr); err != nil && status < 300 {
		return nil, nil, fmt.Errorf("the token endpoint %s answered no JSON: %w", endpoint, err)
	}
	if status >= 300 || tr.Error != "" || tr.AccessToken == "" {
		return nil, &tr, &TokenError{Endpoint: endpoint, Status: status, Code: tr.Error, Description: tr.ErrorDescription}
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken}
	if tr.ExpiresIn > 0 {
		tok.Expiry = time.Now().Add(time.Duration(tr.ExpiresIn) * time.Second)
		tok.ExpiresIn = tr.ExpiresIn
	}
	return tok, &tr, nil
}

// cloneValues copies v, so that adding to it leaves the caller's alone.
func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v)+2)
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
