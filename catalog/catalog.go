// Package catalog is the data that places Toolbelt's core tools: the sections
// in their order, the section and profiles of each core tool, the profiles,
// and the aliases models use for tool names. It holds no tools; the registry
// orders and groups whatever is registered by this data.
package catalog

import (
	"maps"
	"strings"
)

// Section is a part of the catalog.
type Section struct {
	// ID is the section's key ("fs").
	ID string
	// Title is its human name ("Files").
	Title string
}

// Entry places one core tool.
type Entry struct {
	// ID is the tool's name.
	ID string
	// Section is the section it belongs to.
	Section string
	// Profiles lists the profiles that include it (besides "full").
	Profiles []string
	// OwnerOnly marks tools offered only to the owner.
	OwnerOnly bool
	// ParamAliases maps argument names models commonly send to the tool's own.
	ParamAliases map[string]string
	// ChangesFiles marks the tools that change workspace files and whose
	// preview lists every file a call would change (see [ChangesFiles]).
	ChangesFiles bool
}

// The profiles. Full includes every tool.
const (
	ProfileMinimal   = "minimal"
	ProfileCoding    = "coding"
	ProfileMessaging = "messaging"
	ProfileFull      = "full"
)

var sections = []Section{
	{"fs", "Files"},
	{"runtime", "Runtime"},
	{"web", "Web"},
	{"memory", "Memory"},
	{"sessions", "Sessions"},
	{"ui", "UI"},
	{"messaging", "Messaging"},
	{"automation", "Automation"},
	{"nodes", "Nodes"},
	{"agents", "Agents"},
	{"media", "Media"},
}

var (
	coding       = []string{ProfileCoding}
	codingAndMsg = []string{ProfileCoding, ProfileMessaging}
	allProfiles  = []string{ProfileMinimal, ProfileCoding, ProfileMessaging}
)

// fileAliases are the argument names other agents' file tools use.
var fileAliases = map[string]string{
	"file_path": "path", "filePath": "path", "file": "path",
	"old_string": "oldText", "oldString": "oldText", "old_text": "oldText",
	"new_string": "newText", "newString": "newText", "new_text": "newText",
}

var entries = []Entry{
	{ID: "read", Section: "fs", Profiles: coding, ParamAliases: fileAliases},
	{ID: "write", Section: "fs", Profiles: coding, ParamAliases: fileAliases, ChangesFiles: true},
	{ID: "edit", Section: "fs", Profiles: coding, ParamAliases: fileAliases, ChangesFiles: true},
	{ID: "apply_patch", Section: "fs", Profiles: coding, ParamAliases: fileAliases, ChangesFiles: true},
	{ID: "ls", Section: "fs", Profiles: coding, ParamAliases: fileAliases},
	{ID: "find", Section: "fs", Profiles: coding, ParamAliases: fileAliases},
	{ID: "grep", Section: "fs", Profiles: coding, ParamAliases: fileAliases},
	{ID: "exec", Section: "runtime", Profiles: coding},
	{ID: "process", Section: "runtime", Profiles: coding},
	{ID: "web_search", Section: "web"},
	{ID: "web_fetch", Section: "web"},
	{ID: "memory_search", Section: "memory", Profiles: coding},
	{ID: "memory_get", Section: "memory", Profiles: coding},
	{ID: "sessions_list", Section: "sessions", Profiles: codingAndMsg},
	{ID: "sessions_history", Section: "sessions", Profiles: codingAndMsg},
	{ID: "sessions_send", Section: "sessions", Profiles: codingAndMsg},
	{ID: "sessions_spawn", Section: "sessions", Profiles: coding},
	{ID: "subagents", Section: "sessions", Profiles: coding},
	{ID: "session_status", Section: "sessions", Profiles: allProfiles},
	{ID: "result_read", Section: "sessions", Profiles: allProfiles},
	{ID: "todo_write", Section: "sessions", Profiles: codingAndMsg},
	{ID: "skill", Section: "sessions", Profiles: allProfiles},
	{ID: "browser", Section: "ui", Profiles: coding},
	{ID: "canvas", Section: "ui", Profiles: coding},
	{ID: "ask_user", Section: "ui", Profiles: allProfiles},
	{ID: "message", Section: "messaging", Profiles: []string{ProfileMessaging}},
	{ID: "cron", Section: "automation", OwnerOnly: true},
	{ID: "job_status", Section: "automation", Profiles: allProfiles},
	{ID: "job_cancel", Section: "automation", Profiles: allProfiles},
	{ID: "gateway", Section: "automation", OwnerOnly: true},
	{ID: "nodes", Section: "nodes", OwnerOnly: true},
	{ID: "agents_list", Section: "agents"},
	{ID: "image", Section: "media", Profiles: coding},
	{ID: "tts", Section: "media", ChangesFiles: true},
}

var aliases = map[string]string{
	"bash":        "exec",
	"apply-patch": "apply_patch",
}

var profiles = []string{ProfileMinimal, ProfileCoding, ProfileMessaging, ProfileFull}

// index maps a core tool's id to its position in entries.
var index = func() map[string]int {
	m := make(map[string]int, len(entries))
	for i, e := range entries {
		m[e.ID] = i
	}
	return m
}()

// sectionIndex maps a section id to its position in sections.
var sectionIndex = func() map[string]int {
	m := make(map[string]int, len(sections))
	for i, s := range sections {
		m[s.ID] = i
	}
	return m
}()

// Sections returns the catalog's sections in order.
func Sections() []Section { return append([]Section(nil), sections...) }

// SectionOrder returns the position of section id in the catalog, and false
// when the catalog does not know it.
func SectionOrder(id string) (int, bool) {
	i, ok := sectionIndex[id]
	return i, ok
}

// SectionTitle returns the human name of section id, or id itself when the
// catalog does not know it.
func SectionTitle(id string) string {
	if i, ok := sectionIndex[id]; ok {
		return sections[i].Title
	}
	return id
}

// Entries returns the core tools' placements in catalog order.
func Entries() []Entry {
	out := make([]Entry, len(entries))
	for i, e := range entries {
		out[i] = e.clone()
	}
	return out
}

func (e Entry) clone() Entry {
	e.Profiles = append([]string(nil), e.Profiles...)
	e.ParamAliases = maps.Clone(e.ParamAliases)
	return e
}

// Lookup returns the placement of core tool id and its position in catalog
// order.
func Lookup(id string) (Entry, int, bool) {
	i, ok := index[id]
	if !ok {
		return Entry{}, 0, false
	}
	return entries[i].clone(), i, true
}

// Alias returns the tool name an alias stands for ("bash" → "exec").
func Alias(name string) (string, bool) {
	id, ok := aliases[name]
	return id, ok
}

// ChangesFiles reports whether the core tool id changes workspace files and
// lists, in its preview, every file a call would change: write, edit,
// apply_patch and tts.
func ChangesFiles(id string) bool {
	i, ok := index[id]
	return ok && entries[i].ChangesFiles
}

// NamesFileChanges reports whether ref, a tool reference in a policy rule
// or a hook, names the core tool id as one of the tools that change files:
// "write" names them all, so that a rule or hook about writing files
// applies to every tool that writes them.
func NamesFileChanges(ref, id string) bool {
	return strings.TrimSpace(ref) == "write" && ChangesFiles(id)
}

// Profiles returns the profile names, "full" last.
func Profiles() []string { return append([]string(nil), profiles...) }

// IsProfile reports whether name is a known profile.
func IsProfile(name string) bool {
	for _, p := range profiles {
		if p == name {
			return true
		}
	}
	return false
}
