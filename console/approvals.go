package console

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/toolbelt/toolbelt/store"
)

// approvalsShown is the most approvals the page lists, waiting ones first.
const approvalsShown = 100

// approvalsView is the approvals page's data.
type approvalsView struct {
	Waiting, Settled []store.PendingApproval
}

func (c *Console) loadApprovals(r *http.Request, _ User) (any, error) {
	ps, err := c.opts.Store.Pending().List(r.Context(), store.PendingFilter{Limit: approvalsShown})
	if err != nil {
		return nil, err
	}
	var v approvalsView
	for _, p := range ps {
		if p.State == store.PendingWaiting {
			v.Waiting = append(v.Waiting, p)
		} else {
			v.Settled = append(v.Settled, p)
		}
	}
	return v, nil
}

// loadApproval shows one approval, waiting or decided: the page a waiting
// call's caller is pointed to.
func (c *Console) loadApproval(r *http.Request, _ User) (any, error) {
	p, err := c.opts.Store.Pending().Get(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, store.ErrNoPending):
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	case err != nil:
		return nil, err
	case p.State == store.PendingWaiting:
		return approvalsView{Waiting: []store.PendingApproval{p}}, nil
	}
	return approvalsView{Settled: []store.PendingApproval{p}}, nil
}

// decide records an owner's decision on a waiting call: the form's
// decision is once, session, workspace (the grants the terminal offers)
// or deny, with a reason for the model.
func (c *Console) decide(w http.ResponseWriter, r *http.Request, u User) {
	id := r.PathValue("id")
	d := store.PendingDecision{By: u.Name}
	switch r.PostFormValue("decision") {
	case "once":
		d.Allow, d.Grant = true, store.GrantOnce
	case "session":
		d.Allow, d.Grant = true, store.GrantSession
	case "workspace":
		d.Allow, d.Grant = true, store.GrantWorkspace
	case "deny":
		d.Reason = r.PostFormValue("reason")
	default:
		http.Error(w, `bad request: the decision must be "once", "session", "workspace" or "deny"`, http.StatusBadRequest)
		return
	}
	if d.Grant == store.GrantSession || d.Grant == store.GrantWorkspace {
		p, err := c.opts.Store.Pending().Get(r.Context(), id)
		if err == nil && p.Always == "" {
			redirect(w, r, "/approvals", fmt.Sprintf("Nothing was decided: call %s can be allowed once only (%s).", p.Tool, p.NoAlways))
			return
		}
	}
	if err := c.opts.Store.Pending().Decide(r.Context(), id, d); err != nil {
		redirect(w, r, "/approvals", "Nothing was decided: "+err.Error())
		return
	}
	what := "Denied"
	if d.Allow {
		what = "Allowed (" + d.Grant + ")"
	}
	redirect(w, r, "/approvals", fmt.Sprintf("%s: %s.", what, id))
}
