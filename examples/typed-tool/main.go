// Command typed-tool defines a tool from a Go struct and runs one model
// turn of calls through the pipeline: names are repaired, arguments are
// normalized and validated against the inferred schema, and every error
// comes back as a result a model can act on.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// weatherArgs are the tool's parameters; the schema is inferred from the
// struct, its tags add descriptions, enums, bounds and defaults.
type weatherArgs struct {
	City  string `json:"city" jsonschema:"The city, e.g. Lisbon" minLength:"1"`
	Units string `json:"units,omitempty" jsonschema:"Temperature units" enum:"celsius,fahrenheit" default:"celsius"`
	Days  int    `json:"days,omitempty" jsonschema:"Days of forecast" minimum:"1" maximum:"7" default:"1"`
}

func main() {
	weather := tool.Must(tool.New("get_weather", "Get the weather forecast for a city.",
		func(ctx context.Context, in weatherArgs, inv tool.Invocation) (tool.Result, error) {
			return tool.Textf("%s: sunny for %d day(s), 21 degrees %s", in.City, in.Days, in.Units), nil
		}))
	weather.Meta = tool.Meta{ReadOnly: true}

	reg := registry.New()
	if err := reg.Register(weather); err != nil {
		panic(err)
	}
	r := invoke.New(reg, nil)

	// One model turn: the calls run concurrently and their results come
	// back in the order of the calls.
	for _, msg := range r.RunBatch(context.Background(), []tool.Call{
		{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lisbon"}`)},
		{ID: "call_2", Name: "functions.Get_Weather", Arguments: json.RawMessage(`"{\"City\":\"Oslo\",\"days\":\"3\"}"`)},
		{ID: "call_3", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":30,"unit":"kelvin"}`)},
		{ID: "call_4", Name: "get_wether", Arguments: json.RawMessage(`{}`)},
	}) {
		fmt.Printf("%s (error: %v)\n%s\n\n", msg.ToolCallID, msg.IsError, strings.TrimSpace(msg.Content[0].Text))
	}
}
