package toolbelt

import (
	"context"
	"fmt"
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
// toolbelt/skills, then the workspace's .toolbelt/skills. The workspace's
// folder, and any folder that is below ws as written or once its links are
// followed, is untrusted — agents can write it — so its skills'
// allowed-tools pre-approve nothing. The workspace's folder stays untrusted
// when it is a link to somewhere else: an agent may have made the link.
func SkillSources(cfg *config.Config, ws string) []skills.Source {
	var dirs []string
	for _, p := range cfg.Skills.Paths {
		dirs = append(dirs, cfg.Resolve(p))
	}
	if base, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(base, "toolbelt", "skills"))
	}
	sources := make([]skills.Source, 0, len(dirs)+1)
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		sources = append(sources, skills.Source{Path: d, Trusted: ws == "" || !below(d, ws) && !realpath.Within(d, ws)})
	}
	return append(sources, skills.Source{Path: filepath.Join(ws, ".toolbelt", "skills")})
}

// below says whether path is root or below it as written, links not
// followed.
func below(path, root string) bool {
	root, err := filepath.Abs(root)
	if err != nil {
		return true
	}
	rel, err := filepath.Rel(root, path)
	return err != nil || rel == "." || filepath.IsLocal(rel)
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

// RestoreSkills makes active again, in the skills of tc (see Skills), the
// skills tc's session loaded before, as its transcript in the store
// records them: a resumed session (chat --resume, run --session) keeps them
// active, with their allowed-tools, as they are configured now
// (skills.Catalog.Restore). It returns their names; without a store, a
// session or skills there is nothing to restore.
func (tb *Toolbelt) RestoreSkills(ctx context.Context, tc *tool.Context) ([]string, error) {
	c, ok := skills.Service.Get(tc)
	key := tc.Identity.SessionKey
	if !ok || len(c.Skills()) == 0 || key == "" || tb.st == nil {
		return nil, nil
	}
	msgs, err := tb.st.Sessions().ForTools().Messages(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading the skills session %s loaded: %w", key, err)
	}
	return c.Restore(key, msgs), nil
}
