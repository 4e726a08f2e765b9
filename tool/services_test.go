package tool_test

import (
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

type greeter interface{ Greet() string }

type hello string

func (h hello) Greet() string { return string(h) }

func TestService(t *testing.T) {
	t.Parallel()
	a, b := tool.NewService[greeter](), tool.NewService[greeter]()
	if _, ok := a.Get(nil); ok {
		t.Error("a nil context carries a service")
	}
	tc := &tool.Context{}
	if _, ok := a.Get(tc); ok {
		t.Error("a new context carries a service")
	}
	a.Set(tc, hello("a"))
	copied := *tc
	b.Set(tc, hello("b"))
	a.Set(tc, hello("a2"))
	if g, ok := a.Get(tc); !ok || g.Greet() != "a2" {
		t.Errorf("a after setting it again: %v, %v; want a2", g, ok)
	}
	if g, ok := b.Get(tc); !ok || g.Greet() != "b" {
		t.Errorf("b, another key of the same type: %v, %v; want b", g, ok)
	}
	if g, ok := a.Get(&copied); !ok || g.Greet() != "a" {
		t.Errorf("a in a copy made before it was set again: %v, %v; want a", g, ok)
	}
	if _, ok := b.Get(&copied); ok {
		t.Error("a copy made before b was set carries b")
	}
	a.Set(tc, nil)
	if _, ok := a.Get(tc); ok {
		t.Error("a set to nil is carried")
	}
}
