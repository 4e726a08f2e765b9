package store_test

import (
	"context"
	"testing"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

func TestApprovals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := st.Approvals("/ws/a"), st.Approvals("/ws/b")
		if ok, err := a.Approved(ctx, "fp1"); err != nil || ok {
			t.Fatalf("approved before anyone said so: %v %v", ok, err)
		}
		if err := a.Approve(ctx, "fp1", "exec", "terminal (ada)"); err != nil {
			t.Fatal(err)
		}
		if err := a.Approve(ctx, "fp1", "exec", "terminal (ada)"); err != nil { // twice is once
			t.Fatal(err)
		}
		if err := a.Approve(ctx, "fp2", "write", "terminal (ada)"); err != nil {
			t.Fatal(err)
		}
		if ok, err := a.Approved(ctx, "fp1"); err != nil || !ok {
			t.Fatalf("not approved: %v %v", ok, err)
		}
		// Nothing crosses from one workspace to another.
		if ok, err := b.Approved(ctx, "fp1"); err != nil || ok {
			t.Fatalf("approval crossed workspaces: %v %v", ok, err)
		}
		list, err := a.List(ctx)
		if err != nil || len(list) != 2 || list[0].Tool != "exec" || list[0].By != "terminal (ada)" || list[0].At.IsZero() {
			t.Fatalf("%v %+v", err, list)
		}
		if n, err := a.Revoke(ctx, "exec"); err != nil || n != 1 {
			t.Fatalf("revoke exec: %d %v", n, err)
		}
		if ok, _ := a.Approved(ctx, "fp1"); ok {
			t.Error("still approved after revoke")
		}
		if n, err := a.Revoke(ctx, ""); err != nil || n != 1 {
			t.Fatalf("revoke all: %d %v", n, err)
		}
	})
}

func TestSavedRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, b := st.Approvals("/ws/a"), st.Approvals("/ws/b")
		for _, r := range []string{"exec(npm run test:*)", "exec(npm run test:*)", "edit(src/**)"} { // twice is once
			tool := "exec"
			if r == "edit(src/**)" {
				tool = "edit"
			}
			if err := a.SaveRule(ctx, r, tool, "terminal (ada)"); err != nil {
				t.Fatal(err)
			}
		}
		list, err := a.SavedRules(ctx)
		if err != nil || len(list) != 2 || list[0].Rule != "exec(npm run test:*)" || list[0].Tool != "exec" || list[0].By != "terminal (ada)" || list[0].At.IsZero() {
			t.Fatalf("%v %+v", err, list)
		}
		// Nothing crosses from one workspace to another.
		if rules, err := b.Rules(ctx); err != nil || len(rules) != 0 {
			t.Fatalf("rules crossed workspaces: %v %v", rules, err)
		}
		if n, err := a.RevokeRules(ctx, "exec(npm run test:*)"); err != nil || n != 1 {
			t.Fatalf("revoke one rule: %d %v", n, err)
		}
		if rules, err := a.Rules(ctx); err != nil || len(rules) != 1 || rules[0] != "edit(src/**)" {
			t.Fatalf("after revoking one: %v %v", rules, err)
		}
		if n, err := a.RevokeRules(ctx, "edit"); err != nil || n != 1 {
			t.Fatalf("revoke a tool's rules: %d %v", n, err)
		}
	})
}
