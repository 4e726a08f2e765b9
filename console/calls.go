package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/textdiff"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/undo"
)

// Bounds of the calls page.
const (
	// callsShown is the most calls the page lists.
	callsShown = 200
	// callsScanned is the most audit records read to find callsShown that
	// match filters the log cannot apply itself (agent, decision).
	callsScanned = 5000
)

// CallRow is one call as the calls page lists it.
type CallRow struct {
	// Seq is its audit record's place in the log; 0 for a call still
	// running.
	Seq                  int64
	CallID, Tool         string
	Args                 string // redacted
	Effect               string // what it acted on, as its preview says
	Agent, Session       string
	Channel, Principal   string
	Workspace            string
	Decision, ErrorClass string
	Time                 time.Time
	Duration             time.Duration
	// Running says the call has not ended yet.
	Running bool
	// Preview is the start of its result, when the console saw it.
	Preview string
}

// Outcome says how the call ended, for people.
func (r CallRow) Outcome() string {
	switch {
	case r.Running:
		return "running"
	case r.ErrorClass != "":
		return r.ErrorClass
	}
	return "ok"
}

// rowOf is the row of a call's audit record.
func rowOf(r audit.Record) CallRow {
	return CallRow{
		Seq: r.Seq, CallID: r.CallID, Tool: r.Tool, Args: string(r.Arguments), Effect: r.Effect, Agent: r.AgentID, Session: r.SessionKey,
		Channel: r.Channel, Principal: r.Principal, Workspace: r.Workspace, Decision: r.Decision(), ErrorClass: errorClass(r),
		Time: r.Time, Duration: r.Duration,
	}
}

// errorClass is the record's error class, "error" when it has none.
func errorClass(r audit.Record) string {
	if !r.IsError {
		return ""
	}
	if r.ErrorClass == "" {
		return "error"
	}
	return r.ErrorClass
}

// callFilter is what the calls page's query string selects.
type callFilter struct {
	Session, Agent, Tool, Decision string
}

func filterOf(q url.Values) callFilter {
	return callFilter{Session: q.Get("session"), Agent: q.Get("agent"), Tool: q.Get("tool"), Decision: q.Get("decision")}
}

// log is the part of the filter the audit log applies.
func (f callFilter) log() auditlog.Filter {
	l := auditlog.Filter{Tool: f.Tool, Session: f.Session, Limit: callsShown}
	if f.Agent != "" || f.Decision != "" {
		l.Limit = callsScanned
	}
	return l
}

// match reports whether a row passes the filter.
func (f callFilter) match(r CallRow) bool {
	return (f.Session == "" || r.Session == f.Session) && (f.Agent == "" || r.Agent == f.Agent) &&
		(f.Tool == "" || r.Tool == f.Tool) && (f.Decision == "" || r.Decision == f.Decision)
}

// rows are the rows of the calls among records that pass the filter.
func (f callFilter) rows(records []audit.Record) []CallRow {
	var rows []CallRow
	for _, rec := range records {
		if row := rowOf(rec); rec.Kind == "" && f.match(row) {
			rows = append(rows, row)
		}
	}
	return rows
}

// Query is the filter as a query string.
func (f callFilter) Query() string { return f.values().Encode() }

// values is the filter as query values.
func (f callFilter) values() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"session": f.Session, "agent": f.Agent, "tool": f.Tool, "decision": f.Decision} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// callsView is the calls page's data.
type callsView struct {
	Filter callFilter
	Rows   []CallRow
	// Before is the place the page lists the calls before (the query's
	// before); 0 for the newest.
	Before int64
	// After is the newest record's place: the live rows start after it.
	After int64
	// Events is the URL of the live rows; "" on a page of older calls.
	Events string
	// Older is the URL of the page of the calls before these; "" when
	// there are none.
	Older string
	// Decisions are the decisions the filter offers.
	Decisions []string
}

// decisions are the values of audit.Record.Decision a person filters by.
var decisions = []string{"allow", "ask", "allow-once", "allow-session", "allow-workspace", "allowed-before", "deny", "timeout", "unconfirmed"}

func (c *Console) loadCalls(r *http.Request, _ User) (any, error) {
	f := filterOf(r.URL.Query())
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	p, err := c.calls(r, f, max(before, 0))
	if err != nil {
		return nil, err
	}
	slices.Reverse(p.rows)
	v := callsView{Filter: f, Rows: p.rows, Before: before, After: p.newest, Decisions: decisions}
	if before <= 0 {
		v.Events = "/calls/events?" + f.Query()
	}
	if p.older > 0 {
		q := f.values()
		q.Set("before", strconv.FormatInt(p.older, 10))
		v.Older = "/calls?" + q.Encode()
	}
	return v, nil
}

// callsPage is a page of the calls list.
type callsPage struct {
	rows []CallRow // oldest first
	// newest is the place of the newest record read; older the place the
	// next page's calls are before, 0 when no record is older.
	newest, older int64
}

// calls returns the newest callsShown calls f selects before the record of
// place before (0: the newest of all).
func (c *Console) calls(r *http.Request, f callFilter, before int64) (callsPage, error) {
	lf := f.log()
	lf.Before = before
	records, err := c.opts.Audit.List(r.Context(), lf)
	if err != nil || len(records) == 0 {
		return callsPage{}, err
	}
	p := callsPage{rows: f.rows(records), newest: records[len(records)-1].Seq}
	if len(records) == lf.Limit { // older records may select more
		p.older = records[0].Seq
	}
	if len(p.rows) > callsShown {
		p.rows = p.rows[len(p.rows)-callsShown:]
		p.older = p.rows[0].Seq
	}
	c.withPreviews(p.rows)
	return p, nil
}

// callView is a call's page's data.
type callView struct {
	CallID string
	// Records are the call's audit records (one, unless an id was used
	// twice).
	Records []audit.Record
	// Row sums up the last of them.
	Row CallRow
	// Changes are its file changes, by workspace, still to undo.
	Changes []wsChanges
	// Pending is the approval it waited for in the console, if it did.
	Pending *store.PendingApproval
	// Result is its result, when the console kept it (keptBytes).
	Result *invoke.EventResult
}

// wsChanges are a call's file changes in one workspace, and their diff.
type wsChanges struct {
	Workspace string
	Files     []string
	Diff      string
}

func (c *Console) loadCall(r *http.Request, _ User) (any, error) {
	id := r.PathValue("id")
	ctx := r.Context()
	records, err := c.opts.Audit.List(ctx, auditlog.Filter{CallID: id})
	if err != nil {
		return nil, err
	}
	v := callView{CallID: id, Records: records, Result: c.results.get(id)}
	if v.Pending, err = c.pendingOf(r, id); err != nil {
		return nil, err
	}
	if v.Changes, err = c.changes(r, id); err != nil {
		return nil, err
	}
	if len(records) == 0 && v.Pending == nil && len(v.Changes) == 0 {
		return nil, fmt.Errorf("%w: no call %s in the audit log", ErrNotFound, id)
	}
	if n := len(records); n > 0 {
		v.Row = rowOf(records[n-1])
	}
	return v, nil
}

// pendingOf returns the approval a call waited for in the console, the
// latest when it asked more than once; nil when it did not.
func (c *Console) pendingOf(r *http.Request, callID string) (*store.PendingApproval, error) {
	ps, err := c.opts.Store.Pending().List(r.Context(), store.PendingFilter{})
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.CallID == callID {
			return &p, nil
		}
	}
	return nil, nil
}

// changes returns the file changes of a call that are still recorded, in
// each workspace, with their diff.
func (c *Console) changes(r *http.Request, callID string) ([]wsChanges, error) {
	wss, err := c.opts.Journal.Workspaces(r.Context(), callID)
	if err != nil {
		return nil, err
	}
	var out []wsChanges
	for _, ws := range wss {
		fcs, err := c.opts.Journal.In(ws).Changes(r.Context(), callID)
		if err != nil {
			return nil, err
		}
		w := wsChanges{Workspace: ws}
		var files []textdiff.File
		for _, fc := range fcs {
			w.Files = append(w.Files, fc.Path)
			f := textdiff.File{Before: string(fc.Before), After: string(fc.After), Mode: fc.Mode}
			if fc.Existed {
				f.OldPath = fc.Path
			}
			if fc.Exists {
				f.NewPath = fc.Path
			}
			files = append(files, f)
		}
		w.Diff = textdiff.Unified(files...)
		out = append(out, w)
	}
	return out, nil
}

// undo takes back a call's file changes in the workspace the form names
// (one of those its changes are recorded in).
func (c *Console) undo(w http.ResponseWriter, r *http.Request, u User) {
	id := r.PathValue("id")
	back := "/calls/" + url.PathEscape(id)
	wss, err := c.opts.Journal.Workspaces(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	ws := r.PostFormValue("workspace")
	if !slices.Contains(wss, ws) {
		redirect(w, r, back, fmt.Sprintf("Nothing was undone: call %s has no file changes recorded in %q.", id, ws))
		return
	}
	report, err := c.opts.Undo(r.Context(), ws, id, u.Name)
	var conflict *undo.ConflictError
	switch {
	case errors.As(err, &conflict), errors.Is(err, undo.ErrNothingToUndo):
		redirect(w, r, back, "Nothing was undone: "+err.Error())
	case err != nil:
		c.log.Error("console undo", "call", id, "err", err)
		redirect(w, r, back, "The undo failed: "+err.Error())
	default:
		redirect(w, r, back, "Undone: "+report.String())
	}
}

// caller describes who made a call, for people.
func caller(agent, session, channel, principal string) string {
	var parts []string
	for _, p := range [][2]string{{"agent", agent}, {"session", session}, {"channel", channel}, {"principal", principal}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, " · ")
}
