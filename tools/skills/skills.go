// Package skills provides Agent Skills, in Anthropic's format: a folder
// with a SKILL.md whose YAML front matter gives the skill's name, its
// description and, optionally, its allowed-tools, and whose body says how
// to do the task; further files in the folder are read on demand. The
// model is shown each skill's name and description only ([Catalog.Listing],
// for the system prompt) and loads one with the skill tool when it
// chooses. A loaded skill's allowed-tools are pre-approved in the caller's
// session from then on — they run without a person being asked, though
// deny and ask rules still win — unless the skill is untrusted (found in
// the workspace, which agents and what they read can write): those
// pre-approve nothing.
package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/tool"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Skill is a skill found in a folder.
type Skill struct {
	// Name and Description are the front matter's: what the model is shown.
	Name        string
	Description string
	// AllowedTools are the policy references of the front matter's
	// allowed-tools ("read", "exec(git diff:*)"), tool names lower-cased.
	AllowedTools []string
	// Dir is the skill's folder, absolute.
	Dir string
	// Trusted is false for a skill from the workspace: its AllowedTools
	// pre-approve nothing.
	Trusted bool
	// Body is SKILL.md after the front matter.
	Body string
}

// Source is a folder whose subfolders are skills.
type Source struct {
	Path string
	// Trusted is false for the workspace's folder.
	Trusted bool
}

// Load reads the skills of sources, in order: a skill whose name an
// earlier source already gave is left out (so a workspace, listed last,
// cannot stand in for a configured skill), and so is a folder whose
// SKILL.md is not a valid skill; each is reported in problems. A source
// that does not exist has no skills.
func Load(sources []Source) (list []Skill, problems []error) {
	seen := map[string]string{}
	for _, src := range sources {
		dirs, err := os.ReadDir(src.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, err)
			}
			continue
		}
		for _, d := range dirs {
			dir := filepath.Join(src.Path, d.Name())
			if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
				continue
			}
			s, err := Parse(dir)
			switch {
			case err != nil:
				problems = append(problems, err)
			case seen[s.Name] != "":
				problems = append(problems, fmt.Errorf("skill %s in %s: left out, %s has a skill of that name", s.Name, dir, seen[s.Name]))
			default:
				s.Trusted = src.Trusted
				seen[s.Name] = dir
				list = append(list, s)
			}
		}
	}
	return list, problems
}

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Parse reads the skill in dir from its SKILL.md: the front matter must
// give a name (lower-case letters, digits and single hyphens, at most 64
// characters, the folder's name) and a description (at most 1024
// characters); allowed-tools is a list or a string of space-separated
// references.
func Parse(dir string) (Skill, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Skill{}, err
	}
	b, err := os.ReadFile(filepath.Join(abs, FileName))
	if err != nil {
		return Skill{}, err
	}
	front, body, ok := frontMatter(b)
	if !ok {
		return Skill{}, fmt.Errorf("%s: no front matter: it starts with a --- line, then name: and description:, then ---", filepath.Join(abs, FileName))
	}
	var fm struct {
		Name         string `yaml:"name"`
		Description  string `yaml:"description"`
		AllowedTools any    `yaml:"allowed-tools"`
	}
	if err := yaml.Unmarshal(front, &fm); err != nil {
		return Skill{}, fmt.Errorf("%s: front matter: %w", filepath.Join(abs, FileName), err)
	}
	s := Skill{Name: fm.Name, Description: strings.TrimSpace(fm.Description), Dir: abs, Body: strings.TrimSpace(string(body))}
	switch {
	case !namePattern.MatchString(s.Name) || len(s.Name) > 64:
		return Skill{}, fmt.Errorf("%s: name %q: use at most 64 lower-case letters, digits and single hyphens", filepath.Join(abs, FileName), s.Name)
	case s.Name != filepath.Base(abs):
		return Skill{}, fmt.Errorf("%s: name %q is not its folder's name %q", filepath.Join(abs, FileName), s.Name, filepath.Base(abs))
	case s.Description == "" || len(s.Description) > 1024:
		return Skill{}, fmt.Errorf("%s: description: give one of at most 1024 characters", filepath.Join(abs, FileName))
	}
	if s.AllowedTools, err = allowedTools(fm.AllowedTools); err != nil {
		return Skill{}, fmt.Errorf("%s: allowed-tools: %w", filepath.Join(abs, FileName), err)
	}
	return s, nil
}

// frontMatter splits a SKILL.md into its front matter and body.
func frontMatter(b []byte) (front, body []byte, ok bool) {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, nil, false
	}
	if front, body, ok = bytes.Cut(rest, []byte("\n---\n")); ok {
		return front, body, true
	}
	front, ok = bytes.CutSuffix(rest, []byte("\n---"))
	return front, nil, ok
}

// allowedTools reads allowed-tools: a list, or a string of references
// separated by spaces or commas outside parentheses ("Read Bash(git diff:*)"),
// each tool name lower-cased and an alias replaced by its tool ("exec(git diff:*)").
func allowedTools(v any) ([]string, error) {
	var refs []string
	switch v := v.(type) {
	case nil:
	case string:
		refs = splitRefs(v)
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%v is not a tool name", e)
			}
			refs = append(refs, strings.TrimSpace(s))
		}
	default:
		return nil, fmt.Errorf("give a list or a string of tool names")
	}
	out := refs[:0]
	for _, r := range refs {
		if r == "" {
			continue
		}
		name, spec, _ := strings.Cut(r, "(")
		if spec != "" {
			spec = "(" + spec
		}
		name = strings.ToLower(name)
		if id, ok := catalog.Alias(name); ok {
			name = id
		}
		out = append(out, name+spec)
	}
	return out, nil
}

// splitRefs splits s at spaces and commas that are not inside parentheses.
func splitRefs(s string) []string {
	var refs []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ' ' || r == ',' || r == '\t') && depth == 0:
			refs = append(refs, s[start:i])
			start = i + 1
		}
	}
	return append(refs, s[start:])
}

// Catalog is the skills an agent can load, and which of them are active
// in each session. It is safe for concurrent use.
type Catalog struct {
	skills []Skill

	mu     sync.Mutex
	active map[string][]string // session key → allowed-tools of its trusted active skills
}

// NewCatalog makes a catalog of list.
func NewCatalog(list []Skill) *Catalog { return &Catalog{skills: list} }

// Skills returns the catalog's skills.
func (c *Catalog) Skills() []Skill { return slices.Clone(c.skills) }

// Get returns the skill called name.
func (c *Catalog) Get(name string) (Skill, bool) {
	i := slices.IndexFunc(c.skills, func(s Skill) bool { return s.Name == name })
	if i < 0 {
		return Skill{}, false
	}
	return c.skills[i], true
}

// Listing is what the system prompt says of the skills: each one's name
// and description (a workspace skill's marked untrusted), and how to load
// one; "" without skills.
func (c *Catalog) Listing() string {
	if c == nil || len(c.skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills: when a task matches one of these, load its instructions with the skill tool (name) before you start, and follow them.\n")
	for _, s := range c.skills {
		from := ""
		if !s.Trusted {
			from = " (from the workspace: untrusted)"
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", s.Name, from, strings.Join(strings.Fields(s.Description), " "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// activate makes s active in session: a trusted skill's allowed-tools are
// pre-approved there from now on.
func (c *Catalog) activate(session string, s Skill) {
	if !s.Trusted || len(s.AllowedTools) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active == nil {
		c.active = map[string][]string{}
	}
	for _, ref := range s.AllowedTools {
		if !slices.Contains(c.active[session], ref) {
			c.active[session] = append(c.active[session], ref)
		}
	}
}

// Restore makes active again in session the skills its stored transcript
// (msgs) shows it loaded — the skill tool's results that succeeded — so a
// resumed session keeps them, with their allowed-tools. Each is taken as
// the catalog has it now: a skill gone, or no longer trusted, pre-approves
// nothing. It returns the names of the skills made active again.
func (c *Catalog) Restore(session string, msgs []tool.SessionMessage) []string {
	var names []string
	for _, msg := range msgs {
		var m struct {
			Role     string  `json:"role"`
			ToolName string  `json:"toolName"`
			IsError  bool    `json:"isError"`
			Details  Details `json:"details"`
		}
		if json.Unmarshal(msg.Body, &m) != nil || m.Role != tool.RoleToolResult || m.ToolName != Name || m.IsError || m.Details.File != "" {
			continue
		}
		s, ok := c.Get(m.Details.Name)
		if !ok || slices.Contains(names, s.Name) {
			continue
		}
		c.activate(session, s)
		names = append(names, s.Name)
	}
	return names
}

// SkillRules returns the allowed-tools of the trusted skills active in
// session: the allow rules the pipeline's policy applies as its "skill"
// layer (see invoke.WithSkills).
func (c *Catalog) SkillRules(session string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.active[session])
}

// Service is the key of the Catalog a tool context carries; without one
// the skill tool is not offered.
var Service = tool.NewService[*Catalog]()
