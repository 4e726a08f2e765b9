package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// The keys of the web tools' settings in [tool.Config] (tools.web_fetch and
// tools.web_search in toolbelt.yaml).
const (
	FetchConfigKey  = "web_fetch"
	SearchConfigKey = "web_search"
)

// FetchConfig is web_fetch's settings. Zero fields take the defaults below.
//
//	web_fetch:
//	  allowHosts: ["docs.internal", "127.0.0.1:8080"]  # reachable although private
//	  maxRedirects: 5
//	  maxResponseBytes: 5242880   # read at most this much of a body
//	  timeoutSeconds: 30          # the whole fetch, redirects included
//	  maxChars: 30000             # default of the maxChars argument
//	  cacheTtl: 15m               # 0s turns the cache off
//	  userAgent: "Toolbelt/1.0 (+https://github.com/toolbelt/toolbelt)"
type FetchConfig struct {
	AllowHosts       []string `json:"allowHosts,omitempty"`
	MaxRedirects     int      `json:"maxRedirects,omitempty"`
	MaxResponseBytes int      `json:"maxResponseBytes,omitempty"`
	TimeoutSeconds   int      `json:"timeoutSeconds,omitempty"`
	MaxChars         int      `json:"maxChars,omitempty"`
	CacheTTL         string   `json:"cacheTtl,omitempty"`
	UserAgent        string   `json:"userAgent,omitempty"`
}

// The defaults of web_fetch.
const (
	DefaultMaxRedirects     = 5
	DefaultMaxResponseBytes = 5 << 20
	DefaultFetchTimeout     = 30 * time.Second
	DefaultMaxChars         = 30_000 // under the pipeline's 40,000, wrapper included
	DefaultCacheTTL         = 15 * time.Minute
	DefaultUserAgent        = "Toolbelt/1.0 (+https://github.com/toolbelt/toolbelt; AI agent web_fetch)"
)

type fetchSettings struct {
	allowHosts   []string
	maxRedirects int
	maxBytes     int
	timeout      time.Duration
	maxChars     int
	cacheTTL     time.Duration
	userAgent    string
}

func loadFetchSettings(c tool.Config) (fetchSettings, error) {
	var fc FetchConfig
	if err := decodeStrict(c, FetchConfigKey, &fc); err != nil {
		return fetchSettings{}, err
	}
	return fc.settings()
}

// CheckSettings checks the values of the settings.
func (fc FetchConfig) CheckSettings() error {
	_, err := fc.settings()
	return err
}

// settings applies the defaults to fc, checking its values.
func (fc FetchConfig) settings() (fetchSettings, error) {
	for name, v := range map[string]int{"maxRedirects": fc.MaxRedirects, "maxResponseBytes": fc.MaxResponseBytes, "timeoutSeconds": fc.TimeoutSeconds, "maxChars": fc.MaxChars} {
		if v < 0 {
			return fetchSettings{}, &tool.SettingError{Key: FetchConfigKey + "." + name, Msg: fmt.Sprintf("is %d: it must not be negative", v)}
		}
	}
	s := fetchSettings{
		allowHosts:   fc.AllowHosts,
		maxRedirects: orDefault(fc.MaxRedirects, DefaultMaxRedirects),
		maxBytes:     orDefault(fc.MaxResponseBytes, DefaultMaxResponseBytes),
		timeout:      time.Duration(orDefault(fc.TimeoutSeconds, int(DefaultFetchTimeout/time.Second))) * time.Second,
		maxChars:     orDefault(fc.MaxChars, DefaultMaxChars),
		cacheTTL:     DefaultCacheTTL,
		userAgent:    fc.UserAgent,
	}
	if s.userAgent == "" {
		s.userAgent = DefaultUserAgent
	}
	var err error
	if s.cacheTTL, err = cacheTTL(FetchConfigKey, fc.CacheTTL); err != nil {
		return fetchSettings{}, err
	}
	return s, nil
}

// cacheTTL reads the cacheTtl setting of the tool key (DefaultCacheTTL
// when empty).
func cacheTTL(key, v string) (time.Duration, error) {
	if v == "" {
		return DefaultCacheTTL, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, &tool.SettingError{Key: key + ".cacheTtl", Msg: fmt.Sprintf("is %q: want a duration such as 15m (0s turns the cache off)", v)}
	}
	return d, nil
}

// decodeStrict copies the settings under key into v, refusing keys v does
// not have, so a misspelled setting is reported instead of ignored.
func decodeStrict(c tool.Config, key string, v any) error {
	raw, ok := c[key]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s settings: %w", key, err)
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
