package main

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"runtime"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
)

type mcpLoginCmd struct {
	Name      string `arg:"" help:"The server (its name under mcpServers), whose entry has oauth."`
	NoBrowser bool   `name:"no-browser" help:"Open no browser: sign in on any device with a code where the authorization server offers the device flow (RFC 8628), else only print the sign-in URL (to open on any machine whose browser can reach the redirect's port here)."`
}

func (c *mcpLoginCmd) Run(e *env) error {
	srv, err := e.oauthServer(c.Name)
	if err != nil {
		return err
	}
	tb, err := e.root(stateRoot, "")
	if err != nil {
		return err
	}
	ctx, stop := e.interruptible()
	defer stop()
	show := func(url string) error {
		_, err := fmt.Fprintf(e.stdout, "Sign in to %s at:\n\n  %s\n\nWaiting for the sign-in (Ctrl-C to give up)…\n", c.Name, url)
		if err == nil && !c.NoBrowser {
			openBrowser(url)
		}
		return err
	}
	o := client.LoginOptions{Tokens: tb.Tokens(), Show: show, Version: buildVersion()}
	if c.NoBrowser {
		o.Device = func(d client.DeviceCode) error {
			_, err := fmt.Fprintf(e.stdout, "Sign in to %s on any device: open\n\n  %s\n\nand enter the code %s.\n\nWaiting for the sign-in (Ctrl-C to give up)…\n",
				c.Name, cmp.Or(d.VerificationURIComplete, d.VerificationURI), d.UserCode)
			return err
		}
	}
	if err := client.Login(ctx, c.Name, srv, o); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "Signed in to %s.\n", c.Name)
	return err
}

type mcpLogoutCmd struct {
	Name string `arg:"" help:"The server whose sign-in to forget."`
}

func (c *mcpLogoutCmd) Run(e *env) error {
	if _, err := e.oauthServer(c.Name); err != nil {
		return err
	}
	tb, err := e.root(stateRoot, "")
	if err != nil {
		return err
	}
	had, err := tb.Tokens().DeleteGrant(context.Background(), c.Name)
	if err != nil {
		return err
	}
	msg := "Signed out of %s: its tokens are forgotten.\n"
	if !had {
		msg = "Not signed in to %s: nothing to forget.\n"
	}
	_, err = fmt.Fprintf(e.stdout, msg, c.Name)
	return err
}

// oauthServer returns the configured server name, which must sign in with
// OAuth.
func (e *env) oauthServer(name string) (config.MCPServer, error) {
	cfg, err := e.config()
	if err != nil {
		return config.MCPServer{}, err
	}
	srv, ok := cfg.MCPServers[name]
	switch {
	case !ok:
		return srv, fmt.Errorf("no MCP server %s is configured (mcpServers in toolbelt.yaml)", name)
	case srv.OAuth == nil:
		return srv, fmt.Errorf("the MCP server %s has no oauth entry in toolbelt.yaml: it does not sign in with OAuth", name)
	}
	return srv, nil
}

// openBrowser opens url in the person's browser, if one can be started;
// the URL is printed either way.
func openBrowser(url string) {
	_ = startBrowser(url)
}

// startBrowser starts the person's browser on url, and says why it
// could not.
func startBrowser(url string) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	cmd := exec.Command(opener, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// OpenURL opens url in the person's browser, when they chose to (a tool's
// or an imported server's url-mode request for input): it makes the
// terminal a toolbelt.URLOpener.
func (t *terminal) OpenURL(url string) error { return startBrowser(url) }
