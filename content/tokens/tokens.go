// Package tokens counts the tokens of a text as OpenAI's o200k encoding
// (GPT-4o and later models) splits it, for the pipeline's caps on a
// result's tokens (invoke.Config.CountTokens). The encoding's vocabulary
// adds about 7 MB to a program, which is why the pipeline does not link it
// unless asked to.
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// o200k is the encoding, built on first use.
var o200k = sync.OnceValue(codec.NewO200kBase)

// O200k returns the number of o200k tokens of s, or -1 when the encoding
// cannot count them.
func O200k(s string) int {
	n, err := o200k().Count(s)
	if err != nil {
		return -1
	}
	return n
}
