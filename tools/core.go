// Package tools assembles Toolbelt's built-in tools; each section's tools
// live in a package of their own below it (tools/fs, tools/shell, …).
package tools

import (
	"io"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tools/agents"
	"github.com/toolbelt/toolbelt/tools/ask"
	"github.com/toolbelt/toolbelt/tools/canvas"
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/tools/gateway"
	"github.com/toolbelt/toolbelt/tools/image"
	"github.com/toolbelt/toolbelt/tools/jobtools"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/message"
	"github.com/toolbelt/toolbelt/tools/nodes"
	"github.com/toolbelt/toolbelt/tools/sessions"
	"github.com/toolbelt/toolbelt/tools/shell"
	"github.com/toolbelt/toolbelt/tools/skills"
	"github.com/toolbelt/toolbelt/tools/todo"
	"github.com/toolbelt/toolbelt/tools/tts"
	"github.com/toolbelt/toolbelt/tools/web"
)

// Core returns a new registry filled with the built-in tools that are
// implemented, each in its catalog section, and a closer that stops what the
// tools keep running (background commands, the memory index's file
// watchers); close it when done. It panics if
// a built-in tool's definition is invalid, which is a bug in Toolbelt.
func Core() (*registry.Registry, io.Closer) {
	reg := registry.New()
	must := func(err error) {
		if err != nil {
			panic("toolbelt: registering the built-in tools: " + err.Error())
		}
	}
	must(fs.Register(reg))
	commands, err := shell.Register(reg)
	must(err)
	must(sessions.Register(reg))
	must(sessions.RegisterReaders(reg))
	must(todo.Register(reg))
	must(skills.Register(reg))
	must(jobtools.Register(reg))
	must(sessions.RegisterHosted(reg))
	must(agents.Register(reg))
	mem := memory.NewIndexer(memory.DefaultRescan)
	mem.Watch = true
	must(memory.Register(reg, mem))
	must(web.Register(reg, web.Options{}))
	must(cron.Register(reg))
	must(canvas.Register(reg))
	must(ask.Register(reg))
	must(image.Register(reg, image.Options{}))
	must(tts.Register(reg))
	must(message.Register(reg))
	must(gateway.Register(reg))
	must(nodes.Register(reg))
	return reg, closers{commands, mem}
}

// closers closes each of its closers, returning the first error.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
