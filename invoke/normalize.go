package invoke

import (
	"bytes"
	"context"
	"html"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/tool"
)

// Change is one repair the normalize step made to a call's arguments; the
// result's details list them under "normalized".
type Change struct {
	// Path locates the value: "edits[0].oldText"; "" is the root.
	Path string `json:"path"`
	// Kind says what was done: "renamed", "alias", "flattened", "entities",
	// "coerced" or "removed".
	Kind string `json:"kind"`
	// From and To describe the change: old and new names for renames, old and
	// new values otherwise.
	From any `json:"from,omitempty"`
	To   any `json:"to,omitempty"`
}

// entityProviders encode HTML entities in the arguments they send.
var entityProviders = map[string]bool{"xai": true, "grok": true}

// normalizeStep is the "normalize" step. It repairs arguments in ways whose
// meaning is unambiguous, and only when the quick check finds them invalid
// or using names the schema does not declare — well-formed calls pass
// untouched:
//   - HTML entities decoded in every string, for providers that encode them (xAI);
//   - a name the schema does not know renamed to the declared name it spells
//     in another case style (filePath → file_path, HTTPServer → http_server);
//   - the tool's aliases (file_path → path) renamed where the declared name
//     is absent;
//   - structured text ({"text": …} or an array of text parts) flattened into a
//     string where the schema wants a string;
//   - scalars coerced where the schema wants another scalar type ("5" → 5),
//     and nulls removed from optional properties that do not allow null.
func (r *Runner) normalizeStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if r.cfg.DisableNormalization || req.UndoOf != "" {
			return next(ctx, req)
		}
		entities := entityProviders[strings.ToLower(req.Provider)] && bytes.IndexByte(req.Call.Arguments, '&') >= 0
		if _, declared := req.quickCheck(); declared && !entities {
			return next(ctx, req)
		}
		args, err := req.Args()
		if err != nil {
			return next(ctx, req) // malformed JSON: validate says so
		}
		var changes []Change
		if entities {
			decodeEntities(args, "", &changes)
		}
		normalizeObject(req.Tool.Params(), args, "", req.Tool.Meta.ParamAliases, &changes)
		if !r.cfg.DisableCoercion {
			if v, err := req.Validator(); err == nil {
				for _, c := range v.Coerce(args) {
					kind := "coerced"
					if c.Removed {
						kind = "removed"
					}
					changes = append(changes, Change{Path: c.Path, Kind: kind, From: c.From, To: c.To})
				}
			}
		}
		if len(changes) > 0 {
			if err := req.SetArgs(args); err != nil {
				return tool.Errorf("Invalid arguments for tool %q: %v", req.Tool.Name, err)
			}
			req.Note("normalized", changes)
		}
		return next(ctx, req)
	}
}

// normalizeObject repairs the names and string values of obj against the
// object schema s, and recurses into nested objects and arrays.
func normalizeObject(s *jsonschema.Schema, obj map[string]any, path string, aliases map[string]string, changes *[]Change) {
	if s == nil || len(s.Properties) == 0 {
		return
	}
	// Renames first, in sorted order so the outcome does not depend on map order.
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		if _, declared := s.Properties[key]; declared {
			continue
		}
		if to, ok := aliases[key]; ok {
			if _, declared := s.Properties[to]; declared {
				if _, present := obj[to]; !present {
					obj[to] = obj[key]
					delete(obj, key)
					*changes = append(*changes, Change{Path: path, Kind: "alias", From: key, To: to})
					continue
				}
			}
		}
		if to := caseMatch(key, s.Properties); to != "" {
			if _, present := obj[to]; !present {
				obj[to] = obj[key]
				delete(obj, key)
				*changes = append(*changes, Change{Path: path, Kind: "renamed", From: key, To: to})
			}
		}
	}
	for name, ps := range s.Properties {
		v, ok := obj[name]
		if !ok {
			continue
		}
		p := join(path, name)
		if wantsString(ps) {
			if text, ok := flattenText(v); ok {
				obj[name] = text
				*changes = append(*changes, Change{Path: p, Kind: "flattened", To: "string"})
			}
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			normalizeObject(ps, v, p, aliases, changes)
		case []any:
			if ps.Items != nil {
				for i, item := range v {
					if m, ok := item.(map[string]any); ok {
						normalizeObject(ps.Items, m, p+"["+strconv.Itoa(i)+"]", aliases, changes)
					}
				}
			}
		}
	}
}

// caseMatch returns the one declared name that key spells in another case
// style, or "" when there is none or more than one.
func caseMatch(key string, props map[string]*jsonschema.Schema) string {
	want := words(key)
	found := ""
	for name := range props {
		if words(name) == want {
			if found != "" {
				return ""
			}
			found = name
		}
	}
	return found
}

// words reduces a name to its lowercase words joined by '_', whatever its
// case style: filePath, file_path, FilePath, file-path and FILE_PATH all give
// "file_path"; HTTPServer and http_server give "http_server".
func words(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case r == '_' || r == '-' || r == ' ' || r == '.':
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			continue
		case unicode.IsUpper(r) && i > 0:
			prev := runes[i-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if (unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower) && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimSuffix(b.String(), "_")
}

// wantsString reports whether s accepts only strings.
func wantsString(s *jsonschema.Schema) bool {
	return s.Type == "string" || len(s.Types) == 1 && s.Types[0] == "string"
}

// flattenText turns structured text into a string: {"text": "…"} or an array
// of text parts (strings or {"type":"text","text":"…"}), joined as they are.
func flattenText(v any) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		text, ok := v["text"].(string)
		if !ok || len(v) > 2 || len(v) == 2 && v["type"] != "text" {
			return "", false
		}
		return text, true
	case []any:
		if len(v) == 0 {
			return "", false
		}
		var b strings.Builder
		for _, part := range v {
			switch p := part.(type) {
			case string:
				b.WriteString(p)
			case map[string]any:
				text, ok := flattenText(p)
				if !ok {
					return "", false
				}
				b.WriteString(text)
			default:
				return "", false
			}
		}
		return b.String(), true
	}
	return "", false
}

// decodeEntities replaces HTML entities in every string of v, in place.
func decodeEntities(v any, path string, changes *[]Change) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if s, ok := item.(string); ok {
				if d := html.UnescapeString(s); d != s {
					v[k] = d
					*changes = append(*changes, Change{Path: join(path, k), Kind: "entities"})
				}
				continue
			}
			decodeEntities(item, join(path, k), changes)
		}
	case []any:
		for i, item := range v {
			p := path + "[" + strconv.Itoa(i) + "]"
			if s, ok := item.(string); ok {
				if d := html.UnescapeString(s); d != s {
					v[i] = d
					*changes = append(*changes, Change{Path: p, Kind: "entities"})
				}
				continue
			}
			decodeEntities(item, p, changes)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
