package openapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/openapi"
)

const spec = "testdata/petstore-expanded.yaml"

// petstore is a server that implements the Petstore document, asking for
// the credentials check approves.
type petstore struct {
	mu    sync.Mutex
	pets  []map[string]any
	check func(r *http.Request) bool
}

func (p *petstore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fail := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
	}
	if !p.check(r) {
		fail(http.StatusUnauthorized, "no valid credentials")
		return
	}
	ok := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	id, err := strconv.Atoi(r.PathValue("id"))
	if r.PathValue("id") != "" && err != nil {
		fail(http.StatusBadRequest, "id is not a number")
		return
	}
	find := slices.IndexFunc(p.pets, func(pet map[string]any) bool { return pet["id"] == id })
	switch r.Pattern {
	case "GET /v1/pets":
		tags := r.URL.Query()["tags"]
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		out := []map[string]any{}
		for _, pet := range p.pets {
			if (len(tags) == 0 || slices.Contains(tags, pet["tag"].(string))) && (limit == 0 || len(out) < limit) {
				out = append(out, pet)
			}
		}
		ok(out)
	case "POST /v1/pets":
		var pet map[string]any
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&pet) != nil || pet["name"] == nil {
			fail(http.StatusBadRequest, "want a JSON NewPet")
			return
		}
		pet["id"] = len(p.pets) + 1
		p.pets = append(p.pets, pet)
		ok(pet)
	case "GET /v1/pets/{id}":
		if find < 0 {
			fail(http.StatusNotFound, "no pet "+r.PathValue("id"))
			return
		}
		ok(p.pets[find])
	case "DELETE /v1/pets/{id}":
		if find < 0 {
			fail(http.StatusNotFound, "no pet "+r.PathValue("id"))
			return
		}
		p.pets = slices.Delete(p.pets, find, find+1)
		w.WriteHeader(http.StatusNoContent)
	}
}

// serve starts a Petstore on 127.0.0.1 (under /v1) with an OAuth token
// endpoint at /token that gives "tok-1" to client "cid" with secret "cs".
func serve(t *testing.T, check func(*http.Request) bool) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	p := &petstore{check: check}
	for _, pat := range []string{"GET /v1/pets", "POST /v1/pets", "GET /v1/pets/{id}", "DELETE /v1/pets/{id}"} {
		mux.Handle(pat, p)
	}
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if id != "cid" || secret != "cs" || r.FormValue("grant_type") != "client_credentials" || r.FormValue("scope") != "pets:write" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}`)
	})
	mux.HandleFunc("GET /spec.yaml", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, spec) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// env is the environment the tests' secrets are read from.
func env(name string) (string, bool) {
	v, ok := map[string]string{"PET_KEY": "k-123", "PET_CLIENT": "cid", "PET_SECRET": "cs"}[name]
	return v, ok
}

// runner loads api and returns a runner of its tools through the
// pipeline, and their names.
func runner(t *testing.T, api config.OpenAPI, o openapi.Options) (*invoke.Runner, []string) {
	t.Helper()
	o.LookupEnv = env
	tools, err := openapi.Load(context.Background(), api, o)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	var names []string
	for _, tl := range tools {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return invoke.New(reg, &tool.Context{}, invoke.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))), names
}

// call runs a tool with args and returns its result message.
func call(t *testing.T, r *invoke.Runner, name string, args any) tool.ResultMessage {
	t.Helper()
	b, _ := json.Marshal(args)
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: name, Arguments: b})
}

func text(m tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestPetstore imports the Petstore and runs each operation against the
// server through the pipeline, the API key in a header.
func TestPetstore(t *testing.T) {
	t.Parallel()
	srv := serve(t, func(r *http.Request) bool { return r.Header.Get("X-API-Key") == "k-123" })
	api := config.OpenAPI{Name: "petstore", Spec: spec, BaseURL: srv.URL + "/v1",
		Auth: config.OpenAPIAuth{Type: config.AuthAPIKey, Name: "X-API-Key", Value: "${PET_KEY}"}}
	r, names := runner(t, api, openapi.Options{})
	want := []string{"petstore__findPets", "petstore__addPet", "petstore__find_pet_by_id", "petstore__deletePet"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for _, pet := range []map[string]any{{"name": "Rex", "tag": "dog"}, {"name": "Tom", "tag": "cat"}, {"name": "Fido", "tag": "dog"}} {
		if m := call(t, r, "petstore__addPet", map[string]any{"body": pet}); m.IsError || !strings.Contains(text(m), `"name":"`+pet["name"].(string)) {
			t.Fatalf("addPet %v: %+v", pet, m)
		}
	}
	m := call(t, r, "petstore__findPets", map[string]any{"tags": []string{"dog"}, "limit": 5})
	var found []map[string]any
	if err := json.Unmarshal([]byte(extract(text(m))), &found); err != nil || len(found) != 2 || found[1]["name"] != "Fido" {
		t.Fatalf("findPets: %v %+v", err, m)
	}
	if m := call(t, r, "petstore__find_pet_by_id", map[string]any{"id": 2}); m.IsError || !strings.Contains(text(m), `"name":"Tom"`) {
		t.Fatalf("find pet by id: %+v", m)
	}
	if m := call(t, r, "petstore__deletePet", map[string]any{"id": 2}); m.IsError || !strings.Contains(text(m), "204") {
		t.Fatalf("deletePet: %+v", m)
	}
	m = call(t, r, "petstore__find_pet_by_id", map[string]any{"id": 2})
	if !m.IsError || !strings.Contains(text(m), "404") || !strings.Contains(text(m), "no pet 2") {
		t.Fatalf("a deleted pet: %+v", m)
	}
	// The schema check stops a call that misses a required argument.
	if m := call(t, r, "petstore__addPet", map[string]any{"body": map[string]any{"tag": "x"}}); !m.IsError || !strings.Contains(text(m), "name") {
		t.Fatalf("addPet without a name: %+v", m)
	}
}

// extract returns the text inside the external-content wrapper.
func extract(s string) string {
	if i := strings.IndexAny(s, "[{"); i >= 0 {
		s = s[i:]
	}
	if i := strings.LastIndexAny(s, "]}"); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// TestAuth sends each kind of credentials the way the server asks.
func TestAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		auth  func(srv string) config.OpenAPIAuth
		check func(*http.Request) bool
	}{
		{"apiKey query", func(string) config.OpenAPIAuth {
			return config.OpenAPIAuth{Type: config.AuthAPIKey, In: "query", Name: "api_key", Value: "${PET_KEY}"}
		}, func(r *http.Request) bool { return r.URL.Query().Get("api_key") == "k-123" }},
		{"bearer", func(string) config.OpenAPIAuth {
			return config.OpenAPIAuth{Type: config.AuthBearer, Value: "${PET_KEY}"}
		}, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer k-123" }},
		{"oauth2", func(srv string) config.OpenAPIAuth {
			return config.OpenAPIAuth{Type: config.AuthOAuth2, TokenURL: srv + "/token", ClientID: "${PET_CLIENT}", ClientSecret: "${PET_SECRET}", Scopes: []string{"pets:write"}}
		}, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer tok-1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tc.check)
			r, _ := runner(t, config.OpenAPI{Name: "p", Spec: spec, BaseURL: srv.URL + "/v1", Auth: tc.auth(srv.URL)}, openapi.Options{})
			if m := call(t, r, "p__findPets", map[string]any{}); m.IsError {
				t.Fatalf("%+v", m)
			}
			none, _ := runner(t, config.OpenAPI{Name: "p", Spec: spec, BaseURL: srv.URL + "/v1"}, openapi.Options{})
			if m := call(t, none, "p__findPets", map[string]any{}); !m.IsError || !strings.Contains(text(m), "401") {
				t.Fatalf("without credentials: %+v", m)
			}
		})
	}
}

// TestInclude keeps the operations of the tags and ids named.
func TestInclude(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		include config.OpenAPIInclude
		want    []string
	}{
		{config.OpenAPIInclude{Tags: []string{"admin"}}, []string{"p__deletePet"}},
		{config.OpenAPIInclude{OperationIDs: []string{"findPets", "find pet by id"}}, []string{"p__findPets", "p__find_pet_by_id"}},
		{config.OpenAPIInclude{Tags: []string{"admin"}, OperationIDs: []string{"addPet"}}, []string{"p__addPet", "p__deletePet"}},
	} {
		_, names := runner(t, config.OpenAPI{Name: "p", Spec: spec, BaseURL: "http://127.0.0.1:1", Include: tc.include}, openapi.Options{})
		if !slices.Equal(names, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.include, names, tc.want)
		}
	}
}

// TestDialects compiles every tool's parameters into every dialect — the
// compiled schema is one the provider accepts (Lint finds nothing) and
// still says what the request body needs, its $ref resolved — then calls
// each tool through the pipeline against the server with arguments as a
// model given that schema sends them: in strict mode every property, null
// for those it leaves out.
func TestDialects(t *testing.T) {
	t.Parallel()
	for _, d := range schema.Dialects() {
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			srv := serve(t, func(*http.Request) bool { return true })
			api := config.OpenAPI{Name: "p", Spec: spec, BaseURL: srv.URL + "/v1"}
			tools, err := openapi.Load(context.Background(), api, openapi.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := runner(t, api, openapi.Options{})
			args := map[string]map[string]any{
				"p__addPet":         {"body": map[string]any{"name": "Rex"}},
				"p__findPets":       {"limit": 3},
				"p__find_pet_by_id": {"id": 1},
				"p__deletePet":      {"id": 1},
			}
			for _, tl := range tools {
				form, err := schema.FromSchema(tl.Parameters)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := d.Compile(form)
				if problems := d.Lint(out); len(problems) > 0 {
					t.Errorf("%s: %v", tl.Name, problems)
				}
				b, _ := schema.Encode(out)
				if tl.Name == "p__addPet" && !strings.Contains(string(b), `"name"`) {
					t.Errorf("addPet: the body's NewPet is lost: %s", b)
				}
				a := args[tl.Name]
				if d.Strict() {
					fill(out, a)
				}
				if m := call(t, r, tl.Name, a); m.IsError {
					t.Errorf("%s(%v): %+v", tl.Name, a, m)
				}
			}
		})
	}
}

// fill adds null for each property of the compiled schema s that args
// leave out, in args and in the objects they hold, as a model in strict
// mode sends them.
func fill(s map[string]any, args map[string]any) {
	props, _ := s["properties"].(map[string]any)
	for k, p := range props {
		v, ok := args[k]
		if !ok {
			args[k] = nil
			continue
		}
		if o, ok := v.(map[string]any); ok {
			fill(p.(map[string]any), o)
		}
	}
}

// TestSpecURL fetches the document as web_fetch fetches: a loopback host
// is refused unless allowed, and the API's base URL comes from it.
func TestSpecURL(t *testing.T) {
	t.Parallel()
	srv := serve(t, func(*http.Request) bool { return true })
	api := config.OpenAPI{Name: "p", Spec: srv.URL + "/spec.yaml", BaseURL: srv.URL + "/v1"}
	if _, err := openapi.Load(context.Background(), api, openapi.Options{}); err == nil || !strings.Contains(err.Error(), "allowHosts") {
		t.Fatalf("a loopback spec URL, not allowed: %v", err)
	}
	r, names := runner(t, api, openapi.Options{AllowHosts: []string{strings.TrimPrefix(srv.URL, "http://")}})
	if len(names) != 4 {
		t.Fatalf("tools %v", names)
	}
	if m := call(t, r, "p__findPets", map[string]any{}); m.IsError {
		t.Fatalf("%+v", m)
	}
}

// TestNullable30 reads OpenAPI 3.0's nullable as a type list: a required
// property that may be null takes null (and the request carries it),
// whose schema would otherwise refuse it.
func TestNullable30(t *testing.T) {
	t.Parallel()
	bodies := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	doc := `{"openapi": "3.0.3", "info": {"title": "notes", "version": "1"},
  "paths": {"/notes": {"post": {"operationId": "addNote", "requestBody": {"required": true, "content": {"application/json": {"schema": {
    "type": "object", "required": ["text", "due"],
    "properties": {"text": {"type": "string"}, "due": {"type": "string", "format": "date", "nullable": true}}}}}},
    "responses": {"201": {"description": "added"}}}}}}`
	file := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := runner(t, config.OpenAPI{Name: "n", Spec: file, BaseURL: srv.URL}, openapi.Options{})
	m := call(t, r, "n__addNote", map[string]any{"body": map[string]any{"text": "hi", "due": nil}})
	if m.IsError {
		t.Fatalf("addNote with due null: %+v", m)
	}
	if got := <-bodies; got != `{"due":null,"text":"hi"}` {
		t.Fatalf("addNote with due null sent %s", got)
	}
}

// TestResponses shapes what an API answers: an image as an image, other
// binary content described, not shown.
func TestResponses(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/logo":
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		case "/blob":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0xff, 0xfe, 0x00, 0x81})
		}
	}))
	defer srv.Close()
	doc := `{"openapi": "3.1.0", "info": {"title": "files", "version": "1"}, "paths": {
  "/logo": {"get": {"operationId": "logo", "responses": {"200": {"description": "a PNG"}}}},
  "/blob": {"get": {"operationId": "blob", "responses": {"200": {"description": "bytes"}}}}}}`
	file := filepath.Join(t.TempDir(), "files.json")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := runner(t, config.OpenAPI{Name: "f", Spec: file, BaseURL: srv.URL}, openapi.Options{})
	m := call(t, r, "f__logo", map[string]any{})
	if m.IsError || !slices.ContainsFunc(m.Content, func(c tool.Content) bool { return c.Type == tool.ImageContent && c.MIMEType == "image/png" }) {
		t.Errorf("logo: %+v", m)
	}
	m = call(t, r, "f__blob", map[string]any{})
	if m.IsError || !strings.Contains(text(m), "4 bytes of application/octet-stream, binary, not shown") {
		t.Errorf("blob: %+v", m)
	}
}

// TestHeaderParameters: a header parameter is a property sent as the
// header, except those OpenAPI says are ignored (Accept, Content-Type,
// Authorization), which the model cannot set.
func TestHeaderParameters(t *testing.T) {
	t.Parallel()
	headers := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header
	}))
	defer srv.Close()
	doc := `{"openapi": "3.1.0", "info": {"title": "h", "version": "1"}, "paths": {"/ping": {"get": {"operationId": "ping",
  "parameters": [{"name": "X-Trace", "in": "header", "schema": {"type": "string"}}, {"name": "authorization", "in": "header", "schema": {"type": "string"}}],
  "responses": {"200": {"description": "ok"}}}}}}`
	file := filepath.Join(t.TempDir(), "h.json")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	api := config.OpenAPI{Name: "h", Spec: file, BaseURL: srv.URL}
	tools, err := openapi.Load(context.Background(), api, openapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if props := tools[0].Parameters.Properties; len(props) != 1 || props["X-Trace"] == nil {
		t.Fatalf("properties %v, want X-Trace only", props)
	}
	r, _ := runner(t, api, openapi.Options{})
	if m := call(t, r, "h__ping", map[string]any{"X-Trace": "t-1"}); m.IsError {
		t.Fatalf("%+v", m)
	}
	if h := <-headers; h.Get("X-Trace") != "t-1" || h.Get("Authorization") != "" {
		t.Fatalf("headers sent: %v", h)
	}
}

// TestSecretNotSet: an API whose secret's variable is not set is not
// imported, and the error names the variable.
func TestSecretNotSet(t *testing.T) {
	t.Parallel()
	api := config.OpenAPI{Name: "p", Spec: spec, Auth: config.OpenAPIAuth{Type: config.AuthBearer, Value: "${PET_KEY}"}}
	unset := func(string) (string, bool) { return "", false }
	if _, err := openapi.Load(context.Background(), api, openapi.Options{LookupEnv: unset}); err == nil || !strings.Contains(err.Error(), "auth.value reads $PET_KEY, which is not set") {
		t.Fatalf("err = %v", err)
	}
}
