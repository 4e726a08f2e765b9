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
		var end int
		if key == "tools" {
			// One scan finds the elements and where the array ends.
			if i >= len(result) || result[i] != '[' {
				return nil, nil, false
			}
			if tools, end, ok = elements(result, i); !ok {
				return nil, nil, false
			}
			fields[key] = json.RawMessage("[]")
			sawTools = true
		} else {
			if end = valueSpan(result, i); end < 0 {
				return nil, nil, false
			}
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

// elements returns the elements of the array that starts at b[i], in
// valid JSON, and the index after it.
func elements(b []byte, i int) ([]json.RawMessage, int, bool) {
	out := []json.RawMessage{}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, i + 1, true
	}
	for {
		end := valueSpan(b, i)
		if end < 0 {
			return nil, 0, false
		}
		out = append(out, json.RawMessage(b[i:end:end]))
		if i = skipSpace(b, end); i >= len(b) {
			return nil, 0, false
		}
		if b[i] == ']' {
			return out, i + 1, true
		}
		if b[i] != ',' {
			return nil, 0, false
		}
		i = skipSpace(b, i+1)
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
