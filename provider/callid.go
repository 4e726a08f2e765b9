package provider

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"strings"
	"sync"
)

// IDStyle is a provider's rule for tool-call ids.
type IDStyle int

// The id styles.
const (
	// IDStrict: letters and digits, at most 40 (OpenAI-compatible servers
	// that reject punctuation).
	IDStrict IDStyle = iota
	// IDStrict9: exactly 9 letters and digits (Mistral).
	IDStrict9
	// IDAnthropic: letters, digits, '_' and '-', at most 64.
	IDAnthropic
)

// IDMap rewrites tool-call ids into a provider's style and maps them back,
// for one transcript: the same original id always gets the same id, two
// originals never share one, and the rewriting depends only on the ids and
// the order they first appear in. It is safe for concurrent use.
type IDMap struct {
	style IDStyle
	mu    sync.Mutex
	out   map[string]string // original → provider id
	back  map[string]string // provider id → original
}

// NewIDMap returns an empty map for a style.
func NewIDMap(style IDStyle) *IDMap {
	return &IDMap{style: style, out: map[string]string{}, back: map[string]string{}}
}

// ID returns the provider id for an original id, assigning one on first use.
func (m *IDMap) ID(original string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.out[original]; ok {
		return id
	}
	id := m.style.clean(original)
	for n := 0; id == "" || m.taken(id, original); n++ {
		id = m.style.hashed(original, n)
	}
	m.out[original], m.back[id] = id, original
	return id
}

// Original returns the original id a provider id stands for, so results are
// matched to the calls the model issued.
func (m *IDMap) Original(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.back[id]
	return o, ok
}

func (m *IDMap) taken(id, original string) bool {
	o, ok := m.back[id]
	return ok && o != original
}

// clean returns the original id itself when it already fits the style, with
// characters the style forbids removed (strict) or replaced (anthropic); ""
// when that cannot give a fitting id.
func (s IDStyle) clean(original string) string {
	switch s {
	case IDAnthropic:
		id := strings.Map(func(r rune) rune {
			if isAlnum(r) || r == '_' || r == '-' {
				return r
			}
			return '_'
		}, original)
		if id == "" || len(id) > 64 {
			return ""
		}
		return id
	default:
		id := strings.Map(func(r rune) rune {
			if isAlnum(r) {
				return r
			}
			return -1
		}, original)
		if s == IDStrict9 && len(id) != 9 || s == IDStrict && (id == "" || len(id) > 40) {
			return ""
		}
		return id
	}
}

// hashed derives an id from the original's hash; n picks another on a
// collision.
func (s IDStyle) hashed(original string, n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", original, n))
	digits := new(big.Int).SetBytes(sum[:]).Text(62)
	switch s {
	case IDStrict9:
		return digits[:9]
	case IDStrict:
		return "call" + digits[:24]
	default:
		prefix := s.clean(original)
		if len(prefix) > 40 {
			prefix = prefix[:40]
		}
		if prefix == "" {
			prefix = "call"
		}
		return prefix + "_" + digits[:16]
	}
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
