package tool

import "context"

// Origin says where the text of a content block or a kept output came from.
// Text from outside — a web page, an imported server's answer, a job's
// outcome reported by a webhook — reaches a model only wrapped as untrusted
// content (package content), naming its source, on every path: the result
// itself, each page result_read reads of it, a job's status.
type Origin struct {
	// External is true for text from outside Toolbelt and the tool's own
	// code. False marks a tool's own words (a notice, a footer), which the
	// pipeline leaves as they are even for a tool marked
	// [Meta.ExternalContent].
	External bool
	// Source names where external text came from: the tool and the address
	// or query it was called with ("web_fetch https://example.com").
	Source string
	// Wrapped is true once the text is between untrusted-content markers:
	// the pipeline wrapped it, and does not wrap it again.
	Wrapped bool
}

// FromOutside returns the origin of text from outside, from source.
func FromOutside(source string) *Origin { return &Origin{External: true, Source: source} }

// OwnWords returns the origin of a tool's own words.
func OwnWords() *Origin { return &Origin{} }

// IsExternal reports whether o marks text from outside; a nil o does not.
func (o *Origin) IsExternal() bool { return o != nil && o.External }

type originKey struct{}

// WithOrigin returns ctx carrying o, the origin of what a call produces. The
// pipeline sets it while a tool marked [Meta.ExternalContent] runs, and when
// it keeps a cut result; [Outputs] label what they keep with it.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginFrom returns the origin ctx carries, or nil when it carries none
// (the text is the tool's own).
func OriginFrom(ctx context.Context) *Origin {
	if o, ok := ctx.Value(originKey{}).(Origin); ok {
		return &o
	}
	return nil
}
