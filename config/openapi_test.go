package config

import (
	"strings"
	"testing"
)

// TestOpenAPIConfig reads tools.openapi and refuses what cannot work:
// each refusal a line error that says what to write instead.
func TestOpenAPIConfig(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte(`tools:
  openapi:
    - name: pets
      spec: ./pets.yaml
      include: {tags: [pets], operationIds: [deletePet]}
      auth: {type: oauth2, tokenURL: "https://x.example/token", clientID: "${ID}", clientSecret: "${SECRET}", scopes: [a]}
  exec: {timeoutSeconds: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tools.OpenAPI; len(got) != 1 || got[0].Name != "pets" || got[0].Include.OperationIDs[0] != "deletePet" || got[0].Auth.ClientSecret != "${SECRET}" {
		t.Fatalf("tools.openapi = %+v", got)
	}
	if _, ok := c.Tools.Settings["openapi"]; ok {
		t.Error("tools.openapi is taken for a tool's settings")
	}
	api := "tools:\n  openapi:\n    - name: pets\n      spec: pets.yaml\n"
	for name, tc := range map[string]struct{ yaml, want string }{
		"no name":           {"tools:\n  openapi:\n    - spec: x.yaml\n", "tools.openapi[0] has no name"},
		"no spec":           {"tools:\n  openapi:\n    - name: pets\n", "has no spec"},
		"bad name":          {"tools:\n  openapi:\n    - name: my pets\n      spec: x\n", `.name is "my pets"`},
		"unknown key":       {api + "      baseUrl: http://x\n", "baseUrl"},
		"secret in file":    {api + "      auth: {type: bearer, value: abc}\n", "write ${NAME}"},
		"key without name":  {api + "      auth: {type: apiKey, value: \"${K}\"}\n", "needs name"},
		"unknown auth type": {api + "      auth: {type: bearr, value: \"${K}\"}\n", `did you mean "bearer"`},
		"bad baseURL":       {api + "      baseURL: ftp://x\n", "http:// or https://"},
		"twice":             {api + "    - name: pets\n      spec: y.yaml\n", "used twice"},
	} {
		_, err := Parse("toolbelt.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "toolbelt.yaml:") {
			t.Errorf("%s: err = %v, want a line error mentioning %q", name, err, tc.want)
		}
	}
}

// config check warns about an OpenAPI credential's unset variable.
func TestLintOpenAPISecrets(t *testing.T) {
	t.Parallel()
	c, err := Parse("toolbelt.yaml", []byte("tools:\n  openapi:\n    - name: pets\n      spec: x.yaml\n      auth:\n        type: bearer\n        value: \"${PETS_TOKEN}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := c.Lint(func(string) (string, error) { return "", nil }, func(string) (string, bool) { return "", false })
	if len(ws) != 1 || !strings.Contains(ws[0].Error(), "tools.openapi[0].auth.value refers to ${PETS_TOKEN}, which is not set") || ws[0].Line != 7 {
		t.Errorf("warnings %v", ws)
	}
}
