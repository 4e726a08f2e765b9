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
