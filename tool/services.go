package tool

import "maps"

// A Service is the key under which a tool context carries one service a
// tool package uses — a memory index, a scheduler, a session host. The
// package that uses the service declares its interface and the key; the
// program that builds contexts sets it, and the package's factories read it
// when tools are resolved for the context. So a new feature declares its
// services in its own package, and Context does not grow with it:
//
//	// in package memory
//	var IndexService = tool.NewService[Index]()
//
//	// where the context is built
//	memory.IndexService.Set(tc, st.Memory())
//
//	// in memory_search's factory
//	ix, ok := memory.IndexService.Get(tc)
type Service[T any] struct {
	_ byte // not zero-sized: each key is a distinct pointer
}

// NewService returns a new key for a service of type T.
func NewService[T any]() *Service[T] { return &Service[T]{} }

// Set makes tc carry v under s, in place of what it carried under s (a nil
// v: nothing). Contexts copied from tc before keep what they had.
func (s *Service[T]) Set(tc *Context, v T) {
	m := make(map[any]any, len(tc.services)+1)
	maps.Copy(m, tc.services)
	m[s] = v
	tc.services = m
}

// Get returns the service tc carries under s, and false when it carries
// none (tc nil, never set, or set to nil).
func (s *Service[T]) Get(tc *Context) (T, bool) {
	if tc == nil {
		var none T
		return none, false
	}
	v, ok := tc.services[s].(T)
	return v, ok
}

// NotHere is a factory's reason that its tool cannot serve the context it
// was asked for because the context lacks what it needs (nobody there to
// answer a question), not because of the tool's settings: checking the
// configuration does not report it.
type NotHere struct{ Reason string }

func (e *NotHere) Error() string { return e.Reason }
