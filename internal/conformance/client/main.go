// Command client is the MCP conformance suite's client under test: it
// imports the server at the URL it is given the way toolbelt.yaml's
// mcpServers do (package mcp/client: connect, list, register the tools) and
// calls every imported tool through the pipeline, as an agent would.
//
// The suite (@modelcontextprotocol/conformance) runs it as `client URL` with
// the scenario's name in $MCP_CONFORMANCE_SCENARIO and its context (JSON)
// in $MCP_CONFORMANCE_CONTEXT; cmd/toolbelt's TestConformanceClient drives
// it. In the auth/* scenarios the server gets an oauth entry from the
// context: the client_credentials grant where the context gives a secret or
// a private key for it, the enterprise grant where it gives an identity
// provider's ID token, else the authorization code flow, signed in first
// with client.Login, whose sign-in page an HTTP client follows as a browser
// would; the import may sign in again when a server asks for more scopes
// (client.Options.SignIn), as a person at the adapter could. It exits non-zero when the server's tools could not be imported.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// serverName is the imported server's name: its tools are serverName__TOOL.
const serverName = "conformance"

// arguments are the arguments of the scenarios' tools that take some; the
// others are called with none.
var arguments = map[string]string{
	"add_numbers": `{"a": 5, "b": 3}`,
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// run imports the server at url in scenario (whose context is the JSON
// contextJSON, or empty) and calls each of its tools once, logging to
// log.
func run(ctx context.Context, url, scenario, contextJSON string, log io.Writer) error {
	// The scenarios' requests for input are passed on (elicitation), to
	// the adapter's person, who accepts each form as it is offered.
	srv := config.MCPServer{URL: url, Elicitation: true}
	tokens := &memoryTokens{grants: map[string]*client.Grant{}}
	if strings.HasPrefix(scenario, "auth/") {
		dir, err := os.MkdirTemp("", "conformance-client-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		oauth, err := oauthEntry(scenario, contextJSON, dir)
		if err != nil {
			return err
		}
		srv.OAuth = oauth
		if oauth.Grant == config.GrantAuthorizationCode {
			if err := client.Login(ctx, serverName, srv, client.LoginOptions{Tokens: tokens, Show: browse, Version: "conformance"}); err != nil {
				return err
			}
		}
	}
	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{serverName: srv}, client.Options{
		Logger:  slog.New(slog.NewTextHandler(log, nil)),
		Version: "conformance",
		Tokens:  tokens,
		SignIn:  browse,
	})
	if err := m.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = m.Stop(context.Background()) }()
	for _, st := range m.Status() {
		if st.State != client.StateReady {
			return fmt.Errorf("server %s is %s: %s", st.Name, st.State, st.LastError)
		}
	}
	tc := &tool.Context{}
	interact.Service.Set(tc, interact.Govern(acceptDefaults{}, interact.Rules{}))
	runner := invoke.New(reg, tc)
	for _, meta := range reg.List() {
		remote := meta.ID[len(serverName)+len(client.DefaultSeparator):]
		args := arguments[remote]
		if args == "" {
			args = "{}"
		}
		msg := runner.Run(ctx, tool.Call{ID: "conformance_" + remote, Name: meta.ID, Arguments: []byte(args)})
		fmt.Fprintf(log, "%s: error %v: %d content blocks\n", meta.ID, msg.IsError, len(msg.Content))
	}
	return nil
}

// acceptDefaults is the adapter's person: it accepts every form without
// filling in a field, so that each takes its default (the client applies
// the schema's defaults, SEP-1034), and it has no model to complete
// prompts with.
type acceptDefaults struct{}

func (acceptDefaults) Elicit(context.Context, interact.Form) (interact.Reply, error) {
	return interact.Reply{Action: interact.Accept, Content: map[string]any{}, By: "conformance adapter"}, nil
}

func (acceptDefaults) Sample(context.Context, interact.Prompt) (interact.Completion, error) {
	return interact.Completion{}, fmt.Errorf("%w: the conformance adapter has no model", interact.ErrUnsupported)
}

// scenarioContext is what an auth scenario's context gives the client.
type scenarioContext struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
	// The enterprise identity provider of auth/cross-app-access-*.
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPIssuer        string `json:"idp_issuer"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
}

// oauthEntry returns the server's oauth entry in scenario, whose context
// is raw: the client_credentials grant in the auth/client-credentials-*
// scenarios (with the context's private key, written to dir, or its
// secret), the enterprise grant where the context gives an identity
// provider's ID token, else the authorization code flow, with the client the context
// names registered beforehand or, when it names none, dynamic
// registration.
func oauthEntry(scenario, raw, dir string) (*config.MCPOAuth, error) {
	var sc scenarioContext
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return nil, fmt.Errorf("$MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	o := &config.MCPOAuth{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret, Grant: config.GrantAuthorizationCode}
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		o.Grant = config.GrantClientCredentials
	case sc.IDPIDToken != "":
		o.Grant = config.GrantEnterprise
		o.IDP = &config.MCPOAuthIDP{Issuer: sc.IDPIssuer, TokenEndpoint: sc.IDPTokenEndpoint, ClientID: sc.IDPClientID, IDToken: sc.IDPIDToken}
	}
	if sc.PrivateKeyPEM != "" {
		o.PrivateKeyFile = filepath.Join(dir, "key.pem")
		if err := os.WriteFile(o.PrivateKeyFile, []byte(sc.PrivateKeyPEM), 0o600); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// browse plays the person's browser on the sign-in page at url: it
// follows the authorization server's redirects to Login's loopback
// listener, which takes the code and state.
func browse(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return errors.New("the sign-in page ended in " + resp.Status)
	}
	return nil
}

// memoryTokens is a TokenStore in memory: the adapter's grants live as
// long as its run.
type memoryTokens struct {
	mu     sync.Mutex
	grants map[string]*client.Grant
}

func (s *memoryTokens) Grant(_ context.Context, server string) (*client.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[server], nil
}

func (s *memoryTokens) SaveGrant(_ context.Context, server string, g *client.Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants[server] = g
	return nil
}

func (s *memoryTokens) DeleteGrant(_ context.Context, server string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.grants[server]
	delete(s.grants, server)
	return ok, nil
}
