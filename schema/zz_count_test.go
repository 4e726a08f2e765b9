package schema

import "testing"

func TestZZCount(t *testing.T) {
	tools := loadCorpus(t)
	for _, d := range testDialects() {
		settled, maps := 0, 0
		var walk func(v any)
		walk = func(v any) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			maps++
			if d.settled(m) {
				settled++
			}
			for _, e := range m {
				switch x := e.(type) {
				case map[string]any:
					walk(x)
					for _, y := range x {
						walk(y)
					}
				case []any:
					for _, y := range x {
						walk(y)
					}
				}
			}
		}
		for _, tl := range tools {
			walk(tl.Doc)
		}
		t.Logf("%s settled %d of ~%d", d.name, settled, maps)
	}
}
