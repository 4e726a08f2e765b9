package tool

import (
	"reflect"
	"testing"
)

// tagItems reads a tag as reflect.StructTag.Lookup does: the first value of
// each key, escapes unquoted, nothing past a malformed pair.
func TestTagItemsParseAsLookupDoes(t *testing.T) {
	tags := []reflect.StructTag{
		``,
		`json:"path"`,
		`json:"path" jsonschema:"A \"quoted\" path, with spaces: and colons" minLength:"1"`,
		`  json:"a"   minimum:"1"  `,
		`minimum:"1" minimum:"2"`,
		`enum:"a,b" default:"\u00e9t\u00e9"`,
		`json:"a" broken minimum:"1"`,
		`json:"a" minimum:1`,
		`json:"a" minimum:"unterminated`,
		`json:"a" :"nokey" minimum:"1"`,
		`json:"a" pattern:"^\\d+$"`,
		`json:"a" bad:"\q" minimum:"1"`,
	}
	keys := []string{"json", "jsonschema", "minLength", "minimum", "enum", "default", "pattern", "broken", "bad"}
	for _, tag := range tags {
		got := map[string]string{}
		for k, v := range tagItems(tag) {
			if _, ok := got[k]; !ok {
				got[k] = v
			}
		}
		for _, k := range keys {
			want, wantOK := tag.Lookup(k)
			v, ok := got[k]
			if ok != wantOK || v != want {
				t.Errorf("tag %s, key %s: got %q %v, Lookup gives %q %v", tag, k, v, ok, want, wantOK)
			}
		}
	}
}

type embeddedLimits struct {
	Limit int `json:"limit,omitempty" minimum:"1" maximum:"50"`
}

type withEmbedded struct {
	embeddedLimits
	Query string `json:"query" minLength:"2"`
}

// The constraint tags of an embedded struct's fields reach the schema of
// the promoted properties, as those of direct fields do.
func TestTagsOfEmbeddedFields(t *testing.T) {
	s, _, err := inferParameters(reflect.TypeFor[withEmbedded]())
	if err != nil {
		t.Fatal(err)
	}
	limit, query := s.Properties["limit"], s.Properties["query"]
	if limit == nil || limit.Minimum == nil || *limit.Minimum != 1 || limit.Maximum == nil || *limit.Maximum != 50 {
		t.Errorf("limit: %+v", limit)
	}
	if query == nil || query.MinLength == nil || *query.MinLength != 2 {
		t.Errorf("query: %+v", query)
	}
}
