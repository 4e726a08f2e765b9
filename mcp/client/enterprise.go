package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// The token types and grant of enterprise-managed authorization (SEP-990).
const (
	grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
)

// enterpriseClient gets tokens by enterprise-managed authorization
// (SEP-990): the enterprise identity provider exchanges the person's ID
// token for an identity assertion grant naming the server's authorization
// server and resource (RFC 8693 token exchange, an ID-JAG), which that
// authorization server exchanges for an access token (RFC 7523 JWT bearer
// grant, the client authenticated as tokenEndpointAuth says). No person
// signs in and nothing is kept: each new token runs both exchanges again.
// It is an auth.OAuthHandler.
type enterpriseClient struct {
	cfg config.MCPOAuth // its secrets and ID token expanded
	hc  *http.Client
	ts  oauth2.TokenSource
}

// newEnterpriseClient returns the enterprise grant's handler of the
// configured cfg, its ${VAR} references expanded.
func newEnterpriseClient(cfg config.MCPOAuth, hc *http.Client) (*enterpriseClient, error) {
	idp := *cfg.IDP
	var err error
	if idp.ClientSecret, err = expand("oauth.idp.clientSecret", idp.ClientSecret); err != nil {
		return nil, err
	}
	if idp.IDToken, err = expand("oauth.idp.idToken", idp.IDToken); err != nil {
		return nil, err
	}
	if idp.IDTokenCommand != nil {
		idp.IDTokenCommand = slices.Clone(idp.IDTokenCommand)
		for i, arg := range idp.IDTokenCommand {
			if idp.IDTokenCommand[i], err = expand("oauth.idp.idTokenCommand", arg); err != nil {
				return nil, err
			}
		}
	}
	cfg.IDP = &idp
	return &enterpriseClient{cfg: cfg, hc: hc}, nil
}

// TokenSource returns the source of tokens once Authorize ran.
func (c *enterpriseClient) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if c.ts == nil {
		return nil, nil
	}
	return c.ts, nil
}

// Authorize finds the server's authorization server from its 401, as a
// sign-in does, and gets a token by the two exchanges.
func (c *enterpriseClient) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	discard(resp)
	as, err := discover(ctx, challenges, req.URL.String(), c.hc)
	if err != nil {
		return err
	}
	idpToken, err := c.idpTokenEndpoint(ctx)
	if err != nil {
		return err
	}
	scopes := c.cfg.Scopes
	if len(scopes) == 0 {
		scopes = as.scopes
	}
	ts := oauth2.ReuseTokenSource(nil, tokenSourceFunc(func() (*oauth2.Token, error) {
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		return c.token(ctx, idpToken, as, scopes)
	}))
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("enterprise-managed authorization: %w", err)
	}
	c.ts = ts
	return nil
}

// token runs the two exchanges: the ID token for an ID-JAG at the
// identity provider's token endpoint idpToken, the ID-JAG for an access
// token at the authorization server as.
func (c *enterpriseClient) token(ctx context.Context, idpToken string, as *authServer, scopes []string) (*oauth2.Token, error) {
	idp := c.cfg.IDP
	idToken, err := c.idToken(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":           {oauthex.GrantTypeTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {as.meta.Issuer},
		"resource":             {as.resource},
		"subject_token":        {idToken},
		"subject_token_type":   {oauthex.TokenTypeIDToken},
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	idpClient := oauthClient{id: idp.ClientID, secret: idp.ClientSecret, style: oauth2.AuthStyleInHeader}
	_, jag, err := requestToken(ctx, c.hc, idpToken, idpClient, form)
	if err != nil {
		return nil, fmt.Errorf("exchanging the ID token at the identity provider: %w", err)
	}
	if jag.IssuedTokenType != tokenTypeIDJAG {
		return nil, fmt.Errorf("the identity provider's token endpoint %s issued a %q, not an identity assertion grant (%s)", idpToken, jag.IssuedTokenType, tokenTypeIDJAG)
	}
	form = url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag.AccessToken}, "resource": {as.resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	mcpClient := oauthClient{id: c.cfg.ClientID, style: authStyle(c.cfg.TokenEndpointAuth, "", as.meta.TokenEndpointAuthMethodsSupported)}
	if c.cfg.TokenEndpointAuth != "none" {
		mcpClient.secret = c.cfg.ClientSecret
	}
	t, _, err := requestToken(ctx, c.hc, as.meta.TokenEndpoint, mcpClient, form)
	if err != nil {
		return nil, fmt.Errorf("exchanging the identity assertion grant at the authorization server: %w", err)
	}
	return t, nil
}

// idpTokenEndpoint is the identity provider's token endpoint: the
// configured one, else its metadata's (RFC 8414 or OpenID discovery).
func (c *enterpriseClient) idpTokenEndpoint(ctx context.Context) (string, error) {
	if c.cfg.IDP.TokenEndpoint != "" {
		return c.cfg.IDP.TokenEndpoint, nil
	}
	meta, err := auth.GetAuthServerMetadata(ctx, c.cfg.IDP.Issuer, c.hc)
	switch {
	case err != nil:
		return "", fmt.Errorf("the identity provider's metadata: %w (set oauth.idp.tokenEndpoint)", err)
	case meta == nil || meta.TokenEndpoint == "":
		return "", fmt.Errorf("the identity provider %s publishes no token endpoint: set oauth.idp.tokenEndpoint", c.cfg.IDP.Issuer)
	}
	return meta.TokenEndpoint, nil
}

// The bounds of a run of oauth.idp.idTokenCommand.
const (
	idTokenTimeout = 30 * time.Second
	maxIDToken     = 64 << 10
)

// idToken is the person's ID token, got when an exchange needs it: the
// output of oauth.idp.idTokenCommand, the variable oauth.idp.idTokenEnv
// names, or oauth.idp.idToken. An error never holds the token.
func (c *enterpriseClient) idToken(ctx context.Context) (string, error) {
	idp := c.cfg.IDP
	switch {
	case len(idp.IDTokenCommand) > 0:
		return runIDTokenCommand(ctx, idp.IDTokenCommand)
	case idp.IDTokenEnv != "":
		token := strings.TrimSpace(os.Getenv(idp.IDTokenEnv))
		if token == "" {
			return "", fmt.Errorf("oauth.idp.idTokenEnv names %s, which is not set or empty in Toolbelt's environment", idp.IDTokenEnv)
		}
		return token, nil
	}
	return idp.IDToken, nil
}

// runIDTokenCommand runs argv, without a shell, for at most
// idTokenTimeout, and returns its standard output trimmed: the ID token.
// Its standard error's last line says why it failed; its output is never
// logged nor put in an error.
func runIDTokenCommand(ctx context.Context, argv []string) (string, error) {
	what := fmt.Sprintf("oauth.idp.idTokenCommand %s", argv[0])
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	ctx, cancel := context.WithTimeout(ctx, idTokenTimeout)
	defer cancel()
	var last string
	res, err := shell.RunChild(ctx, shell.Child{
		Path: path, Args: argv, Env: os.Environ(), MaxStdout: maxIDToken,
		Stderr: func(line string) {
			if strings.TrimSpace(line) != "" {
				// Redacted: a token tool may echo a token to stderr.
				last = content.Head(audit.RedactText(strings.TrimSpace(line)), 200, "…")
			}
		},
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %w", what, err)
	case res.Stopped && ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("%s did not finish in %s", what, idTokenTimeout)
	case res.Stopped:
		return "", fmt.Errorf("%s was stopped: %w", what, context.Cause(ctx))
	case res.StdoutOverflow:
		return "", fmt.Errorf("%s printed more than %d bytes, which is no ID token", what, maxIDToken)
	case res.ExitCode != 0:
		why := fmt.Sprintf("exit status %d", res.ExitCode)
		if res.ExitCode < 0 {
			why = "killed by " + res.Signal.String()
		}
		if last != "" {
			why += ": " + last
		}
		return "", fmt.Errorf("%s failed (%s)", what, why)
	}
	token := strings.TrimSpace(string(res.Stdout))
	switch {
	case token == "":
		return "", fmt.Errorf("%s printed nothing: it must print the ID token", what)
	case strings.ContainsAny(token, " \t\r\n"):
		return "", fmt.Errorf("%s printed more than one word: it must print the ID token alone", what)
	}
	return token, nil
}
