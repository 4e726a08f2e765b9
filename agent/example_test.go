package agent_test

import (
	"context"
	"fmt"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// An agent answers with the help of a tool. The model here is a local
// replay of an Anthropic stream; with a real one, only the client changes:
// llm.New("anthropic/claude-sonnet-4-5", llm.Options{}).
func Example() {
	type weatherArgs struct {
		City string `json:"city"`
	}
	weather := tool.Must(tool.New("get_weather", "Get the weather for a city.",
		func(ctx context.Context, in weatherArgs, inv tool.Invocation) (tool.Result, error) {
			return tool.Textf("%s: sunny, 21 degrees", in.City), nil
		}))
	weather.Meta = tool.Meta{ReadOnly: true}
	reg := registry.New()
	if err := reg.Register(weather); err != nil {
		panic(err)
	}

	server := llmtest.Start(
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "get_weather", Args: `{"city": "Lisbon"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "It is sunny in Lisbon, 21 degrees.")})
	defer server.Close()
	client, err := llm.New("anthropic/claude-test", llm.Options{BaseURL: server.URL, APIKey: "test"})
	if err != nil {
		panic(err)
	}

	a := &agent.Agent{Client: client, Runner: invoke.New(reg, nil), System: "Be brief."}
	a.OnEvent = func(e agent.Event) {
		if e.Type == agent.EventToolEnd {
			fmt.Printf("%s → %s\n", e.ToolName, e.Result.Text())
		}
	}
	transcript, err := a.Run(context.Background(), nil, llm.UserText("What's the weather in Lisbon?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(transcript[len(transcript)-1].Text())
	// Output:
	// get_weather → Lisbon: sunny, 21 degrees
	// It is sunny in Lisbon, 21 degrees.
}
