package toolbelt_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
)

// TestOpenAPITools opens a configuration that imports the Petstore
// document (tools.openapi): its operations are tools of the registry, in
// their group, and a call reaches the API with the key from the
// environment.
func TestOpenAPITools(t *testing.T) {
	t.Setenv("TB_PETSTORE_KEY", "k-9")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/pets" || r.Header.Get("X-API-Key") != "k-9" {
			http.Error(w, `{"code":401,"message":"no"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"id":1,"name":"Rex"}]`))
	}))
	defer srv.Close()
	yaml := `tools:
  openapi:
    - name: petstore
      spec: tools/openapi/testdata/petstore-expanded.yaml
      baseURL: ` + srv.URL + `/v1
      include: {tags: [pets]}
      auth: {type: apiKey, name: X-API-Key, value: "${TB_PETSTORE_KEY}"}
`
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close(context.Background())
	if m, ok := tb.Registry().Meta("petstore__findPets"); !ok || m.Section != "openapi" || !m.ReadOnly {
		t.Fatalf("petstore__findPets: %+v %v", m, ok)
	}
	if tb.Registry().Has("petstore__deletePet") {
		t.Error("deletePet is imported although include names only the tag pets")
	}
	msg := call(t, tb, "c1", "petstore__findPets", `{}`)
	if text := msg.Content[0].Text; msg.IsError || !strings.Contains(text, `"name":"Rex"`) {
		t.Fatalf("petstore__findPets = %+v", msg)
	}
	// Governed as any tool: the policy denies the API's group.
	cfg, err = config.Parse("toolbelt.yaml", []byte(yaml+"  deny: [\"group:openapi:petstore\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	denied, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer denied.Close(context.Background())
	if msg := call(t, denied, "c2", "petstore__findPets", `{}`); !msg.IsError || !strings.Contains(msg.Content[0].Text, "blocked") {
		t.Fatalf("petstore__findPets under deny = %+v", msg)
	}
}
