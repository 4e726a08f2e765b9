// Package tools assembles Toolbelt's built-in tools; each section's tools
// live in a package of their own below it (tools/fs, tools/shell, …).
package tools

import (
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tools/fs"
)

// Core returns a new registry filled with the built-in tools that are
// implemented, each in its catalog section. It panics if a built-in tool's
// definition is invalid, which is a bug in Toolbelt.
func Core() *registry.Registry {
	reg := registry.New()
	for _, register := range []func(*registry.Registry) error{
		fs.Register,
	} {
		if err := register(reg); err != nil {
			panic("toolbelt: registering the built-in tools: " + err.Error())
		}
	}
	return reg
}
