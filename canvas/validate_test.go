package canvas

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPushBuildsSurfaces: a v0.8 stream and a v0.9 stream build their
// surfaces, v0.8's components translated to the v0.9 form the renderer
// draws and its data entries to an object.
func TestPushBuildsSurfaces(t *testing.T) {
	t.Parallel()
	h := New("http://127.0.0.1/canvas/")
	if _, err := h.Push("s", readTestdata(t, "v08.jsonl")); err != nil {
		t.Fatal(err)
	}
	ids, err := h.Push("s", readTestdata(t, "v09.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{"order", "trip"}) {
		t.Fatalf("surfaces %v", ids)
	}
	st := h.State("s")
	order := st.Surfaces[0]
	if !order.Ready || order.Root != "root" || order.Version != V08 {
		t.Errorf("order %+v", order)
	}
	got, _ := json.Marshal(order.Components["submit"])
	want := `{"action":{"event":{"context":{"hot":{"path":"/hot"},"name":{"path":"/name"}},"name":"place_order"}},"child":"submit-label","component":"Button","id":"submit","variant":"primary"}`
	if string(got) != want {
		t.Errorf("v0.8 button as drawn:\n got %s\nwant %s", got, want)
	}
	got, _ = json.Marshal(order.Components["items"]["children"])
	if string(got) != `{"componentId":"item","path":"/items"}` {
		t.Errorf("template %s", got)
	}
	got, _ = json.Marshal(order.Data)
	if !strings.Contains(string(got), `"items":{"0":{"label":"Flat white"},"1":{"label":"Cortado"}}`) || order.DataRev != 2 {
		t.Errorf("data %s (rev %d)", got, order.DataRev)
	}
	trip := st.Surfaces[1]
	if !trip.Ready || trip.Root != "root" || len(trip.Components) != 14 {
		t.Errorf("trip %+v", trip)
	}
}

// TestPushRefusesInvalidLines: an invalid line is refused with its
// number and the field at fault, and nothing of the push is applied —
// not even its valid lines before it.
func TestPushRefusesInvalidLines(t *testing.T) {
	t.Parallel()
	const create = `{"version":"v0.9","createSurface":{"surfaceId":"f","catalogId":"c"}}`
	for _, c := range []struct {
		name, jsonl string
		line        int
		field, msg  string
	}{
		{"not JSON", create + "\n{oops", 2, "", "not JSON"},
		{"two actions", `{"surfaceUpdate":{"surfaceId":"a","components":[{"id":"x","component":{"Divider":{}}}]},"deleteSurface":{"surfaceId":"a"}}`, 1, "", "properties"},
		{"v0.8 missing field", create + "\n" + `{"surfaceUpdate":{"surfaceId":"a","components":[{"id":"b","component":{"Button":{"child":"t"}}}]}}`, 2, "surfaceUpdate.components[0].component.Button", "action"},
		{"v0.8 wrong type", `{"surfaceUpdate":{"surfaceId":"a","components":[{"id":"t","component":{"Text":{"text":{"literalString":7}}}}]}}`, 1, "surfaceUpdate.components[0].component.Text.text.literalString", "string"},
		{"v0.8 unknown component", `{"surfaceUpdate":{"surfaceId":"a","components":[{"id":"t","component":{"Blink":{}}}]}}`, 1, "surfaceUpdate.components[0].component.Blink", "unknown component"},
		{"v0.9 bad enum", create + "\n" + `{"version":"v0.9","updateComponents":{"surfaceId":"f","components":[{"id":"root","component":"Text","text":"x","variant":"huge"}]}}`, 2, "updateComponents.components[0].variant", "huge"},
		{"v0.9 unknown property", create + "\n" + `{"version":"v0.9","updateComponents":{"surfaceId":"f","components":[{"id":"root","component":"Text","text":"x","onclick":"alert(1)"}]}}`, 2, "updateComponents.components[0]", "onclick"},
		{"v0.9 wrong version", `{"version":"v1","createSurface":{"surfaceId":"f","catalogId":"c"}}`, 1, "version", "v0.9"},
		{"v0.9 no surface", `{"version":"v0.9","updateDataModel":{"surfaceId":"nope","value":{}}}`, 1, "updateDataModel.surfaceId", "createSurface first"},
		{"v0.9 twice", create + "\n" + create, 2, "createSurface.surfaceId", "exists"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := New("http://127.0.0.1/canvas/")
			if _, err := h.Push("s", readTestdata(t, "v08.jsonl")); err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(h.State("s"))
			_, err := h.Push("s", c.jsonl)
			var pe *PushError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *PushError", err)
			}
			l := pe.Lines[0]
			if l.Line != c.line || l.Field != c.field || !strings.Contains(l.Message, c.msg) {
				t.Errorf("got %+v (%v), want line %d field %q message with %q", l, err, c.line, c.field, c.msg)
			}
			if after, _ := json.Marshal(h.State("s")); string(after) != string(before) {
				t.Errorf("the surfaces changed:\n%s\n%s", before, after)
			}
		})
	}
}

// TestSetPointerCopies: setting a path leaves the old data model as it
// was, so that a refused push changes nothing.
func TestSetPointerCopies(t *testing.T) {
	t.Parallel()
	old := map[string]any{"a": map[string]any{"b": 1.0}, "l": []any{"x"}}
	next, err := setPointer(old, "/a/b", 2.0, false)
	if err != nil {
		t.Fatal(err)
	}
	next, err = setPointer(next, "/l/1", "y", false)
	if err != nil {
		t.Fatal(err)
	}
	if old["a"].(map[string]any)["b"] != 1.0 || len(old["l"].([]any)) != 1 {
		t.Errorf("old changed: %v", old)
	}
	if got, _ := json.Marshal(next); string(got) != `{"a":{"b":2},"l":["x","y"]}` {
		t.Errorf("next %s", got)
	}
	if _, err := setPointer(old, "/l/5", 1, false); err == nil {
		t.Error("an index past the end was accepted")
	}
}
