package invoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// Arguments is the "arguments" step. Arguments may be a JSON object, a JSON
// string holding an object, or empty (also null), which means {}. Anything
// else is an error result that says what was received. Afterwards
// req.Call.Arguments holds the object's JSON text.
func Arguments(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if req.UndoOf != "" {
			return next(ctx, req) // undo data, not arguments
		}
		raw, err := objectText(req.Call.Arguments)
		if err != nil {
			req.Outcome = OutcomeValidation
			return invalidArguments(req.Tool.Name, err)
		}
		req.Call.Arguments = raw
		return next(ctx, req)
	}
}

func invalidArguments(name string, err error) tool.Result {
	return tool.Errorf("Invalid arguments for tool %q: %v. Send the arguments as a JSON object.", name, err)
}

var emptyObject = json.RawMessage(`{}`)

// objectText returns the JSON text of the object the arguments hold. It looks
// only at the outside: whether the object is well formed is for Validate.
func objectText(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return emptyObject, nil
	}
	if trimmed[0] == '"' {
		var inner string
		if err := json.Unmarshal(trimmed, &inner); err != nil {
			return nil, fmt.Errorf("they are not valid JSON (%v); received: %s", err, textclip.Clip(string(trimmed), 200))
		}
		inner = strings.TrimSpace(inner)
		if inner == "" {
			return emptyObject, nil
		}
		if inner[0] != '{' {
			return nil, fmt.Errorf("they arrived as a JSON string that does not hold an object; received: %s", textclip.Clip(inner, 200))
		}
		return json.RawMessage(inner), nil
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return nil, fmt.Errorf("they are not valid JSON (%v); received: %s", SyntaxError(trimmed), textclip.Clip(string(trimmed), 200))
		}
		return nil, fmt.Errorf("they must be a JSON object, but %s was received: %s", jsonKind(trimmed), textclip.Clip(string(trimmed), 200))
	}
	return trimmed, nil
}

// decodeObject decodes a JSON object, keeping numbers exact as json.Number.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("unexpected data after the object")
	}
	return m, nil
}

// SyntaxError says where and why text is not valid JSON: "invalid
// character 'o' in literal null (expecting 'u') at line 1, column 2", or nil
// when it is valid.
func SyntaxError(text []byte) error {
	var v any
	err := json.Unmarshal(text, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	line, col := 1, 1
	for _, c := range text[:min(int(se.Offset), len(text))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if se.Offset > 0 {
		col-- // the offset is just past the offending byte
	}
	return fmt.Errorf("%s at line %d, column %d", se.Error(), line, col)
}

func jsonKind(b []byte) string {
	switch b[0] {
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case 'n':
		return "null"
	}
	if b[0] == '-' || b[0] >= '0' && b[0] <= '9' {
		return "a number"
	}
	return "something that is not JSON"
}

// Validate is the "validate" step: it checks the arguments against the
// tool's full parameter schema — never a provider's compiled version of it —
// and reports every violation at once. Well-formed arguments in the common
// case are checked straight from their JSON text; the rest are decoded and
// checked in full.
func Validate(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if req.UndoOf != "" {
			return next(ctx, req) // undo data, not arguments
		}
		if err := validate(req); err != nil {
			req.Outcome = OutcomeValidation
			return *err
		}
		return next(ctx, req)
	}
}

// validate returns the error result for invalid arguments, or nil.
func validate(req *Request) *tool.Result {
	v, err := req.Validator()
	if err != nil {
		req.logger().Error("tool has an invalid parameter schema", "tool", req.Tool.Name, "err", err)
		res := tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: "the tool's parameter schema is invalid, so it cannot be called: " + err.Error()}.Result()
		return &res
	}
	if valid, _ := req.quickCheck(); valid {
		return nil
	}
	args, err := req.Args()
	if err != nil {
		res := invalidArguments(req.Tool.Name, fmt.Errorf("they are not valid JSON (%v); received: %s", err, textclip.Clip(string(req.Call.Arguments), 200)))
		return &res
	}
	errs := v.Validate(args)
	if len(errs) == 0 {
		return nil
	}
	res := ValidationResult(req.Tool.Name, errs, args, req.Call.Arguments)
	return &res
}

// MaxReceivedChars bounds the arguments echoed in a validation error.
const MaxReceivedChars = 2048

// ValidationResult is the error result for arguments that violate a schema.
// Required parameters missing at the top level come first, in the words
// models respond to best:
//
//	Missing required parameter: content (received: path). Supply correct parameters before retrying.
//
// Every other violation follows, one per line, with the arguments received:
//
//	Validation failed for tool "NAME":
//	  - <path>: <message>
//	Received arguments:
//	{ … }
//
// raw, the arguments' JSON text, gives the order of the received keys. The
// details hold the errors as data.
func ValidationResult(name string, errs []schema.Error, args map[string]any, raw []byte) tool.Result {
	var b strings.Builder
	var missing []string
	var rest []schema.Error
	for _, e := range errs {
		if e.Path == "" && len(e.Missing) > 0 {
			missing = append(missing, e.Missing...)
		} else {
			rest = append(rest, e)
		}
	}
	if len(missing) > 0 {
		noun := "parameter"
		if len(missing) > 1 {
			noun = "parameters"
		}
		fmt.Fprintf(&b, "Missing required %s: %s (received: %s). Supply correct parameters before retrying.", noun, strings.Join(missing, ", "), receivedKeys(raw, args))
	}
	if len(rest) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Validation failed for tool %q:\n", name)
		for _, e := range rest {
			b.WriteString("  - ")
			b.WriteString(e.String())
			b.WriteByte('\n')
		}
		b.WriteString("Received arguments:\n")
		received, err := json.MarshalIndent(args, "", "  ")
		if err != nil {
			received = []byte(fmt.Sprintf("%v", args))
		}
		b.WriteString(textclip.Clip(string(received), MaxReceivedChars))
	}
	res := tool.Text(b.String())
	res.IsError = true
	res.Details = map[string]any{"error": "validation", "errors": errs}
	return res
}

// receivedKeys lists the top-level keys of the arguments in the order they
// were sent, marking values a model may not have meant: path, content=<empty-string>, x=<object>.
func receivedKeys(raw []byte, args map[string]any) string {
	keys := keysInOrder(raw)
	if len(keys) == 0 {
		return "nothing"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k
		switch v := args[k].(type) {
		case string:
			if v == "" {
				parts[i] += "=<empty-string>"
			}
		case map[string]any:
			parts[i] += "=<object>"
		case []any:
			parts[i] += "=<array>"
		case json.Number, float64:
			parts[i] += "=<number>"
		case bool:
			parts[i] += "=<boolean>"
		case nil:
			parts[i] += "=<null>"
		}
	}
	return strings.Join(parts, ", ")
}

// keysInOrder returns the top-level keys of a JSON object in document order,
// each once.
func keysInOrder(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// rawArgs returns arguments for an event as received: the JSON when it is
// valid, else the text.
func rawArgs(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return emptyObject
	}
	if json.Valid(raw) {
		return raw
	}
	return string(raw)
}
