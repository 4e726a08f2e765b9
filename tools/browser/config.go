package browser

import (
	"net"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/internal/netguard"
	"github.com/toolbelt/toolbelt/tool"
)

// ConfigKey is the key of the browser tool's settings (tools.browser in
// toolbelt.yaml).
const ConfigKey = "browser"

// Config is the browser tool's settings:
//
//	browser:
//	  allowHosts: ["docs.internal", "127.0.0.1:5173"]  # reachable although private
//	  formHosts: ["example.com"]  # forms may be sent there without approval
type Config struct {
	// AllowHosts are hosts (host or host:port) pages may be opened from and
	// may load from although they are private or loopback; the session's
	// own previews are allowed besides.
	AllowHosts []string `json:"allowHosts,omitempty"`
	// FormHosts are hosts a form may be submitted to without a person's
	// approval, beside allowHosts.
	FormHosts []string `json:"formHosts,omitempty"`
}

// CheckSettings checks that every allowed host is a host or host:port.
func (c Config) CheckSettings() error {
	_, err := netguard.New(netguard.Options{AllowHosts: c.AllowHosts, Setting: "tools.browser.allowHosts"})
	if err == nil {
		_, err = netguard.New(netguard.Options{AllowHosts: c.FormHosts, Setting: "tools.browser.formHosts"})
	}
	return err
}

// settings are the browser tool's settings, checked.
type settings struct {
	allowHosts, formHosts []string
}

// loadSettings reads the settings under ConfigKey.
func loadSettings(c tool.Config) (settings, error) {
	var cfg Config
	if err := c.Decode(ConfigKey, &cfg); err != nil {
		return settings{}, err
	}
	if err := cfg.CheckSettings(); err != nil {
		return settings{}, err
	}
	return settings{allowHosts: cfg.AllowHosts, formHosts: cfg.FormHosts}, nil
}

// formAllowed reports whether a form may be sent to host (host:port as a
// URL gives it, the port left out for the scheme's default) without a
// person's approval.
func (s settings) formAllowed(host string) bool {
	bare := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		bare = h
	}
	for _, h := range slices.Concat(s.allowHosts, s.formHosts) {
		if strings.EqualFold(h, host) || strings.EqualFold(h, bare) {
			return true
		}
	}
	return false
}
