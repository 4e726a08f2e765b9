package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// maxModelList bounds the answer of a server asked for its models.
const maxModelList = 4 << 20

// Models returns the names of the models the OpenAI-compatible server at
// baseURL (http://host:port/v1) has, sorted: its GET /models, and for
// Ollama, when that fails, its own GET /api/tags. Its error says why the
// list could not be read.
func Models(ctx context.Context, p Provider, baseURL string) ([]string, error) {
	if p.API != APIOpenAIChat {
		return nil, fmt.Errorf("%s does not list its models the OpenAI way", p.Name)
	}
	base := strings.TrimSuffix(baseURL, "/")
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := getJSON(ctx, base+"/models", &list)
	if err == nil {
		names := make([]string, len(list.Data))
		for i, m := range list.Data {
			names[i] = m.ID
		}
		return modelNames(names), nil
	}
	if p.Name != "ollama" {
		return nil, err
	}
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if terr := getJSON(ctx, strings.TrimSuffix(base, "/v1")+"/api/tags", &tags); terr != nil {
		return nil, err
	}
	names := make([]string, len(tags.Models))
	for i, m := range tags.Models {
		names[i] = m.Name
	}
	return modelNames(names), nil
}

// getJSON reads the JSON answer of GET url into v.
func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxModelList)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: the answer is not the JSON of a model list: %v", url, err)
	}
	return nil
}

// modelNames returns the names sorted, without empty ones or repeats.
func modelNames(names []string) []string {
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
	slices.Sort(names)
	return slices.Compact(names)
}
