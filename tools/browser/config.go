package browser

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

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
//	  idleTimeout: 30m  # a browser unused that long is stopped
//	  keepProfile: true  # cookies and storage outlive the session
type Config struct {
	// AllowHosts are hosts (host or host:port) pages may be opened from and
	// may load from although they are private or loopback; the session's
	// own previews are allowed besides.
	AllowHosts []string `json:"allowHosts,omitempty"`
	// FormHosts are hosts a form may be submitted to without a person's
	// approval, beside allowHosts.
	FormHosts []string `json:"formHosts,omitempty"`
	// IdleTimeout stops a session's browser that no call used for that
	// long (a duration: 90s, 30m, 2h; 0 never); the next call starts it
	// again, with no tab open.
	IdleTimeout string `json:"idleTimeout,omitempty" default:"30m"`
	// KeepProfile keeps a session's browser profile (cookies, storage,
	// logins) when the browser stops or the session ends, in the data
	// directory's browser folder, for the session's next browser; by
	// default the profile is removed with the browser.
	KeepProfile bool `json:"keepProfile,omitempty"`
}

// DefaultIdleTimeout is how long a browser may go unused before it is
// stopped, when tools.browser.idleTimeout does not say.
const DefaultIdleTimeout = 30 * time.Minute

// CheckSettings checks that every allowed host is a host or host:port,
// and the idle timeout a duration.
func (c Config) CheckSettings() error {
	_, err := netguard.New(netguard.Options{AllowHosts: c.AllowHosts, Setting: "tools.browser.allowHosts"})
	if err == nil {
		_, err = netguard.New(netguard.Options{AllowHosts: c.FormHosts, Setting: "tools.browser.formHosts"})
	}
	if err == nil {
		_, err = c.idle()
	}
	return err
}

// idle returns the idle timeout, DefaultIdleTimeout when it is not set.
func (c Config) idle() (time.Duration, error) {
	if c.IdleTimeout == "" {
		return DefaultIdleTimeout, nil
	}
	d, err := time.ParseDuration(c.IdleTimeout)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("tools.browser.idleTimeout: %q is not a duration such as 90s, 30m or 2h (0: never)", c.IdleTimeout)
	}
	return d, nil
}

// settings are the browser tool's settings, checked.
type settings struct {
	allowHosts, formHosts []string
	idle                  time.Duration // 0: never
	keepProfile           bool
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
	idle, _ := cfg.idle() // checked above
	return settings{allowHosts: cfg.AllowHosts, formHosts: cfg.FormHosts, idle: idle, keepProfile: cfg.KeepProfile}, nil
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
