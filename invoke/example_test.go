package invoke_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// A tool is defined once, from a Go struct, and every call reaches it through
// the pipeline: names repaired, arguments normalized and validated, hooks,
// policy, timeouts and shaping. Every call that does not run normally
// answers in the envelope {"status":…,"tool":…}.
func Example() {
	type weatherArgs struct {
		City  string `json:"city" jsonschema:"The city, e.g. Lisbon" minLength:"1"`
		Units string `json:"units,omitempty" jsonschema:"Temperature units" enum:"celsius,fahrenheit" default:"celsius"`
		Days  int    `json:"days,omitempty" jsonschema:"Days of forecast" minimum:"1" maximum:"7" default:"1"`
	}
	weather := tool.Must(tool.New("get_weather", "Get the weather forecast for a city.",
		func(ctx context.Context, in weatherArgs, inv tool.Invocation) (tool.Result, error) {
			return tool.Textf("%s: sunny for %d day(s), 21 degrees %s", in.City, in.Days, in.Units), nil
		}))
	weather.Meta = tool.Meta{ReadOnly: true}

	reg := registry.New()
	if err := reg.Register(weather); err != nil {
		panic(err)
	}
	hooks := invoke.NewHooks()
	hooks.OnBefore("no-atlantis", 0, func(_ context.Context, c invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		return invoke.BeforeDecision{Block: c.Params["city"] == "Atlantis", Reason: "Atlantis is fictional."}, nil
	})
	r := invoke.New(reg, nil, invoke.WithHooks(hooks))

	// One model turn: results come back in the order of the calls.
	for _, msg := range r.RunBatch(context.Background(), []tool.Call{
		{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lisbon"}`)},
		{ID: "call_2", Name: "functions.Get_Weather", Arguments: json.RawMessage(`"{\"City\":\"Oslo\",\"days\":\"3\"}"`)},
		{ID: "call_3", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":30,"unit":"kelvin"}`)},
		{ID: "call_4", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Atlantis"}`)},
		{ID: "call_5", Name: "get_wether", Arguments: json.RawMessage(`{}`)},
	}) {
		fmt.Printf("%s (error: %v)\n%s\n\n", msg.ToolCallID, msg.IsError, strings.TrimSpace(msg.Content[0].Text))
	}
	// Output:
	// call_1 (error: false)
	// Lisbon: sunny for 1 day(s), 21 degrees celsius
	//
	// call_2 (error: false)
	// Oslo: sunny for 3 day(s), 21 degrees celsius
	//
	// call_3 (error: true)
	// {"status":"error","tool":"get_weather","error":"Validation failed for tool \"get_weather\":\n  - (root): unknown property \"unit\" is not allowed; did you mean \"units\"?\n  - days: maximum: got 30, want at most 7\nReceived arguments:\n{\n  \"city\": \"Paris\",\n  \"days\": 30,\n  \"unit\": \"kelvin\"\n}"}
	//
	// call_4 (error: true)
	// {"status":"blocked","tool":"get_weather","reason":"Atlantis is fictional."}
	//
	// call_5 (error: true)
	// {"status":"error","tool":"get_wether","error":"Tool \"get_wether\" not found. Did you mean \"get_weather\"? Call one of the tools you were given, spelled exactly."}
}
