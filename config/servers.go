package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/internal/closest"
)

// transports are the values of MCPServer.Type.
var transports = []string{TransportStdio, TransportHTTP, TransportSSE}

// validateServer checks an imported MCP server's entry.
func (c *Config) validateServer(name string, srv MCPServer) []error {
	path, key := "$.mcpServers."+pathKey(name), "mcpServers."+name
	var errs []error
	fail := func(at, msg string) { errs = append(errs, c.errorAt(path+at, msg)) }
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			fail("", fmt.Sprintf("mcpServers: the name %q may use only letters, digits, '_' and '-' (it becomes part of tool names)", name))
			break
		}
	}
	switch t := srv.Type; {
	case t != "" && !slices.Contains(transports, t):
		msg := fmt.Sprintf("%s.type is %q: use stdio (a command), http (streamable HTTP at url) or sse (HTTP with server-sent events at url)", key, t)
		if close := closest.Names(t, transports, 1); len(close) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", close[0])
		}
		fail(".type", msg)
	case srv.Command == "" && srv.URL == "":
		fail("", fmt.Sprintf("%s needs a command (stdio) or a url (HTTP)", key))
	case srv.Command != "" && srv.URL != "":
		fail("", fmt.Sprintf("%s has both a command and a url: give one", key))
	case t == TransportStdio && srv.Command == "":
		fail(".type", fmt.Sprintf("%s.type is stdio, which starts a command, but it has a url and no command: use type http (or sse) for a url", key))
	case t != "" && t != TransportStdio && srv.URL == "":
		fail(".type", fmt.Sprintf("%s.type is %s, which needs a url, but it has a command: use type stdio (or leave type out) for a command", key, t))
	case srv.URL != "" && !strings.HasPrefix(srv.URL, "http://") && !strings.HasPrefix(srv.URL, "https://"):
		fail(".url", fmt.Sprintf("%s.url is %q: it must be an http:// or https:// URL", key, srv.URL))
	}
	if srv.EnvFile != "" {
		_, err := ReadEnvFile(c.Resolve(srv.EnvFile))
		var syntax *EnvFileError
		switch {
		case errors.As(err, &syntax):
			fail(".envFile", fmt.Sprintf("%s.envFile is %q, whose line %d is not NAME=value", key, srv.EnvFile, syntax.Line))
		case err != nil:
			fail(".envFile", fmt.Sprintf("%s.envFile is %q, which %s", key, srv.EnvFile, reason(err)))
		}
	}
	for _, f := range []struct {
		what string
		m    map[string]string
	}{{"env", srv.Env}, {"headers", srv.Headers}} {
		for _, k := range slices.Sorted(maps.Keys(f.m)) {
			if m := inputRef.FindString(f.m[k]); m != "" {
				fail("."+f.what+"."+pathKey(k), fmt.Sprintf("%s.%s.%s uses %s, VS Code's prompt for a value, which Toolbelt cannot show: write ${NAME} to read the environment variable NAME", key, f.what, k, m))
			}
		}
	}
	if srv.OAuth != nil {
		errs = append(errs, c.validateOAuth(path+".oauth", key+".oauth", srv)...)
	}
	return errs
}

// The values of mcpServers.NAME.oauth.grant and .tokenEndpointAuth.
var (
	oauthGrants     = []string{GrantAuthorizationCode, GrantClientCredentials, GrantEnterprise}
	oauthAuthStyles = []string{"none", "client_secret_basic", "client_secret_post"}
)

// validateOAuth checks a server's oauth entry, found at path and named key.
func (c *Config) validateOAuth(path, key string, srv MCPServer) []error {
	o := srv.OAuth
	var errs []error
	fail := func(at, msg string) { errs = append(errs, c.errorAt(path+at, msg)) }
	if srv.Transport() != TransportHTTP {
		fail("", fmt.Sprintf("%s: OAuth is for servers reached over streamable HTTP (a url, type http); a stdio server gets its credentials in env", key))
	}
	if o.Grant != "" && !slices.Contains(oauthGrants, o.Grant) {
		fail(".grant", fmt.Sprintf("%s.grant is %q: use %s", key, o.Grant, strings.Join(oauthGrants, ", ")))
	}
	if o.TokenEndpointAuth != "" && !slices.Contains(oauthAuthStyles, o.TokenEndpointAuth) {
		fail(".tokenEndpointAuth", fmt.Sprintf("%s.tokenEndpointAuth is %q: use %s", key, o.TokenEndpointAuth, strings.Join(oauthAuthStyles, ", ")))
	}
	if o.Grant == GrantClientCredentials && (o.ClientID == "" || o.ClientSecret == "" && o.PrivateKeyFile == "") {
		fail(".grant", fmt.Sprintf("%s.grant is client_credentials, which needs clientId and clientSecret (or privateKeyFile)", key))
	}
	switch {
	case o.Grant == GrantEnterprise && (o.ClientID == "" || o.IDP == nil || o.IDP.Issuer == "" || o.IDP.ClientID == "" || o.IDP.idTokens() == 0):
		fail(".grant", fmt.Sprintf("%s.grant is enterprise, which needs clientId and idp with issuer, clientId and idToken (or idTokenCommand, or idTokenEnv)", key))
	case o.IDP != nil && o.IDP.idTokens() > 1:
		fail(".idp", fmt.Sprintf("%s.idp has more than one of idToken, idTokenCommand and idTokenEnv: keep one", key))
	case o.IDP != nil && len(o.IDP.IDTokenCommand) > 0 && strings.TrimSpace(o.IDP.IDTokenCommand[0]) == "":
		fail(".idp.idTokenCommand", fmt.Sprintf("%s.idp.idTokenCommand starts with an empty program: give the program, then its arguments", key))
	case o.Grant != GrantEnterprise && o.IDP != nil:
		fail(".idp", fmt.Sprintf("%s.idp is for the enterprise grant: set grant: enterprise, or remove idp", key))
	}
	if o.RedirectPort < 0 || o.RedirectPort > 65535 {
		fail(".redirectPort", fmt.Sprintf("%s.redirectPort is %d: give a port (1-65535), or 0 for any free one", key, o.RedirectPort))
	}
	if o.ClientMetadataURL != "" && !strings.HasPrefix(o.ClientMetadataURL, "https://") {
		fail(".clientMetadataUrl", fmt.Sprintf("%s.clientMetadataUrl is %q: a client ID metadata document is served over https", key, o.ClientMetadataURL))
	}
	return errs
}

// inputRef is VS Code's ${input:ID}.
var inputRef = regexp.MustCompile(`\$\{input:[^}]*\}`)

// envRef is a reference to an environment variable in a configured value,
// in the forms MCP clients write: ${NAME}, ${env:NAME} (VS Code, Cursor)
// and ${NAME:-default} (Claude Code).
var envRef = regexp.MustCompile(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// ExpandEnv replaces each reference to an environment variable in v —
// ${NAME}, ${env:NAME} or ${NAME:-default} — with its value from lookup
// (os.LookupEnv), or its default. It returns the variables that are
// neither set nor given a default.
func ExpandEnv(v string, lookup func(string) (string, bool)) (string, []string) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if val, ok := lookup(m[1]); ok {
			return val
		}
		if strings.Contains(ref, ":-") {
			return m[2]
		}
		missing = append(missing, m[1])
		return ""
	})
	return out, missing
}

// ReadEnvFile reads a .env file (MCPServer.EnvFile): NAME=value lines,
// blank lines and # comments; "export " before a name and quotes around a
// value are dropped.
func ReadEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		k = strings.TrimSpace(k)
		if !ok || !envName.MatchString(k) {
			return nil, &EnvFileError{Path: path, Line: n}
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[k] = v
	}
	return env, sc.Err()
}

// EnvFileError is a line of a .env file that is not NAME=value.
type EnvFileError struct {
	Path string
	Line int
}

func (e *EnvFileError) Error() string {
	return fmt.Sprintf("%s:%d: not NAME=value", e.Path, e.Line)
}

// envName is the name of an environment variable.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// idTokens counts the ways of getting the ID token that are set.
func (p *MCPOAuthIDP) idTokens() int {
	n := 0
	for _, set := range []bool{p.IDToken != "", len(p.IDTokenCommand) > 0, p.IDTokenEnv != ""} {
		if set {
			n++
		}
	}
	return n
}
