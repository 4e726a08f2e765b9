package console

import (
	"context"
	"fmt"
	"net/http"

	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// Nodes are the nodes paired with the gateways of the store, and their
// pairing requests (package nodes' registry).
type Nodes interface {
	Nodes(ctx context.Context) ([]nodetool.Node, error)
	Pending(ctx context.Context) ([]nodetool.Pairing, error)
	Approve(ctx context.Context, code, by string) (nodetool.Pairing, error)
	Reject(ctx context.Context, code, by string) (nodetool.Pairing, error)
	// Remove unpairs the node whose id or name is ref.
	Remove(ctx context.Context, ref string) (nodetool.Node, error)
}

// nodesView is the Nodes page: the paired nodes and the requests waiting.
type nodesView struct {
	Nodes   []nodetool.Node
	Pending []nodetool.Pairing
}

func (c *Console) loadNodes(r *http.Request, _ User) (any, error) {
	var v nodesView
	if c.opts.Nodes == nil {
		return v, nil
	}
	var err error
	if v.Nodes, err = c.opts.Nodes.Nodes(r.Context()); err != nil {
		return nil, err
	}
	v.Pending, err = c.opts.Nodes.Pending(r.Context())
	return v, err
}

// approveNode pairs the node whose request has the path's code, as
// toolbelt nodes approve does, on behalf of the console's user.
func (c *Console) approveNode(w http.ResponseWriter, r *http.Request, u User) {
	c.answerPairing(w, r, u, true)
}

// rejectNode refuses the request with the path's code.
func (c *Console) rejectNode(w http.ResponseWriter, r *http.Request, u User) {
	c.answerPairing(w, r, u, false)
}

// answerPairing approves or rejects the request of the path's code and
// goes back to the Nodes page saying how it went.
func (c *Console) answerPairing(w http.ResponseWriter, r *http.Request, u User, approve bool) {
	if c.opts.Nodes == nil {
		redirect(w, r, "/nodes", "Nothing was done: this server has no nodes.")
		return
	}
	answer, done := c.opts.Nodes.Reject, "Rejected"
	if approve {
		answer, done = c.opts.Nodes.Approve, "Approved"
	}
	p, err := answer(r.Context(), r.PathValue("code"), "console:"+u.Name)
	if err != nil {
		redirect(w, r, "/nodes", "Nothing was done: "+err.Error())
		return
	}
	redirect(w, r, "/nodes", fmt.Sprintf("%s the pairing of node %s (code %s).", done, p.Name, p.Code))
}

// removeNode unpairs the node of the path's id, as toolbelt nodes remove
// does: it must pair again.
func (c *Console) removeNode(w http.ResponseWriter, r *http.Request, _ User) {
	if c.opts.Nodes == nil {
		redirect(w, r, "/nodes", "Nothing was done: this server has no nodes.")
		return
	}
	n, err := c.opts.Nodes.Remove(r.Context(), r.PathValue("id"))
	if err != nil {
		redirect(w, r, "/nodes", "Nothing was done: "+err.Error())
		return
	}
	redirect(w, r, "/nodes", fmt.Sprintf("Removed node %s (%s): it must pair again to connect.", n.Name, n.ID))
}
