// Package tools assembles Toolbelt's built-in tools; each section's tools
// live in a package of their own below it (tools/fs, tools/shell, …).
package tools

import "github.com/toolbelt/toolbelt/registry"

// Core returns a new registry filled with the built-in tools that are
// implemented, each in its catalog section.
func Core() *registry.Registry {
	return registry.New()
}
