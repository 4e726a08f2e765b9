package schema

import (
	"fmt"
	"sync"
	"testing"
)

// TestEachDraftsMetaSchema: the validator library compiles a draft's
// meta-schemas the first time a schema of that draft is checked
// (internal/jsonschema, Draft.load); schemas of every draft, compiled
// together, are each checked against their own draft's.
func TestEachDraftsMetaSchema(t *testing.T) {
	t.Parallel()
	drafts := []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	}
	var wg sync.WaitGroup
	for range 3 {
		for _, d := range drafts {
			wg.Go(func() {
				if _, err := CompileJSON(fmt.Appendf(nil, `{"$schema": %q, "minLength": -1}`, d)); err == nil {
					t.Errorf(`%s: {"minLength": -1} compiled: the meta-schema was not applied`, d)
				}
				if _, err := CompileJSON(fmt.Appendf(nil, `{"$schema": %q, "type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}`, d)); err != nil {
					t.Errorf("%s: %v", d, err)
				}
			})
		}
	}
	wg.Wait()
	// What each draft's meta-schema allows differs: exclusiveMinimum is a
	// boolean in draft-04 and a number from draft-06 on.
	if _, err := CompileJSON([]byte(`{"$schema": "http://json-schema.org/draft-04/schema#", "minimum": 1, "exclusiveMinimum": true}`)); err != nil {
		t.Errorf("draft-04, boolean exclusiveMinimum: %v", err)
	}
	if _, err := CompileJSON([]byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "exclusiveMinimum": true}`)); err == nil {
		t.Error("draft 2020-12, boolean exclusiveMinimum compiled: the draft's meta-schema was not applied")
	}
}
