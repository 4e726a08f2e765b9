package client

import (
	"cmp"

	"github.com/toolbelt/toolbelt/internal/importname"
)

// NamePrefix returns how the registered names of every tool of the server
// begin, with sep joining server and tool names (default "__"): the server
// and separator as importname.Local repairs them, cut where a long name
// would be.
func NamePrefix(server, sep string) string {
	return importname.Prefix(server, cmp.Or(sep, DefaultSeparator))
}
