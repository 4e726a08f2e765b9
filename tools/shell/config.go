package shell

import (
	"fmt"
	"path"
	"time"

	"github.com/toolbelt/toolbelt/internal/netproxy"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// ConfigKey is the key of the shell tools' settings in [tool.Config].
const ConfigKey = "exec"

// Config is the shell tools' settings, read from the tool context's
// configuration under [ConfigKey]. Zero fields take the defaults below.
//
//	exec:
//	  defaultTimeout: 120      # seconds a command may run when the call does not say (the seeds' timeoutSec)
//	  maxTimeout: 3600         # the most a call may ask for
//	  yieldMs: 30000           # how long exec waits before leaving a command in the background (the seeds' backgroundMs)
//	  maxOutputChars: 200000   # output kept per command (beginning and end)
//	  killGraceMs: 2000        # between SIGTERM and SIGKILL
//	  sessionTtl: 30m          # how long finished background sessions stay listed
//	  envAllow: [GITHUB_TOKEN] # secret-looking variables to pass anyway (names or patterns)
//	  shell: /bin/bash         # the shell that runs commands
//	  sandbox:
//	    required: true         # every command runs in the sandbox
//	    processLimit: 256      # processes a sandboxed command may have at once
//	  network:
//	    allow: [registry.npmjs.org, "*.github.com"] # what sandboxed commands may reach, through Toolbelt's proxy
//	    allowPrivate: [registry.internal:4873]      # hosts of allow reached at private addresses
type Config struct {
	// DefaultTimeout is in seconds; default 120, the seeds' timeoutSec.
	DefaultTimeout int `json:"defaultTimeout,omitempty" default:"120"`
	// MaxTimeout is in seconds; default 3600.
	MaxTimeout int `json:"maxTimeout,omitempty" default:"3600"`
	// YieldMs is how long exec waits for a command before returning and
	// leaving it running in the background; default 30,000, the seeds'
	// backgroundMs.
	YieldMs int `json:"yieldMs,omitempty" default:"30000"`
	// MaxOutputChars bounds the output kept per command, in bytes of UTF-8
	// (characters for ASCII output); the beginning and the end are kept.
	// Default 200,000.
	MaxOutputChars int `json:"maxOutputChars,omitempty" default:"200000"`
	// KillGraceMs is the time between SIGTERM and SIGKILL; default 2,000.
	KillGraceMs int `json:"killGraceMs,omitempty" default:"2000"`
	// SessionTTL is how long finished background sessions are kept, as a
	// Go duration ("30m"); default 30 minutes.
	SessionTTL string `json:"sessionTtl,omitempty" default:"30m"`
	// EnvAllow lists environment variables passed to commands although
	// their names look secret: exact names or path.Match patterns ("AWS_*").
	EnvAllow []string `json:"envAllow,omitempty"`
	// Shell runs commands as Shell -c COMMAND; default bash from PATH, or
	// /bin/sh.
	Shell string `json:"shell,omitempty" default:"bash from PATH, else /bin/sh"`
	// Sandbox configures sandbox mode.
	Sandbox SandboxConfig `json:"sandbox,omitzero"`
	// Network gives sandboxed commands the network through Toolbelt's
	// filtering proxy; without it the sandbox has no network at all.
	Network NetworkConfig `json:"network,omitzero"`
}

// NetworkConfig is the sandbox's network by allowlist. When Allow is set,
// commands in the sandbox reach the network only through a filtering
// proxy Toolbelt starts for each command (the proxy variables point at
// it): the domains Allow names are reached, another is asked about (or
// refused when nobody can be asked), and private and special addresses are
// refused unless AllowPrivate names the host. Every host reached or
// refused is in the call's result and audit record.
type NetworkConfig struct {
	// Allow lists domain patterns: a host name ("registry.npmjs.org") or
	// its subdomains ("*.github.com").
	Allow []string `json:"allow,omitempty"`
	// AllowPrivate lists hosts ("host" or "host:port", as
	// tools.web_fetch.allowHosts) reached even at private or loopback
	// addresses; each must also be allowed by Allow.
	AllowPrivate []string `json:"allowPrivate,omitempty"`
}

// SandboxConfig configures sandbox mode.
type SandboxConfig struct {
	// Required runs every command in the sandbox; a call cannot opt out.
	Required bool `json:"required,omitempty" default:"false"`
	// ProcessLimit bounds the processes a sandboxed command may run at
	// once; default 256.
	ProcessLimit int `json:"processLimit,omitempty" default:"256"`
	// Bwrap is the bubblewrap executable (default: bwrap from PATH).
	Bwrap string `json:"bwrap,omitempty" default:"bwrap from PATH"`
}

// settings is a Config with defaults applied and units converted.
type settings struct {
	defaultTimeout time.Duration
	maxTimeout     time.Duration
	yield          time.Duration
	maxOutput      int
	killGrace      time.Duration
	sessionTTL     time.Duration
	envAllow       []string
	shell          string
	sandbox        SandboxConfig
	// conceal are the directories of the workspace hidden from the tools
	// (real paths; see ConcealedIn): unasked commands may not read them,
	// and bubblewrap covers them.
	conceal []string
	// protect is the protected-path list of the workspace's file bridge
	// (see protectionOf): read-only in the sandbox.
	protect sandbox.Protection
	// network is the sandbox's network allowlist (checked).
	network NetworkConfig
}

// The defaults.
const (
	defaultTimeoutSeconds = 120
	defaultMaxTimeout     = 3600
	defaultYieldMs        = 30_000
	defaultMaxOutput      = 200_000
	defaultKillGraceMs    = 2000
	defaultSessionTTL     = 30 * time.Minute
	defaultProcessLimit   = 256
)

// loadSettings reads the shell settings from c and checks them.
func loadSettings(c tool.Config) (settings, error) {
	var cfg Config
	if err := c.Decode(ConfigKey, &cfg); err != nil {
		return settings{}, err
	}
	return cfg.settings()
}

func (c Config) settings() (settings, error) {
	for name, v := range map[string]int{
		"defaultTimeout": c.DefaultTimeout, "maxTimeout": c.MaxTimeout, "yieldMs": c.YieldMs,
		"maxOutputChars": c.MaxOutputChars, "killGraceMs": c.KillGraceMs, "sandbox.processLimit": c.Sandbox.ProcessLimit,
	} {
		if v < 0 {
			return settings{}, &tool.SettingError{Key: ConfigKey + "." + name, Msg: fmt.Sprintf("is %d: it must not be negative", v)}
		}
	}
	s := settings{
		defaultTimeout: seconds(orDefault(c.DefaultTimeout, defaultTimeoutSeconds)),
		maxTimeout:     seconds(orDefault(c.MaxTimeout, defaultMaxTimeout)),
		yield:          time.Duration(orDefault(c.YieldMs, defaultYieldMs)) * time.Millisecond,
		maxOutput:      orDefault(c.MaxOutputChars, defaultMaxOutput),
		killGrace:      time.Duration(orDefault(c.KillGraceMs, defaultKillGraceMs)) * time.Millisecond,
		sessionTTL:     defaultSessionTTL,
		envAllow:       c.EnvAllow,
		shell:          c.Shell,
		sandbox:        c.Sandbox,
		network:        c.Network,
	}
	s.sandbox.ProcessLimit = orDefault(s.sandbox.ProcessLimit, defaultProcessLimit)
	if s.defaultTimeout > s.maxTimeout {
		return settings{}, &tool.SettingError{Key: ConfigKey + ".defaultTimeout", Msg: fmt.Sprintf("is %v, above exec.maxTimeout (%v)", s.defaultTimeout, s.maxTimeout)}
	}
	if c.SessionTTL != "" {
		d, err := time.ParseDuration(c.SessionTTL)
		if err != nil || d <= 0 {
			return settings{}, &tool.SettingError{Key: ConfigKey + ".sessionTtl", Msg: fmt.Sprintf("is %q: want a positive duration such as 30m", c.SessionTTL)}
		}
		s.sessionTTL = d
	}
	for _, p := range c.EnvAllow {
		if _, err := path.Match(p, ""); err != nil {
			return settings{}, &tool.SettingError{Key: ConfigKey + ".envAllow", Msg: fmt.Sprintf("holds %q, which is not a valid pattern (%v)", p, err)}
		}
	}
	if err := c.Network.check(); err != nil {
		return settings{}, err
	}
	return s, nil
}

// check says what is wrong with the network allowlist: a pattern that is
// not one, or a private host that Allow does not name.
func (n NetworkConfig) check() error {
	for _, p := range n.Allow {
		if err := netproxy.CheckDomainPattern(p); err != nil {
			return &tool.SettingError{Key: ConfigKey + ".network.allow", Msg: fmt.Sprintf("holds %v", err)}
		}
	}
	for _, h := range n.AllowPrivate {
		if !n.allows(netproxy.HostOf(h)) {
			return &tool.SettingError{Key: ConfigKey + ".network.allowPrivate", Msg: fmt.Sprintf("holds %q, which exec.network.allow does not name: a private host must be allowed too", h)}
		}
	}
	return nil
}

// allows reports whether a pattern of Allow names host.
func (n NetworkConfig) allows(host string) bool {
	for _, p := range n.Allow {
		if netproxy.MatchDomain(p, host) {
			return true
		}
	}
	return false
}

// CheckSettings checks the values of the settings, and that a sandbox
// they require can be had here: bubblewrap and prlimit are installed.
func (c Config) CheckSettings() error {
	if _, err := c.settings(); err != nil {
		return err
	}
	if c.Sandbox.Required {
		if err := sandbox.Installed(c.Sandbox.Bwrap); err != nil {
			return &tool.SettingError{Key: ConfigKey + ".sandbox.required", Msg: fmt.Sprintf("is true, but %v, so no command could run: install it or set required: false", err)}
		}
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }
