// Package tools assembles Toolbelt's built-in tools; each section's tools
// live in a package of their own below it (tools/fs, tools/shell, …).
package tools

import (
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/tools/shell"
)

// Core returns a new registry filled with the built-in tools that are
// implemented, each in its catalog section. It panics if a built-in tool's
// definition is invalid, which is a bug in Toolbelt.
func Core() *registry.Registry {
	reg := registry.New()
	for _, register := range []func(*registry.Registry) error{
		fs.Register,
		registerShell,
	} {
		if err := register(reg); err != nil {
			panic("toolbelt: registering the built-in tools: " + err.Error())
		}
	}
	return reg
}

// registerShell adds exec and process. Core's callers cannot close the
// manager of their commands yet, so it is not kept, and commands still
// running in the background when the program exits are not stopped.
func registerShell(reg *registry.Registry) error {
	_, err := shell.Register(reg)
	return err
}
