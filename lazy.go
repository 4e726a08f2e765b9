package toolbelt

import (
	"context"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// With Options.ToolsOnly the store is opened only when a tool's service
// uses it: listing and describing tools writes nothing (opening a SQLite
// store creates its file). The services below stand for the store's until
// then.

// lazySessions is the store's sessions, opened when first used.
type lazySessions struct{ tb *Toolbelt }

func (l lazySessions) sessions() (sessions.Store, error) {
	st, err := l.tb.lazyStore()
	if err != nil {
		return nil, err
	}
	return st.Sessions().ForTools(), nil
}

func (l lazySessions) List(ctx context.Context, f tool.SessionFilter) ([]tool.SessionInfo, error) {
	ss, err := l.sessions()
	if err != nil {
		return nil, err
	}
	return ss.List(ctx, f)
}

func (l lazySessions) Info(ctx context.Context, key string) (tool.SessionInfo, bool, error) {
	ss, err := l.sessions()
	if err != nil {
		return tool.SessionInfo{}, false, err
	}
	return ss.Info(ctx, key)
}

func (l lazySessions) Messages(ctx context.Context, key string) ([]tool.SessionMessage, error) {
	ss, err := l.sessions()
	if err != nil {
		return nil, err
	}
	return ss.Messages(ctx, key)
}

// lazyCron is the workspace's schedules, opened when first used.
type lazyCron struct{ tb *Toolbelt }

func (l lazyCron) cron() (cron.Scheduler, error) {
	if _, err := l.tb.lazyStore(); err != nil {
		return nil, err
	}
	return l.tb.sched, nil
}

func (l lazyCron) Add(ctx context.Context, s tool.Schedule) (tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return s, err
	}
	return c.Add(ctx, s)
}

func (l lazyCron) Update(ctx context.Context, s tool.Schedule) (tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return s, err
	}
	return c.Update(ctx, s)
}

func (l lazyCron) Get(ctx context.Context, id string) (tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return tool.Schedule{}, err
	}
	return c.Get(ctx, id)
}

func (l lazyCron) Remove(ctx context.Context, id string) error {
	c, err := l.cron()
	if err != nil {
		return err
	}
	return c.Remove(ctx, id)
}

func (l lazyCron) List(ctx context.Context) ([]tool.Schedule, error) {
	c, err := l.cron()
	if err != nil {
		return nil, err
	}
	return c.List(ctx)
}

func (l lazyCron) RunNow(ctx context.Context, id string) (tool.ScheduleRun, error) {
	c, err := l.cron()
	if err != nil {
		return tool.ScheduleRun{}, err
	}
	return c.RunNow(ctx, id)
}

func (l lazyCron) Runs(ctx context.Context, id string, limit int) ([]tool.ScheduleRun, error) {
	c, err := l.cron()
	if err != nil {
		return nil, err
	}
	return c.Runs(ctx, id, limit)
}

// lazyMemory is the memory index of the store, opened when first used.
type lazyMemory struct{ tb *Toolbelt }

func (l lazyMemory) index() (*store.Memory, error) {
	st, err := l.tb.lazyStore()
	if err != nil {
		return nil, err
	}
	return st.Memory(), nil
}

func (l lazyMemory) Stamps(ctx context.Context, scope string) (map[string]string, error) {
	m, err := l.index()
	if err != nil {
		return nil, err
	}
	return m.Stamps(ctx, scope)
}

func (l lazyMemory) Update(ctx context.Context, scope string, files []tool.MemoryFile) error {
	m, err := l.index()
	if err != nil {
		return err
	}
	return m.Update(ctx, scope, files)
}

func (l lazyMemory) Search(ctx context.Context, scope, query string, limit int) ([]tool.MemoryHit, error) {
	m, err := l.index()
	if err != nil {
		return nil, err
	}
	return m.Search(ctx, scope, query, limit)
}
