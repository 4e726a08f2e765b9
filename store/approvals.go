package store

import (
	"context"
	"fmt"
	"time"
)

// Approvals keeps the "allow always" answers of one workspace: the
// fingerprints of the exact actions a person allowed for good. They outlive
// the process, so a person who said "always" is not asked again tomorrow.
type Approvals struct {
	s         *Store
	workspace string
}

// Approval is one remembered "allow always" answer.
type Approval struct {
	Fingerprint string    `json:"fingerprint"`
	Tool        string    `json:"tool"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
}

// Approvals returns the approvals of the workspace (an absolute directory,
// or any other name that identifies where calls run).
func (s *Store) Approvals(workspace string) *Approvals {
	return &Approvals{s: s, workspace: workspace}
}

// Approved reports whether the action with this fingerprint was allowed
// always in the workspace.
func (a *Approvals) Approved(ctx context.Context, fingerprint string) (bool, error) {
	var n int
	err := a.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, "SELECT COUNT(*) FROM approvals WHERE workspace = ? AND fingerprint = ?", a.workspace, fingerprint).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("reading approvals: %w", err)
	}
	return n > 0, nil
}

// Approve remembers that by allowed the action with this fingerprint, a
// call of tool, always.
func (a *Approvals) Approve(ctx context.Context, fingerprint, tool, by string) error {
	err := a.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM approvals WHERE workspace = ? AND fingerprint = ?", a.workspace, fingerprint); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO approvals (workspace, fingerprint, tool, approved_by, created_ns) VALUES (?, ?, ?, ?, ?)",
			a.workspace, fingerprint, tool, by, a.s.now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("recording an approval: %w", err)
	}
	return nil
}

// List returns the workspace's approvals, oldest first.
func (a *Approvals) List(ctx context.Context) ([]Approval, error) {
	out, err := readAll(ctx, a.s, func(row scanner) (Approval, error) {
		var ap Approval
		var ns int64
		err := row.Scan(&ap.Fingerprint, &ap.Tool, &ap.By, &ns)
		ap.At = time.Unix(0, ns)
		return ap, err
	}, "SELECT fingerprint, tool, approved_by, created_ns FROM approvals WHERE workspace = ? ORDER BY created_ns, fingerprint", a.workspace)
	if err != nil {
		return nil, fmt.Errorf("listing approvals: %w", err)
	}
	return out, nil
}

// Revoke forgets the workspace's approvals of tool, or all of them when tool
// is "", and returns how many it forgot.
func (a *Approvals) Revoke(ctx context.Context, tool string) (int64, error) {
	var n int64
	err := a.s.Write(ctx, func(tx *Tx) error {
		q, args := "DELETE FROM approvals WHERE workspace = ?", []any{a.workspace}
		if tool != "" {
			q, args = q+" AND tool = ?", append(args, tool)
		}
		res, err := tx.Exec(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("revoking approvals: %w", err)
	}
	return n, nil
}

// SavedRule is an allow rule a person saved for the workspace from an
// approval ("exec(npm run test:*)"): the calls it matches run there
// without asking, until it is revoked.
type SavedRule struct {
	Rule string    `json:"rule"`
	Tool string    `json:"tool"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
}

// SaveRule keeps rule, an allow rule for calls of tool, for the workspace,
// as by saved it. Saving a rule the workspace has keeps the first.
func (a *Approvals) SaveRule(ctx context.Context, rule, tool, by string) error {
	err := a.s.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM saved_rules WHERE workspace = ? AND rule = ?", a.workspace, rule).Scan(&n); err != nil || n > 0 {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO saved_rules (workspace, rule, tool, saved_by, created_ns) VALUES (?, ?, ?, ?, ?)",
			a.workspace, rule, tool, by, a.s.now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("saving a rule: %w", err)
	}
	return nil
}

// SavedRules returns the workspace's saved rules, oldest first.
func (a *Approvals) SavedRules(ctx context.Context) ([]SavedRule, error) {
	out, err := readAll(ctx, a.s, func(row scanner) (SavedRule, error) {
		var r SavedRule
		var ns int64
		err := row.Scan(&r.Rule, &r.Tool, &r.By, &ns)
		r.At = time.Unix(0, ns)
		return r, err
	}, "SELECT rule, tool, saved_by, created_ns FROM saved_rules WHERE workspace = ? ORDER BY created_ns, rule", a.workspace)
	if err != nil {
		return nil, fmt.Errorf("listing saved rules: %w", err)
	}
	return out, nil
}

// Rules returns the text of the workspace's saved rules, for the pipeline
// to apply (see invoke.RuleStore).
func (a *Approvals) Rules(ctx context.Context) ([]string, error) {
	saved, err := a.SavedRules(ctx)
	out := make([]string, len(saved))
	for i, r := range saved {
		out[i] = r.Rule
	}
	return out, err
}

// RevokeRules forgets the workspace's saved rules — the one whose text is
// rule, those of a tool, or all of them when what is "" — and returns how
// many it forgot.
func (a *Approvals) RevokeRules(ctx context.Context, what string) (int64, error) {
	var n int64
	err := a.s.Write(ctx, func(tx *Tx) error {
		q, args := "DELETE FROM saved_rules WHERE workspace = ?", []any{a.workspace}
		if what != "" {
			q, args = q+" AND (rule = ? OR tool = ?)", append(args, what, what)
		}
		res, err := tx.Exec(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("revoking saved rules: %w", err)
	}
	return n, nil
}
