package openapi

import (
	"os"
	"testing"
)

// FuzzDocument reads documents and builds every operation's parameters:
// whatever the document holds, no panic, and every schema an object.
func FuzzDocument(f *testing.F) {
	petstore, err := os.ReadFile("testdata/petstore-expanded.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(petstore)
	f.Add([]byte(`{"openapi":"3.1.0","servers":[{"url":"/{v}","variables":{"v":{"default":"v1"}}}],"paths":{"/a/{id}":{"parameters":[{"$ref":"#/components/parameters/id"}],"post":{"requestBody":{"content":{"text/plain":{}}}}}},"components":{"parameters":{"id":{"name":"id","in":"path"}}}}`))
	f.Add([]byte(`{"openapi":"3.0.0","servers":[{"url":"x","variables":{"v":1}}],"paths":{"/a":{"put":{"requestBody":{"content":{"application/json":1}}}}}}`))
	f.Add([]byte(`{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"n","in":"query","schema":{"$ref":"#/components/schemas/A"}}]}}},"components":{"schemas":{"A":{"properties":{"a":{"$ref":"#/components/schemas/A"}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data)
		if err != nil {
			return
		}
		doc.Server("https://api.example.com/spec.json")
		ops, err := doc.Operations()
		if err != nil {
			return
		}
		for _, op := range ops {
			params, _, _, err := doc.parameters(op)
			if err == nil && params["type"] != "object" {
				t.Fatalf("%s: parameters %v are not an object", op.ID, params)
			}
		}
	})
}
