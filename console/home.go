package console

import (
	"net/http"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/store"
)

// homeView is the home page's data: what is served where, what waits, and
// the latest calls.
type homeView struct {
	// Endpoint is the MCP endpoint's URL; Bearer says clients must send a
	// token.
	Endpoint string
	Bearer   bool
	Waiting  int
	Recent   []CallRow
}

// homeRecent is how many calls the home page shows.
const homeRecent = 5

func (c *Console) loadHome(r *http.Request, _ User) (any, error) {
	v := homeView{Endpoint: c.opts.Endpoint, Bearer: !c.auth.open}
	waiting, err := c.opts.Store.Pending().List(r.Context(), store.PendingFilter{State: store.PendingWaiting})
	if err != nil {
		return nil, err
	}
	v.Waiting = len(waiting)
	records, err := c.opts.Audit.List(r.Context(), auditlog.Filter{Limit: homeRecent})
	if err != nil {
		return nil, err
	}
	for i := len(records) - 1; i >= 0; i-- {
		if records[i].Kind == "" {
			v.Recent = append(v.Recent, rowOf(records[i]))
		}
	}
	c.withPreviews(v.Recent)
	return v, nil
}
