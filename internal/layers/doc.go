// Package layers holds the tests that keep Toolbelt's packages in their
// layers, from what `go list` reports: the core (tool, registry, schema,
// invoke) links no database driver, no River and no YAML; invoke stays
// within its budget of dependencies; no package imports one on a higher
// floor of the map in docs/development.md, which names every package; and
// tool.Context carries in its fields only services the pipeline uses.
package layers
