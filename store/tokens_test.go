package store_test

import (
	"context"
	"testing"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// TestTokens: a server's sealed value is kept, replaced, read back and
// forgotten, apart from another server's; Delete says whether there was
// one.
func TestTokens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tk := st.Tokens()
		if b, err := tk.Get(ctx, "a"); b != nil || err != nil {
			t.Fatalf("before: %q %v", b, err)
		}
		for _, v := range []string{"first", "second"} {
			if err := tk.Put(ctx, "a", []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tk.Put(ctx, "b", []byte("other")); err != nil {
			t.Fatal(err)
		}
		if b, err := tk.Get(ctx, "a"); string(b) != "second" || err != nil {
			t.Errorf("a: %q %v", b, err)
		}
		if had, err := tk.Delete(ctx, "a"); !had || err != nil {
			t.Errorf("delete: %v %v", had, err)
		}
		if had, err := tk.Delete(ctx, "a"); had || err != nil {
			t.Errorf("second delete: %v %v", had, err)
		}
		if b, _ := tk.Get(ctx, "b"); string(b) != "other" {
			t.Errorf("b: %q", b)
		}
	})
}
