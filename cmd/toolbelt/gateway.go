package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tools/gateway"
)

// serveGateway is the server toolbelt serve is, for the gateway tool.
type serveGateway struct {
	e       *env
	cfg     *config.Config
	started time.Time
	base    string // http://ADDR
	addr    string // where it listens
	// restart asks serve to stop gracefully and run again (Restart).
	restart chan struct{}
	// patching serialises PatchConfig: two patches at once would both
	// read the old file, the second write dropping the first, and their
	// live parts could apply in the other order than the writes.
	patching sync.Mutex
}

// Restart asks the server to stop as on Ctrl-C — calls in flight finish —
// and to start again in the same process, at the same address, with the
// configuration file as it is then.
func (g *serveGateway) Restart(context.Context) (string, error) {
	if g.e.reexec == nil {
		return "", errors.New("this server runs inside another program, not as a toolbelt process: it cannot restart itself")
	}
	select {
	case g.restart <- struct{}{}:
	default: // a restart is already asked for
	}
	return fmt.Sprintf("Restarting: calls in flight have %s to finish, then the server starts again at %s with the configuration file as it is now.", shutdownGrace, g.addr), nil
}

var _ gateway.Gateway = (*serveGateway)(nil)

// Status reports the version, uptime, listeners, channels, paired nodes
// and the jobs and sessions running now.
func (g *serveGateway) Status(ctx context.Context) (gateway.Status, error) {
	s := gateway.Status{Version: buildVersion(), Started: g.started, Uptime: time.Since(g.started).Round(time.Second).String(),
		Listeners: []string{g.base + "/mcp", g.base + "/"}, Channels: []gateway.Channel{}, Nodes: []gateway.Node{}}
	tb := g.e.tb
	if hub := tb.Channels(); hub != nil {
		for _, p := range slices.Sorted(maps.Keys(hub.Handlers())) {
			s.Listeners = append(s.Listeners, g.base+p)
		}
		for _, name := range hub.Names() {
			a, _ := hub.Adapter(name)
			s.Channels = append(s.Channels, gateway.Channel{Name: name, Type: hub.Settings(name).Type, Receive: a.Capabilities().Receive})
		}
	}
	if reg, err := tb.Nodes(); err == nil {
		s.Listeners = append(s.Listeners, g.base+nodes.Path)
		paired, err := reg.Nodes(ctx)
		if err != nil {
			return s, err
		}
		for _, n := range paired {
			s.Nodes = append(s.Nodes, gateway.Node{ID: n.ID, Name: n.Name, Online: n.Online, Gateway: n.Gateway, LastSeen: n.LastSeen})
		}
	}
	if q := tb.Jobs(); q != nil {
		running, err := q.List(ctx, jobs.Filter{Status: "running", Limit: 10000})
		if err != nil {
			return s, err
		}
		s.Jobs.Running = len(running)
	}
	if st := tb.Store(); st != nil {
		running, err := st.Sessions().List(ctx, store.SessionFilter{Status: store.SessionRunning, Limit: 10000})
		if err != nil {
			return s, err
		}
		s.Sessions.Running = len(running)
	}
	return s, nil
}

// configFile returns the path of the server's configuration file.
func (g *serveGateway) configFile() (string, error) {
	if g.cfg.Path == "" {
		return "", errors.New("the server runs without a configuration file: start it with --config FILE (toolbelt init writes one) to read or patch it")
	}
	return g.cfg.Path, nil
}

// Config returns the configuration file's data, secrets masked.
func (g *serveGateway) Config(context.Context) (map[string]any, error) {
	path, err := g.configFile()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v == nil {
		v = map[string]any{}
	}
	mask(v)
	return v, nil
}

// secretKey matches the keys whose values may be secrets written inline;
// the *Env and *File keys name variables and files, and are shown.
var secretKey = regexp.MustCompile(`(?i)(key|secret|token|pass|auth|cookie|credential|private)`)

// namesOnly matches those keys: their values are names, not secrets.
var namesOnly = regexp.MustCompile(`(Env|File)$`)

// wholeVariable is a value that only names an environment variable.
var wholeVariable = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// mask replaces the secrets in v: the values of keys that may hold one,
// every value of headers: and env: maps unless it only names a variable
// (${VAR}), and the passwords and query values of URLs.
func mask(v any) any { return maskIn(v, false) }

func maskIn(v any, all bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && s != "" && !wholeVariable.MatchString(s) &&
				(all || secretKey.MatchString(k) && !namesOnly.MatchString(k)) {
				v[k] = "********"
				continue
			}
			v[k] = maskIn(x, k == "headers" || k == "env")
		}
	case []any:
		for i, x := range v {
			v[i] = maskIn(x, all)
		}
	case string:
		return redactedURL(v)
	}
	return v
}

// redactedURL is s with a URL's password and query values masked.
func redactedURL(s string) string {
	s = redacted(s)
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.RawQuery == "" {
		return s
	}
	q := u.Query()
	for k := range q {
		q[k] = []string{"xxxxx"}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// PatchConfig merges patch into the configuration file, checks the result
// with config check's rules, and only then writes it (the old file kept
// as FILE.bak). Comments of the keys it keeps stay. Then the running
// server takes what it can without a restart — the tool policy and the
// permission modes (toolbelt.LiveConfigKey) — for its next calls; the
// other changed keys take effect when it restarts. Patched says which
// are which.
func (g *serveGateway) PatchConfig(ctx context.Context, patch map[string]any) (gateway.Patched, error) {
	g.patching.Lock()
	defer g.patching.Unlock()
	path, err := g.configFile()
	if err != nil {
		return gateway.Patched{}, err
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return gateway.Patched{}, err
	}
	comments := yaml.CommentMap{}
	var doc yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(old, &doc, yaml.UseOrderedMap(), yaml.CommentToMap(comments)); err != nil {
		return gateway.Patched{}, fmt.Errorf("%s: %w", path, err)
	}
	var changed []string
	doc = mergePatch(doc, patch, "", &changed)
	data, err := yaml.MarshalWithOptions(doc, yaml.WithComment(comments), yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return gateway.Patched{}, err
	}
	if err := config.Check(path, data, g.e.tb.Registry()); err != nil {
		return gateway.Patched{}, fmt.Errorf("the patched configuration does not pass config check, so nothing was written:\n%w", err)
	}
	cfg, err := config.Parse(path, data)
	if err != nil {
		return gateway.Patched{}, err
	}
	apply, err := g.e.tb.PrepareConfig(ctx, cfg)
	if err != nil {
		return gateway.Patched{}, fmt.Errorf("the patched configuration cannot run here, so nothing was written: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return gateway.Patched{}, err
	}
	backup := path + ".bak" // as private as the file
	if err := writeFileMode(backup, old, fi.Mode().Perm()); err != nil {
		return gateway.Patched{}, fmt.Errorf("keeping the backup %s: %w", backup, err)
	}
	if err := writeFileAtomic(path, data); err != nil {
		return gateway.Patched{}, err
	}
	apply()
	p := gateway.Patched{Path: path, Backup: backup, Changed: changed, Live: []string{}, Restart: []string{}}
	for _, k := range changed {
		if toolbelt.LiveConfigKey(k) {
			p.Live = append(p.Live, k)
		} else {
			p.Restart = append(p.Restart, k)
		}
	}
	return p, nil
}

// mergePatch applies the JSON merge patch (RFC 7396) patch to doc, adding
// the dotted path (under at) of each key it sets or removes to changed.
func mergePatch(doc yaml.MapSlice, patch map[string]any, at string, changed *[]string) yaml.MapSlice {
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		p, key := patch[k], strings.TrimPrefix(at+"."+k, ".")
		i := slices.IndexFunc(doc, func(it yaml.MapItem) bool { return fmt.Sprint(it.Key) == k })
		switch sub, isObject := p.(map[string]any); {
		case p == nil:
			if i >= 0 {
				doc = slices.Delete(doc, i, i+1)
				*changed = append(*changed, key)
			}
		case isObject:
			var cur yaml.MapSlice
			if i >= 0 {
				cur, _ = doc[i].Value.(yaml.MapSlice)
			}
			merged := mergePatch(cur, sub, key, changed)
			if i >= 0 {
				doc[i].Value = merged
			} else {
				doc = append(doc, yaml.MapItem{Key: k, Value: merged})
			}
		default:
			if f, ok := p.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				p = int64(f) // JSON has numbers; YAML has integers
			}
			if i >= 0 {
				doc[i].Value = p
			} else {
				doc = append(doc, yaml.MapItem{Key: k, Value: p})
			}
			*changed = append(*changed, key)
		}
	}
	return doc
}
