package toolbelt

import (
	"context"

	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// Nodes returns the registry of the nodes paired with the gateways on the
// root's store, which the nodes tool and toolbelt nodes use; a gateway
// (toolbelt serve) serves their connections with a nodes.Hub over it. A
// ToolsOnly root opens its store for it.
func (tb *Toolbelt) Nodes() (*nodes.Registry, error) {
	st := tb.st
	if st == nil {
		if tb.lazyStore == nil {
			return nil, ErrToolsOnly
		}
		var err error
		if st, err = tb.lazyStore(); err != nil {
			return nil, err
		}
	}
	tb.nodesOnce.Do(func() { tb.nodes = nodes.NewRegistry(st, nodes.Options{}) })
	return tb.nodes, nil
}

// lazyNodes is the nodes tool's service: the root's nodes, whose store a
// ToolsOnly root opens on first use.
type lazyNodes struct{ tb *Toolbelt }

func (l lazyNodes) get() (*nodes.Registry, error) { return l.tb.Nodes() }

func (l lazyNodes) Nodes(ctx context.Context) ([]nodetool.Node, error) {
	r, err := l.get()
	if err != nil {
		return nil, err
	}
	return r.Nodes(ctx)
}

func (l lazyNodes) Node(ctx context.Context, ref string) (nodetool.Node, error) {
	r, err := l.get()
	if err != nil {
		return nodetool.Node{}, err
	}
	return r.Node(ctx, ref)
}

func (l lazyNodes) Pending(ctx context.Context) ([]nodetool.Pairing, error) {
	r, err := l.get()
	if err != nil {
		return nil, err
	}
	return r.Pending(ctx)
}

func (l lazyNodes) Approve(ctx context.Context, code, by string) (nodetool.Pairing, error) {
	r, err := l.get()
	if err != nil {
		return nodetool.Pairing{}, err
	}
	return r.Approve(ctx, code, by)
}

func (l lazyNodes) Reject(ctx context.Context, code, by string) (nodetool.Pairing, error) {
	r, err := l.get()
	if err != nil {
		return nodetool.Pairing{}, err
	}
	return r.Reject(ctx, code, by)
}

func (l lazyNodes) Invoke(ctx context.Context, req nodetool.Request, progress func(string)) (tool.Result, error) {
	r, err := l.get()
	if err != nil {
		return tool.Result{}, err
	}
	return r.Invoke(ctx, req, progress)
}
