package automation

import (
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// When says a schedule's timing in a few words: "30 9 * * 1-5 (UTC)",
// "every 15m", "at 2026-12-24 18:00:00" (local time).
func When(s tool.Schedule) string {
	switch s.Kind {
	case tool.ScheduleCron:
		if s.TZ != "" {
			return s.Expr + " (" + s.TZ + ")"
		}
		return s.Expr + " (UTC)"
	case tool.ScheduleEvery:
		return "every " + s.Every
	case tool.ScheduleAt:
		if s.At != nil {
			return "at " + s.At.Local().Format(time.DateTime)
		}
	}
	return s.Kind
}
