// Package importname names imported tools (an MCP server's, an OpenAPI
// document's operations) as every provider accepts them.
package importname

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// maxName is the longest tool name every provider accepts.
const maxName = 64

// hashLen is the number of hex digits of the hash that makes a shortened or
// repaired name unique.
const hashLen = 8

// Local maps the names of a server's (or an API's) tools to the names they are
// registered under: server + sep + tool. A name providers would refuse
// (characters outside [a-zA-Z0-9_-], or longer than 64) is repaired: each
// refused character becomes '_', and a name that is then too long, or
// collides with another tool's, is cut and ends in '_' and 8 hex digits of
// the SHA-256 of the remote name. The result depends only on the set of
// remote names, so the same server always yields the same local names.
func Local(server, sep string, remote []string) map[string]string {
	out := make(map[string]string, len(remote))
	taken := make(map[string]bool, len(remote))
	var repair []string
	for _, r := range remote {
		full := server + sep + r
		if tool.ValidateName(full) == nil {
			out[r], taken[full] = full, true
		} else {
			repair = append(repair, r)
		}
	}
	slices.Sort(repair)
	for _, r := range repair {
		name := replaceInvalid(server + sep + r)
		if len(name) > maxName || taken[name] {
			sum := sha256.Sum256([]byte(r))
			name = name[:min(len(name), maxName-hashLen-1)] + "_" + hex.EncodeToString(sum[:])[:hashLen]
		}
		out[r], taken[name] = name, true
	}
	return out
}

// Prefix returns how the registered names of every tool of the server
// begin, with sep joining server and tool names: the server and separator
// as Local repairs them, cut where a long name would be.
func Prefix(server, sep string) string {
	p := replaceInvalid(server + sep)
	return p[:min(len(p), maxName-hashLen-1)]
}

// replaceInvalid replaces every byte outside [a-zA-Z0-9_-] with '_'. A
// multi-byte character becomes one '_'.
func replaceInvalid(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && tool.ValidateName(string(r)) == nil {
			return r
		}
		return '_'
	}, s)
}
