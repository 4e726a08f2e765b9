package config

import (
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/internal/closest"
)

// OpenAPI imports the operations of an OpenAPI 3.x document as tools, one
// per operation.
type OpenAPI struct {
	// Name starts the names of the API's tools (petstore → petstore__listPets)
	// and names their group (group:openapi:petstore).
	Name string `yaml:"name"`
	// Spec is the OpenAPI document, JSON or YAML: a file (relative to
	// toolbelt.yaml) or an http(s) URL, fetched as web_fetch fetches
	// (tools.web_fetch.allowHosts reaches a private host).
	Spec string `yaml:"spec"`
	// BaseURL is where the operations are sent (default: the document's
	// first server).
	BaseURL string `yaml:"baseURL"`
	// Include keeps only some operations (default: all).
	Include OpenAPIInclude `yaml:"include"`
	// Auth is how requests authenticate.
	Auth OpenAPIAuth `yaml:"auth"`
}

// OpenAPIInclude selects operations: those with one of the tags or one of
// the operation ids.
type OpenAPIInclude struct {
	// Tags keeps the operations tagged with one of these.
	Tags []string `yaml:"tags"`
	// OperationIDs keeps the operations with one of these ids.
	OperationIDs []string `yaml:"operationIds"`
}

// OpenAPIAuth is the credentials sent with an API's requests. Secrets are
// written ${NAME}, read from the environment variable NAME.
type OpenAPIAuth struct {
	// Type is the kind of credentials: apiKey, bearer or oauth2 (client
	// credentials); empty sends none.
	Type string `yaml:"type"`
	// In is where an API key goes: header or query.
	In string `yaml:"in" default:"header"`
	// Name is the API key's header or query parameter.
	Name string `yaml:"name"`
	// Value is the API key (apiKey) or the token (bearer): ${NAME}.
	Value string `yaml:"value"`
	// TokenURL is the OAuth token endpoint (oauth2).
	TokenURL string `yaml:"tokenURL"`
	// ClientID is the OAuth client (oauth2); ${NAME} reads it from the
	// environment.
	ClientID string `yaml:"clientID"`
	// ClientSecret is the OAuth client's secret (oauth2): ${NAME}.
	ClientSecret string `yaml:"clientSecret"`
	// Scopes are the OAuth scopes asked for (oauth2).
	Scopes []string `yaml:"scopes"`
}

// The values of OpenAPIAuth.Type.
const (
	AuthAPIKey = "apiKey"
	AuthBearer = "bearer"
	AuthOAuth2 = "oauth2"
)

// validateOpenAPI checks tools.openapi's entries.
func (c *Config) validateOpenAPI() []error {
	var errs []error
	seen := map[string]bool{}
	for i, api := range c.Tools.OpenAPI {
		path, key := fmt.Sprintf("$.tools.openapi[%d]", i), fmt.Sprintf("tools.openapi[%d]", i)
		fail := func(at, msg string) { errs = append(errs, c.errorAt(path+at, key+msg)) }
		switch {
		case api.Name == "":
			fail("", " has no name: give the prefix of its tools' names")
		case strings.ContainsFunc(api.Name, func(r rune) bool { return !isNameRune(r) }):
			fail(".name", fmt.Sprintf(".name is %q: use only letters, digits, '_' and '-' (it becomes part of tool names)", api.Name))
		case seen[api.Name]:
			fail(".name", fmt.Sprintf(".name %q is used twice: each API needs its own prefix", api.Name))
		}
		seen[api.Name] = true
		if api.Spec == "" {
			fail("", " has no spec: give the OpenAPI document's file or URL")
		}
		if u := api.BaseURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			fail(".baseURL", fmt.Sprintf(".baseURL is %q: it must be an http:// or https:// URL", u))
		}
		errs = append(errs, c.validateAuth(path+".auth", key+".auth", api.Auth)...)
	}
	return errs
}

// validateAuth checks an API's credentials: the fields its type needs,
// and secrets read from the environment, never written in the file.
func (c *Config) validateAuth(path, key string, a OpenAPIAuth) []error {
	var errs []error
	fail := func(at, msg string) { errs = append(errs, c.errorAt(path+at, key+msg)) }
	secret := func(field, v string) {
		switch {
		case v == "":
			fail("", fmt.Sprintf(" (%s) needs %s: write ${NAME} to read it from the environment variable NAME", a.Type, field))
		case !envRef.MatchString(v):
			fail("."+field, fmt.Sprintf(".%s is written in the file: write ${NAME} to read the secret from the environment variable NAME", field))
		}
	}
	switch a.Type {
	case "":
	case AuthAPIKey:
		if a.Name == "" {
			fail("", " (apiKey) needs name: the header or query parameter of the key")
		}
		if a.In != "" && a.In != "header" && a.In != "query" {
			fail(".in", fmt.Sprintf(".in is %q: use header or query", a.In))
		}
		secret("value", a.Value)
	case AuthBearer:
		secret("value", a.Value)
	case AuthOAuth2:
		if !strings.HasPrefix(a.TokenURL, "http://") && !strings.HasPrefix(a.TokenURL, "https://") {
			fail(".tokenURL", " (oauth2) needs tokenURL: the http(s) URL of the token endpoint")
		}
		if a.ClientID == "" {
			fail("", " (oauth2) needs clientID")
		}
		secret("clientSecret", a.ClientSecret)
	default:
		types := []string{AuthAPIKey, AuthBearer, AuthOAuth2}
		msg := fmt.Sprintf(".type is %q: use %s", a.Type, strings.Join(types, ", "))
		if close := closest.Names(a.Type, types, 1); len(close) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", close[0])
		}
		fail(".type", msg)
	}
	return errs
}

// isNameRune reports whether r may appear in an imported name.
func isNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
