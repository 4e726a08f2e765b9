package store_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

func TestJournal(t *testing.T) {
	t.Parallel()
	edit := tool.FileChange{Path: "src/main.go", Existed: true, Before: []byte("package main\n"), Mode: 0o644, Exists: true,
		After: []byte("test"), AfterSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	create := tool.FileChange{Path: "notes/new file.md", Exists: true, After: []byte("foo\x00\xff"),
		AfterSHA256: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"}
	remove := tool.FileChange{Path: "bin/run.sh", Existed: true, Before: []byte("#!/bin/sh\x00\xff binary\n"), Mode: 0o755}
	empty := tool.FileChange{Path: "empty", Existed: true, Mode: 0o600, Exists: true, AfterSHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		j := st.Journal(store.JournalOptions{})
		// Two calls' changes interleave; each call's come back in its order.
		for _, r := range []struct {
			call string
			c    tool.FileChange
		}{{"call-1", edit}, {"call-2", create}, {"call-1", remove}, {"call-1", empty}, {"call-2", edit}} {
			if err := j.Record(ctx, r.call, r.c); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			call string
			want []tool.FileChange
		}{
			{"call-1", []tool.FileChange{edit, remove, empty}},
			{"call-2", []tool.FileChange{create, edit}},
			{"call-none", nil},
		} {
			got, err := j.Changes(ctx, tc.call)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Changes(%s) = %+v, %v\nwant %+v", tc.call, got, err, tc.want)
			}
		}
		if err := j.DeleteChanges(ctx, "call-1"); err != nil {
			t.Fatal(err)
		}
		if got, err := j.Changes(ctx, "call-1"); err != nil || len(got) != 0 {
			t.Errorf("after DeleteChanges: %+v, %v", got, err)
		}
		if got, err := j.Changes(ctx, "call-2"); err != nil || len(got) != 2 {
			t.Errorf("another call's changes after DeleteChanges: %+v, %v", got, err)
		}
	})
}

func TestJournalRefuses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		j := st.Journal(store.JournalOptions{})
		for _, tc := range []struct {
			call string
			c    tool.FileChange
			want string
		}{
			{"", tool.FileChange{Path: "a"}, `the call id ("") and path ("a") must not be empty`},
			{"call-1", tool.FileChange{}, `the call id ("call-1") and path ("") must not be empty`},
		} {
			if err := j.Record(ctx, tc.call, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Record(%q, %+v) = %v, want %q", tc.call, tc.c, err, tc.want)
			}
		}
		if err := j.DeleteChanges(ctx, ""); err == nil {
			t.Error("DeleteChanges accepted an empty call id")
		}
	})
}

func TestJournalRetention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := newClock()
		st.SetClock(clk.Now)
		j := st.Journal(store.JournalOptions{MaxAge: 48 * time.Hour})
		change := tool.FileChange{Path: "a.txt", Exists: true, AfterSHA256: "00"}
		if err := j.Record(ctx, "old", change); err != nil {
			t.Fatal(err)
		}
		clk.Advance(47 * time.Hour)
		if got, _ := j.Changes(ctx, "old"); len(got) != 1 {
			t.Fatal("expired before its age")
		}
		clk.Advance(2 * time.Hour)
		if got, err := j.Changes(ctx, "old"); len(got) != 0 || err != nil {
			t.Fatalf("expired changes returned: %+v, %v", got, err)
		}
		if err := j.Record(ctx, "new", change); err != nil {
			t.Fatal(err)
		}
		if n := storetest.Count(t, st, "file_changes"); n != 1 {
			t.Fatalf("%d rows, want 1 (the expired change removed)", n)
		}
	})
}
