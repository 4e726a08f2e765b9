package auditlog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/store"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "audit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, store.DefaultFile))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	l := auditlog.New(st)
	err = l.Append(ctx, audit.Record{
		CallID:    "call-1",
		Tool:      "exec",
		Arguments: json.RawMessage(`{"command":"deploy","env":{"API_TOKEN":"s3cr3t"}}`),
		Verdicts:  []audit.Verdict{{Layer: "global", Decision: "ask", Rule: "exec"}},
		Confirmation: &audit.Confirmation{
			Asked: true, Answer: "allow-once", By: "terminal",
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	records, err := l.List(ctx, auditlog.Filter{Tool: "exec"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range records {
		fmt.Println(r.Seq, r.Tool, r.Decision(), string(r.Arguments))
	}
	sum, err := l.Verify(ctx)
	fmt.Println("records:", sum.Records, "chain intact:", err == nil)
	// Output:
	// 1 exec allow-once {"command":"deploy","env":{"API_TOKEN":"[redacted]"}}
	// records: 1 chain intact: true
}
