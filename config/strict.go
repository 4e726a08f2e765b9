package config

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/toolbelt/toolbelt/internal/closest"
	"github.com/toolbelt/toolbelt/policy"
)

// A checker walks YAML against the Go type it decodes into and reports
// every problem, each at its line and column and in the file's words: the
// key path, what was given, what is allowed. It checks toolbelt.yaml's own
// types (by their yaml tags) and the tools' settings (by their json tags).
// A key whose value has a problem is taken out of its mapping, so that
// what remains decodes and its values can be checked as well.
type checker struct {
	file string // for messages
	tag  string // "yaml" or "json"
	errs []error
}

// fail records a problem at node.
func (k *checker) fail(node ast.Node, msg string) {
	k.errs = append(k.errs, errorAt(k.file, node, msg))
}

// check reports whether node may decode into a value of type t; key is the
// node's path ("limits.timeout").
func (k *checker) check(node ast.Node, t reflect.Type, key string) bool {
	node = bare(node)
	switch node.(type) {
	case nil, *ast.NullNode, *ast.AliasNode:
		return true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[Duration]():
		return k.duration(node, key)
	case reflect.TypeFor[Names]():
		return k.names(node, key)
	case reflect.TypeFor[AskRule]():
		if _, ok := node.(*ast.StringNode); ok {
			return k.names(node, key)
		}
	case reflect.TypeFor[Tools]():
		return k.tools(node, key)
	case reflect.TypeFor[ToolDir]():
		if _, ok := node.(*ast.StringNode); ok {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		return k.mapping(node, key, fieldsOf(t, k.tag))
	case reflect.Map:
		m, ok := node.(*ast.MappingNode)
		if !ok {
			k.fail(node, fmt.Sprintf("%s is %s: want a mapping", key, given(node)))
			return false
		}
		m.Values = slices.DeleteFunc(m.Values, func(kv *ast.MappingValueNode) bool {
			return !k.check(kv.Value, t.Elem(), join(key, keyOf(kv)))
		})
		return true
	case reflect.Slice:
		s, ok := node.(*ast.SequenceNode)
		if !ok {
			k.fail(node, fmt.Sprintf("%s is %s: want a list", key, given(node)))
			return false
		}
		good := true
		for i, v := range s.Values {
			good = k.check(v, t.Elem(), fmt.Sprintf("%s[%d]", key, i)) && good
		}
		return good
	case reflect.Interface:
		return true
	}
	return k.scalar(node, t.Kind(), key)
}

// scalar checks a string, boolean or number.
func (k *checker) scalar(node ast.Node, kind reflect.Kind, key string) bool {
	var want string
	switch kind {
	case reflect.String:
		switch node.(type) {
		case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
			return true
		}
		want = "text"
	case reflect.Bool:
		if _, ok := node.(*ast.BoolNode); ok {
			return true
		}
		want = "true or false"
	case reflect.Int, reflect.Int64:
		if _, ok := node.(*ast.IntegerNode); ok {
			return true
		}
		want = "a whole number"
	case reflect.Float64:
		switch node.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			return true
		}
		want = "a number"
	default:
		panic("config: no check for a " + kind.String())
	}
	k.fail(node, fmt.Sprintf("%s is %s: want %s", key, given(node), want))
	return false
}

// mapping checks a mapping against the keys of a struct.
func (k *checker) mapping(node ast.Node, key string, fields map[string]reflect.Type) bool {
	m, ok := node.(*ast.MappingNode)
	if !ok {
		k.fail(node, fmt.Sprintf("%s is %s: want a mapping of %s", cmp.Or(key, "the file"), given(node), strings.Join(sortedKeys(fields), ", ")))
		return false
	}
	m.Values = slices.DeleteFunc(m.Values, func(kv *ast.MappingValueNode) bool {
		name := keyOf(kv)
		t, ok := fields[name]
		if !ok {
			k.fail(kv.Key, unknownKey(key, name, sortedKeys(fields)))
			return true
		}
		return !k.check(kv.Value, t, join(key, name))
	})
	return true
}

// bare returns the value of an anchored or tagged node; any other node as
// it is.
func bare(node ast.Node) ast.Node {
	switch v := node.(type) {
	case *ast.AnchorNode:
		return v.Value
	case *ast.TagNode:
		return v.Value
	}
	return node
}

// unknownKey says that name is not a key of the mapping at key, with the
// closest of its keys (sorted) or the keys there are.
func unknownKey(key, name string, keys []string) string {
	msg := join(key, name) + ": unknown key"
	if close := closest.Names(name, keys, 1); len(close) > 0 {
		return msg + fmt.Sprintf("; did you mean %q?", close[0])
	}
	if key == "" {
		// A top-level key no key resembles: most often a tool's
		// settings, written where the policy's are not.
		return msg + fmt.Sprintf(": a tool's settings go under tools: (tools.%s); the top-level keys are %s", name, strings.Join(topKeys(), ", "))
	}
	return msg + fmt.Sprintf(": %s takes %s", key, strings.Join(keys, ", "))
}

// duration checks a Duration.
func (k *checker) duration(node ast.Node, key string) bool {
	if _, ok := durationOf(node); ok {
		return true
	}
	k.fail(node, fmt.Sprintf("%s is %s: want a duration such as 30s, 5m or 1h", key, given(node)))
	return false
}

// names checks Names: a reference or a list of them.
func (k *checker) names(node ast.Node, key string) bool {
	items := []ast.Node{node}
	if s, ok := node.(*ast.SequenceNode); ok {
		items = s.Values
	}
	good := true
	for i, item := range items {
		at := key
		if len(items) > 1 || node != item {
			at = fmt.Sprintf("%s[%d]", key, i)
		}
		ref, err := reference(item)
		if err != nil {
			k.fail(item, fmt.Sprintf("%s is %s: want a tool name, alias, * glob or group: reference", at, given(item)))
			good = false
		} else if err := policy.ParseRule(ref); err != nil {
			k.fail(item, fmt.Sprintf("%s: %v", at, err))
			good = false
		}
	}
	return good
}

// tools checks tools:, the policy keys and the tools' settings; what is
// in the settings is checked against each tool's own type (CheckTools).
func (k *checker) tools(node ast.Node, key string) bool {
	fields := fieldsOf(reflect.TypeFor[Rules](), k.tag)
	fields["dirs"] = reflect.TypeFor[[]ToolDir]()
	fields["openapi"] = reflect.TypeFor[[]OpenAPI]()
	fields["summaries"] = reflect.TypeFor[map[string]string]()
	m, ok := node.(*ast.MappingNode)
	if !ok {
		k.fail(node, fmt.Sprintf("%s is %s: want a mapping of policy keys (%s) and tool settings", key, given(node), strings.Join(PolicyKeys, ", ")))
		return false
	}
	m.Values = slices.DeleteFunc(m.Values, func(kv *ast.MappingValueNode) bool {
		name := keyOf(kv)
		if t, ok := fields[name]; ok {
			return !k.check(kv.Value, t, join(key, name))
		}
		switch kv.Value.(type) {
		case *ast.MappingNode, *ast.NullNode:
			return false
		}
		msg := fmt.Sprintf("%s is %s: a tool's settings are a mapping; the policy keys are %s", join(key, name), given(kv.Value), strings.Join(PolicyKeys, ", "))
		if close := closest.Names(name, PolicyKeys, 1); len(close) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", close[0])
		}
		k.fail(kv.Key, msg)
		return true
	})
	return true
}

// fieldsOf returns the keys of a struct (by tag, yaml or json) and their
// types, the keys of embedded structs included.
func fieldsOf(t reflect.Type, tag string) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if f.Anonymous && f.Tag.Get(tag) == "" {
			for k, v := range fieldsOf(f.Type, tag) {
				out[k] = v
			}
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get(tag), ","); name != "" && name != "-" && f.IsExported() {
			out[name] = f.Type
		}
	}
	return out
}

func sortedKeys(fields map[string]reflect.Type) []string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// join makes the path of key below path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// given says what a node holds, in the file's words: a quoted string, a
// number or boolean as written, "a mapping", "a list".
func given(node ast.Node) string {
	switch v := node.(type) {
	case *ast.StringNode:
		return strconv.Quote(v.Value)
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.LiteralNode:
		return "a block of text"
	}
	return strings.TrimSpace(node.String())
}

// errorAt returns a LineError at node's position in file.
func errorAt(file string, node ast.Node, msg string) *LineError {
	e := &LineError{Path: file, Msg: msg}
	if node != nil && node.GetToken() != nil {
		e.Line, e.Column = node.GetToken().Position.Line, node.GetToken().Position.Column
	}
	return e
}

// Join joins errors as errors.Join does, in file order: the LineErrors
// among them (joined ones included) by line and column, the others after
// them.
func Join(errs ...error) error {
	var flat []error
	var add func(err error)
	add = func(err error) {
		for _, e := range flatten(err) {
			if _, many := e.(interface{ Unwrap() []error }); many {
				add(e)
			} else {
				flat = append(flat, e)
			}
		}
	}
	for _, err := range errs {
		add(err)
	}
	slices.SortStableFunc(flat, func(a, b error) int {
		pa, pb := position(a), position(b)
		return cmp.Or(cmp.Compare(pa[0], pb[0]), cmp.Compare(pa[1], pb[1]))
	})
	return errors.Join(flat...)
}

// position is where an error is in the file, errors without a line last.
func position(err error) [2]int {
	var le *LineError
	if errors.As(err, &le) && le.Line > 0 {
		return [2]int{le.Line, le.Column}
	}
	return [2]int{1 << 30, 0}
}

// keyOf returns the key of a mapping entry as it reads, without the quotes
// of "key" (JSON pasted as YAML).
func keyOf(kv *ast.MappingValueNode) string {
	if s, ok := kv.Key.(*ast.StringNode); ok {
		return s.Value
	}
	return kv.Key.String()
}
