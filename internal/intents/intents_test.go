package intents_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/intents"
	"github.com/toolbelt/toolbelt/invoke"
)

// durable is an auditor that says whether records are durable now.
type durable struct{ err error }

func (durable) Append(context.Context, audit.Record) error { return nil }
func (d durable) Durable() error                           { return d.err }

// plain is an auditor that cannot tell.
type plain struct{}

func (plain) Append(context.Context, audit.Record) error { return nil }

// TestAnsweringSaysWhetherRecordsAreDurable: the journal's auditor passes
// on what the auditor it wraps says of durability, so the pipeline's audit
// step refuses changes while the disk is full; an auditor that cannot tell
// counts as durable.
func TestAnsweringSaysWhetherRecordsAreDurable(t *testing.T) {
	full := errors.New("the disk is full")
	for _, tc := range []struct {
		inner invoke.Auditor
		want  error
	}{{durable{full}, full}, {durable{}, nil}, {plain{}, nil}} {
		var a invoke.Auditor = intents.Answering{Auditor: tc.inner}
		d, ok := a.(invoke.DurableAuditor)
		if !ok {
			t.Fatal("Answering is not a DurableAuditor: the audit step cannot ask it")
		}
		if got := d.Durable(); !errors.Is(got, tc.want) {
			t.Errorf("%T: Durable() = %v, want %v", tc.inner, got, tc.want)
		}
	}
}
