package agent_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

// adder is a runner with one tool, add, whose a and b must be integers.
func adder(t *testing.T) *invoke.Runner {
	reg := registry.New()
	add := tool.Must(tool.New("add", "Add two integers.", func(ctx context.Context, in addArgs, inv tool.Invocation) (tool.Result, error) {
		return tool.Text(strconv.Itoa(in.A + in.B)), nil
	}))
	add.Meta = tool.Meta{ReadOnly: true}
	if err := reg.Register(add); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, nil)
}

// TestRepair: a model whose add calls fail validation twice in a row has
// the second one repaired by the repair model — sent the schema, the
// arguments and the errors — and run with the repaired arguments; the
// result's details and the audit record say so. A repair that does not
// give valid arguments leaves the failure, recorded too; the first failure
// is never repaired.
func TestRepair(t *testing.T) {
	cases := []struct {
		name, answer string
		ok           bool
	}{
		{"repaired", "```json\n{\"a\":1,\"b\":2}\n```", true},
		{"not JSON", "I cannot.", false},
		{"still invalid", `{"a":"one"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := llmtest.NewRouted(t,
				llmtest.Route{Match: "You repair the arguments", Responses: []llmtest.Response{{Body: llmtest.Chat("", tc.answer)}}},
				llmtest.Route{Responses: []llmtest.Response{
					{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "add", Args: `{"a":"one","b":2}`})},
					{Body: llmtest.Chat("", "", llmtest.Call{ID: "c2", Name: "add", Args: `{"a":"one","b":"two"}`})},
					{Body: llmtest.Chat("", "done")}}})
			a := newAgent(t, "openai/x", s, adder(t))
			fixer, err := llm.New("openai/fixer", llm.Options{BaseURL: s.URL + "/v1", APIKey: "k", Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			var records []audit.Record
			a.Repair = &agent.Repair{Client: fixer, Audit: func(_ context.Context, r audit.Record) error {
				records = append(records, r)
				return nil
			}}
			tr, err := a.Run(context.Background(), nil, llm.UserText("add one and two"))
			if err != nil {
				t.Fatal(err)
			}
			first, second := tr[2], tr[4]
			if !first.IsError || detail(first, "repair") != nil {
				t.Fatalf("the first failure was repaired: %+v", first)
			}
			info, _ := detail(second, "repair").(agent.RepairInfo)
			if second.IsError == tc.ok || info.Model != "openai/fixer" || string(info.Original) != `{"a":"one","b":"two"}` || (info.Error == "") != tc.ok {
				t.Fatalf("second result %q error %v, repair %+v", second.Text(), second.IsError, info)
			}
			if tc.ok && (second.Text() != "3" || string(info.Repaired) != `{"a":1,"b":2}` || second.CallID == "" || second.ToolCallID != "c2") {
				t.Errorf("repaired call: %q %+v (call %s, answers %s)", second.Text(), info, second.CallID, second.ToolCallID)
			}
			if len(records) != 1 || records[0].Kind != audit.KindRepair || records[0].Tool != "add" || records[0].IsError == tc.ok || records[0].CallID != second.CallID {
				t.Errorf("audit records %+v", records)
			}
			var ask string
			for _, r := range s.Requests() {
				if strings.Contains(string(r.Body), "You repair the arguments") {
					ask = string(r.Body)
				}
			}
			for _, want := range []string{`\"b\":\"two\"`, `\"type\":\"integer\"`, "Validation failed"} {
				if !strings.Contains(ask, want) {
					t.Errorf("the repair request lacks %s: %.600s", want, ask)
				}
			}
		})
	}
}

// detail is a result message's detail key.
func detail(m llm.Message, key string) any {
	d, _ := m.Details.(map[string]any)
	return d[key]
}
