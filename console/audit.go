package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
)

// auditShown is the most records the audit page lists.
const auditShown = 500

// auditView is the audit page's data.
type auditView struct {
	Tool, Session, Call, Since string
	Records                    []audit.Record
	// Verified is what verifying the chain found, when it was asked for.
	Verified *verification
	// Head is the saved head verification checks against, when one is
	// configured.
	Head string
}

// verification is the outcome of verifying the chain.
type verification struct {
	OK      bool
	Message string
	// Duplicates are records that repeat an earlier one.
	Duplicates []auditlog.Duplicate
}

func (c *Console) loadAudit(r *http.Request, _ User) (any, error) {
	q := r.URL.Query()
	v := auditView{Tool: q.Get("tool"), Session: q.Get("session"), Call: q.Get("call"), Since: q.Get("since"), Head: c.opts.AuditHead}
	f := auditlog.Filter{Tool: v.Tool, Session: v.Session, CallID: v.Call, Limit: auditShown}
	if v.Since != "" {
		d, err := time.ParseDuration(v.Since)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("since %q is not a duration: use e.g. 90s, 30m or 2h", v.Since)
		}
		f.Since = time.Now().Add(-d)
	}
	records, err := c.opts.Audit.List(r.Context(), f)
	if err != nil {
		return nil, err
	}
	for i := len(records) - 1; i >= 0; i-- { // newest first
		v.Records = append(v.Records, records[i])
	}
	if q.Get("verify") != "" {
		v.Verified = c.verify(r)
	}
	return v, nil
}

// verify verifies the audit chain — against the saved head
// (Options.AuditHead) when one is configured, as toolbelt audit verify
// --head does. It changes nothing: the page does it on GET (?verify=1).
func (c *Console) verify(r *http.Request) *verification {
	if c.opts.AuditHead == "" {
		sum, err := c.opts.Audit.Verify(r.Context())
		return verified(sum, err, "")
	}
	h, err := auditlog.ParseHead(c.opts.AuditHead)
	if err != nil {
		return verified(auditlog.Summary{}, fmt.Errorf("the saved head: %w", err), "")
	}
	sum, err := c.opts.Audit.VerifyHead(r.Context(), h)
	return verified(sum, err, c.opts.AuditHead)
}

// verified says what verifying found, as toolbelt audit verify says it.
func verified(sum auditlog.Summary, err error, head string) *verification {
	var ce *auditlog.ChainError
	switch {
	case errors.As(err, &ce):
		return &verification{Message: fmt.Sprintf("Chain broken at record %d: %s.", ce.Seq, ce.Problem)}
	case err != nil:
		return &verification{Message: "Cannot verify: " + err.Error() + "."}
	}
	msg := strconv.FormatInt(sum.Records, 10) + " records, chain intact"
	if sum.Records > 0 {
		msg += fmt.Sprintf(" (head %d:%s)", sum.Records, sum.Head)
	}
	if head != "" {
		msg += ", and it holds the saved head's record unchanged (" + head + ")"
	}
	if len(sum.Duplicates) > 0 {
		return &verification{Message: msg + fmt.Sprintf(", but %d records repeat an earlier one (a call recorded twice).", len(sum.Duplicates)), Duplicates: sum.Duplicates}
	}
	return &verification{OK: true, Message: msg + "."}
}
