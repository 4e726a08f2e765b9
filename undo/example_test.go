package undo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	tbfs "github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/undo"
)

// The file tools record their changes in the journal of the tool context;
// Undo takes a call's changes back, and refuses when a file changed since.
func Example() {
	ctx := context.Background()
	bridge, _ := fsbridge.NewMemory()
	_ = bridge.WriteFile(ctx, "notes.txt", []byte("draft\n"), 0o644)

	reg := registry.New()
	_ = tbfs.Register(reg)
	journal := &undo.MemoryJournal{}
	r := invoke.New(reg, &tool.Context{FS: bridge, Journal: journal})

	r.Run(ctx, tool.Call{ID: "call_1", Name: "write", Arguments: []byte(`{"path":"notes.txt","content":"final\n"}`)})
	r.Run(ctx, tool.Call{ID: "call_2", Name: "write", Arguments: []byte(`{"path":"todo.txt","content":"ship it\n"}`)})
	_ = bridge.WriteFile(ctx, "todo.txt", []byte("ship it today\n"), 0o644) // a change made since

	report, err := undo.Undo(ctx, journal, bridge, "call_1")
	fmt.Println(report, err)
	notes, _ := bridge.ReadFile(ctx, "notes.txt")
	fmt.Printf("notes.txt: %q\n", notes)

	_, err = undo.Undo(ctx, journal, bridge, "call_1")
	fmt.Println(errors.Is(err, undo.ErrNothingToUndo))

	_, err = undo.Undo(ctx, journal, bridge, "call_2")
	fmt.Println(err)
	// Output:
	// Undid call call_1: reverted notes.txt. <nil>
	// notes.txt: "draft\n"
	// true
	// cannot undo call call_2: 1 file changed since the call, so nothing was undone
	// todo.txt: changed since
	// diff --git a/todo.txt b/todo.txt
	// --- a/todo.txt
	// +++ b/todo.txt
	// @@ -1 +1 @@
	// -ship it
	// +ship it today
}
