package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CorpusDirs are the directories of the corpus of real and realistic tool
// schemas (tools/list answers, one server a file), comma-separated and
// relative to the repository's root, as bench/manytools and bench/schema
// take them.
const CorpusDirs = "testdata/mcp-tools,schema/testdata/corpus"

// AbsCorpusDirs is CorpusDirs with each directory made absolute, for a
// process started elsewhere.
func AbsCorpusDirs() string {
	var dirs []string
	for d := range strings.SplitSeq(CorpusDirs, ",") {
		abs, err := filepath.Abs(d)
		Check(err)
		dirs = append(dirs, abs)
	}
	return strings.Join(dirs, ",")
}

// CorpusTool is a tool of the corpus as its server lists it.
type CorpusTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Corpus reads the tools the tools/list answers (*.json) in dirs,
// comma-separated, list.
func Corpus(dirs string) ([]CorpusTool, error) {
	var files []string
	for dir := range strings.SplitSeq(dirs, ",") {
		found, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(found) == 0 {
			return nil, fmt.Errorf("no corpus files in %s", dir)
		}
		files = append(files, found...)
	}
	var out []CorpusTool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var server struct {
			Tools []CorpusTool `json:"tools"`
		}
		if err := json.Unmarshal(b, &server); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, server.Tools...)
	}
	return out, nil
}
