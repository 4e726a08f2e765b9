// Package gateway is the gateway tool: the owner asks the server it runs
// in (toolbelt serve) for its status and version, reads and patches its
// configuration, and restarts it. The server provides a Gateway; elsewhere the tool is
// unavailable.
package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Name is the tool's name.
const Name = "gateway"

// Gateway is the server the tool manages.
type Gateway interface {
	// Status says how the server is.
	Status(ctx context.Context) (Status, error)
	// Config returns the server's configuration file as data, its secrets
	// masked.
	Config(ctx context.Context) (map[string]any, error)
	// PatchConfig applies a JSON merge patch (RFC 7396) to the
	// configuration file: checked with config check's rules and, only when
	// it passes, written atomically with the previous file kept as a
	// backup. A patch that does not pass is an error and writes nothing.
	// What the running server can take without a restart takes effect
	// for its next calls; Patched says which keys did and which wait for
	// a restart.
	PatchConfig(ctx context.Context, patch map[string]any) (Patched, error)
	// Restart stops the server gracefully (calls in flight finish) and
	// starts it again with the configuration file as it is then; it
	// returns at once, saying what happens.
	Restart(ctx context.Context) (string, error)
}

// Status is what the status action reports.
type Status struct {
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Uptime  string    `json:"uptime"`
	// Listeners are the addresses and paths the server takes requests at.
	Listeners []string `json:"listeners"`
	// Channels are the configured channels (type and what they do).
	Channels []Channel `json:"channels"`
	// Nodes are the paired nodes, online or not.
	Nodes []Node `json:"nodes"`
	// Jobs and Sessions count those running now.
	Jobs     Count `json:"jobs"`
	Sessions Count `json:"sessions"`
}

// Node is one paired node in Status.
type Node struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Online bool   `json:"online"`
	// Gateway is the gateway that holds the node's connection.
	Gateway  string    `json:"gateway,omitempty"`
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

// Channel is one configured channel in Status.
type Channel struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Receive bool   `json:"receive"`
}

// Count counts jobs or sessions.
type Count struct {
	Running int `json:"running"`
}

// Patched says what a patch changed.
type Patched struct {
	// Path is the configuration file written; Backup the previous file.
	Path   string `json:"path"`
	Backup string `json:"backup"`
	// Changed are the keys the patch changed (dotted paths).
	Changed []string `json:"changed"`
	// Live took effect at once; Restart take effect after a restart.
	Live    []string `json:"live"`
	Restart []string `json:"restart"`
}

// Service is the key of the gateway a tool context carries.
var Service = tool.NewService[Gateway]()

// Args are the tool's arguments.
type Args struct {
	Action string         `json:"action" enum:"status,version,config.get,config.patch,restart" jsonschema:"status: version, uptime, listeners, channels, nodes, running jobs and sessions. version: the server's version. config.get: the configuration, secrets masked. config.patch: change the configuration with a JSON merge patch (patch), checked before it is written; says which keys took effect and which need a restart. restart: stop gracefully (calls in flight finish) and start again with the configuration file as it is then."`
	Patch  map[string]any `json:"patch,omitempty" jsonschema:"config.patch: a JSON merge patch (RFC 7396) of the configuration: objects merge, null removes a key, anything else replaces it. Example: {\"channels\":{\"ops\":{\"rateLimit\":5}}}."`
}

const description = "Manage the Toolbelt server this runs in (owner only): its status and version, its configuration (read with secrets masked, or patched), and a graceful restart."

// Register adds gateway to reg: owner-only, unavailable outside a server.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(factory, tool.Meta{
		ID: Name, Label: "Gateway", Description: description, OwnerOnly: true,
		Risk: tool.RiskMedium, Source: tool.SourceCore,
	})
}

func factory(tc *tool.Context) (*tool.Tool, error) {
	g, ok := Service.Get(tc)
	if !ok {
		return nil, &tool.NotHere{Reason: "the gateway tool manages a running server: it is offered by toolbelt serve"}
	}
	t, err := tool.New(Name, description, func(ctx context.Context, in Args, _ tool.Invocation) (tool.Result, error) {
		return run(ctx, g, in)
	})
	return &t, err
}

func run(ctx context.Context, g Gateway, in Args) (tool.Result, error) {
	if in.Action != "config.patch" && in.Patch != nil {
		return tool.Result{}, tool.InputErrorf("patch goes with action config.patch, not %s", in.Action)
	}
	switch in.Action {
	case "status":
		s, err := g.Status(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(s)
	case "version":
		s, err := g.Status(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Text(s.Version), nil
	case "config.get":
		c, err := g.Config(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(c)
	case "config.patch":
		if len(in.Patch) == 0 {
			return tool.Result{}, tool.InputErrorf(`config.patch needs patch: a JSON merge patch of the configuration, e.g. {"channels":{"ops":{"rateLimit":5}}}`)
		}
		// A patch can widen the policy the caller itself runs under (its
		// live keys at once): a person approves the exact patch, every time.
		patch, _ := json.Marshal(in.Patch)
		if reply := tool.Ask(ctx, tool.Question{
			Message: "change the server's configuration file with this JSON merge patch: " + string(patch),
			Reason:  "the gateway tool's config.patch rewrites toolbelt.yaml, which holds the policy",
			Action:  "gateway:config.patch:" + string(patch),
			// Not bypass mode, nor a timeout: the patch can loosen the
			// policy that confines bypass mode itself.
			PersonOnly: true,
		}); !reply.Allow {
			return tool.Errorf("Not patched: changing the configuration needs a person's approval of the patch, and it was not given (%s).", reply.Answer), nil
		}
		p, err := g.PatchConfig(ctx, in.Patch)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(p)
	case "restart":
		msg, err := g.Restart(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Text(msg), nil
	}
	return tool.Result{}, tool.InputErrorf("action is %q: use one of status, version, config.get, config.patch, restart", in.Action)
}
