package docs_test

import (
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// demoModelAddr is where the examples marked "model" find a model:
// Ollama's address, where a reader's local Ollama listens.
const demoModelAddr = "127.0.0.1:11434"

// demoConversations is what the model of the examples marked "model"
// answers: each prompt a page sends, matched in the requests' bodies, and
// the model's replies to it in order (a tool call, then the answer once
// the call's result is in). A page that sends a new prompt adds its
// conversation here.
var demoConversations = []llmtest.Route{
	{Match: "Say ok.", Responses: []llmtest.Response{ // toolbelt init's connection test
		{Body: llmtest.Chat("", "ok")},
	}},
	{Match: "Fix the typo in greeting.txt.", Responses: []llmtest.Response{ // governance.md, read before edit
		{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "edit", Args: `{"path":"greeting.txt","edits":[{"oldText":"wrold","newText":"world"}]}`})},
		{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_2", Name: "read", Args: `{"path":"greeting.txt"}`})},
		{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_3", Name: "edit", Args: `{"path":"greeting.txt","edits":[{"oldText":"wrold","newText":"world"}]}`})},
		{Body: llmtest.Chat("", "Fixed: it now says \"Hello, world.\"")},
	}},
	{Match: "Start a TODO list.", Responses: []llmtest.Response{ // governance.md, rewind
		{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "write", Args: `{"path":"TODO.md","content":"- [ ] ship\n"}`}, llmtest.Call{ID: "call_2", Name: "exec", Args: `{"command":"date > started.txt"}`})},
		{Body: llmtest.Chat("", "Wrote TODO.md.")},
	}},
	{Match: "What colour is the dot?", Responses: []llmtest.Response{ // media.md, image
		{Body: llmtest.Chat("", "The dot is blue.")},
	}},
	{Match: "What do my notes say?", Responses: []llmtest.Response{
		{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "read", Args: `{"path":"notes.txt"}`})},
		{Body: llmtest.Chat("", "Your notes say to buy milk and to call Ada at 3.")},
	}},
}

// demoModelBusy lets one block at a time have the model's address.
var demoModelBusy sync.Mutex

// demoModel gives an example marked "model" the local model it talks to
// while it runs: a replay server answering demoConversations, reached at
// demoModelAddr with the wire format of Ollama (and llama.cpp, vLLM: Chat
// Completions). Where something else listens there (a real Ollama), the
// example is skipped, saying so.
func demoModel(t *testing.T) {
	t.Helper()
	demoModelBusy.Lock()
	t.Cleanup(demoModelBusy.Unlock)
	ln, err := net.Listen("tcp", demoModelAddr)
	if err != nil {
		t.Skipf("the example talks to a model at %s, where this machine cannot listen (a model server of its own?): %v", demoModelAddr, err)
	}
	t.Cleanup(func() { ln.Close() })
	s := llmtest.NewRouted(t, slices.Clone(demoConversations)...)
	go forwardAll(ln, strings.TrimPrefix(s.URL, "http://"))
}
