package client

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// splitResult is takeTools' way for a result already checked to be valid
// JSON (by decodeResponse, or by the SDK's decoder): one scan finds its
// members and the elements of its tools array, where decoding it into a
// map and then the array into a list parsed and copied the 1.2 MB of a
// 1,000-tool list twice. It returns the members with "tools" set to [] and
// the tools' JSON; ok is false (takeTools decodes) for anything but an
// object whose keys are written without escapes in valid UTF-8, each once, and whose
// tools member is an array. TestSplitResultIsTakeTools and
// FuzzSplitResult hold it to the decoding way.
func splitResult(result []byte) (fields map[string]json.RawMessage, tools []json.RawMessage, ok bool) {
	i := skipSpace(result, 0)
	if i >= len(result) || result[i] != '{' {
		return nil, nil, false
	}
	fields = map[string]json.RawMessage{}
	sawTools := false
	if i = skipSpace(result, i+1); i < len(result) && result[i] == '}' {
		return nil, nil, false
	}
	for {
		var key string
		// (The decoder writes invalid UTF-8 in a key as U+FFFD.)
		if key, i, ok = plainKey(result, i); !ok || !utf8.ValidString(key) {
			return nil, nil, false
		}
		if _, twice := fields[key]; twice {
			return nil, nil, false
		}
		if i = skipSpace(result, i); i >= len(result) || result[i] != ':' {
			return nil, nil, false
		}
		i = skipSpace(result, i+1)
		end := valueSpan(result, i)
		if end < 0 {
			return nil, nil, false
		}
		if key == "tools" {
			if result[i] != '[' {
				return nil, nil, false
			}
			if tools, ok = elements(result[i:end]); !ok {
				return nil, nil, false
			}
			fields[key] = json.RawMessage("[]")
			sawTools = true
		} else {
			fields[key] = json.RawMessage(result[i:end:end])
		}
		if i = skipSpace(result, end); i >= len(result) {
			return nil, nil, false
		}
		if result[i] == '}' {
			return fields, tools, sawTools && skipSpace(result, i+1) == len(result)
		}
		if result[i] != ',' {
			return nil, nil, false
		}
		i = skipSpace(result, i+1)
	}
}

// elements returns the elements of the valid JSON array a.
func elements(a []byte) ([]json.RawMessage, bool) {
	out := []json.RawMessage{}
	i := skipSpace(a, 1)
	if i < len(a) && a[i] == ']' {
		return out, true
	}
	for {
		end := valueSpan(a, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, json.RawMessage(a[i:end:end]))
		if i = skipSpace(a, end); i >= len(a) {
			return nil, false
		}
		if a[i] == ']' {
			return out, true
		}
		if a[i] != ',' {
			return nil, false
		}
		i = skipSpace(a, i+1)
	}
}

// valueSpan returns where the value of valid JSON b that starts at i ends,
// or -1.
func valueSpan(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		if end := valueEnd(b[i:]); end > 0 {
			return i + end
		}
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
