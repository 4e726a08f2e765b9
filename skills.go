package toolbelt

import (
	"os"
	"path/filepath"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/skills"
)

// SkillSources lists where an agent working in the workspace ws finds
// skills, in order of precedence: the folders of skills.paths, the user's
// toolbelt/skills, then the workspace's .toolbelt/skills. A folder below ws
// is untrusted — agents can write it — so its skills' allowed-tools
// pre-approve nothing.
func SkillSources(cfg *config.Config, ws string) []skills.Source {
	var dirs []string
	for _, p := range cfg.Skills.Paths {
		dirs = append(dirs, cfg.Resolve(p))
	}
	if base, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(base, "toolbelt", "skills"))
	}
	dirs = append(dirs, filepath.Join(ws, ".toolbelt", "skills"))
	sources := make([]skills.Source, len(dirs))
	for i, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		sources[i] = skills.Source{Path: d, Trusted: ws == "" || !realpath.Within(d, ws)}
	}
	return sources
}

// Skills loads the skills of the workspace tc runs in (SkillSources),
// hands them to tc's skill tool, and returns the text that lists them for
// the system prompt ("" without skills), the runner option that applies
// the allowed-tools of the skills the session loads, and the skills that
// were left out and why.
func Skills(cfg *config.Config, tc *tool.Context) (listing string, opt invoke.Option, problems []error) {
	list, problems := skills.Load(SkillSources(cfg, tc.Workspace))
	c := skills.NewCatalog(list)
	skills.Service.Set(tc, c)
	return c.Listing(), invoke.WithSkills(c), problems
}
