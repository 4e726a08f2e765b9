package catalog

import (
	"slices"
	"testing"
)

func TestSectionsInOrder(t *testing.T) {
	t.Parallel()
	var ids []string
	for _, s := range Sections() {
		ids = append(ids, s.ID)
	}
	want := []string{"fs", "runtime", "web", "memory", "sessions", "ui", "messaging", "automation", "nodes", "agents", "media"}
	if !slices.Equal(ids, want) {
		t.Errorf("sections %v", ids)
	}
	if i, ok := SectionOrder("memory"); !ok || i != 3 {
		t.Errorf("SectionOrder(memory) = %d, %v", i, ok)
	}
	if _, ok := SectionOrder("mcp"); ok {
		t.Error("mcp is not a catalog section")
	}
	if SectionTitle("ui") != "UI" || SectionTitle("mcp") != "mcp" {
		t.Error("titles")
	}
}

func TestPlacements(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id, section string
		profiles    []string
	}{
		{"read", "fs", []string{"coding"}},
		{"exec", "runtime", []string{"coding"}},
		{"web_fetch", "web", nil},
		{"sessions_send", "sessions", []string{"coding", "messaging"}},
		{"session_status", "sessions", []string{"minimal", "coding", "messaging"}},
		{"message", "messaging", []string{"messaging"}},
		{"cron", "automation", nil},
		{"nodes", "nodes", nil},
		{"agents_list", "agents", nil},
		{"image", "media", []string{"coding"}},
		{"tts", "media", nil},
	} {
		e, _, ok := Lookup(tc.id)
		if !ok || e.Section != tc.section || !slices.Equal(e.Profiles, tc.profiles) {
			t.Errorf("%s: %+v", tc.id, e)
		}
	}
	// Every entry's section exists, ids are unique, and Lookup returns
	// copies the caller cannot use to change the catalog.
	seen := map[string]bool{}
	for i, e := range Entries() {
		if _, ok := SectionOrder(e.Section); !ok || seen[e.ID] {
			t.Errorf("entry %d %+v", i, e)
		}
		seen[e.ID] = true
	}
	e, _, _ := Lookup("read")
	e.Profiles[0] = "changed"
	e.ParamAliases["file_path"] = "changed"
	if again, _, _ := Lookup("read"); again.Profiles[0] != "coding" || again.ParamAliases["file_path"] != "path" {
		t.Error("Lookup shares the catalog's slices")
	}
	for _, owner := range []string{"cron", "gateway", "nodes"} {
		if e, _, _ := Lookup(owner); !e.OwnerOnly {
			t.Errorf("%s is not owner-only", owner)
		}
	}
}

func TestAliasesAndProfiles(t *testing.T) {
	t.Parallel()
	if id, ok := Alias("bash"); !ok || id != "exec" {
		t.Error("bash")
	}
	if id, ok := Alias("apply-patch"); !ok || id != "apply_patch" {
		t.Error("apply-patch")
	}
	if _, ok := Alias("read"); ok {
		t.Error("read is not an alias")
	}
	if !slices.Equal(Profiles(), []string{"minimal", "coding", "messaging", "full"}) || !IsProfile("full") || IsProfile("all") {
		t.Error("profiles")
	}
}

// TestFileChangingTools: write, edit, apply_patch and tts change files and
// list them; "write" names them all, and nothing else does.
func TestFileChangingTools(t *testing.T) {
	t.Parallel()
	var changers []string
	for _, e := range Entries() {
		if ChangesFiles(e.ID) {
			changers = append(changers, e.ID)
		}
	}
	if want := []string{"write", "edit", "apply_patch", "tts"}; !slices.Equal(changers, want) {
		t.Errorf("tools that change files %v, want %v", changers, want)
	}
	for _, tc := range []struct {
		ref, id string
		want    bool
	}{
		{"write", "write", true}, {"write", "edit", true}, {" write ", "apply_patch", true},
		{"write", "exec", false}, {"write", "read", false}, {"edit", "write", false}, {"apply_patch", "edit", false},
	} {
		if got := NamesFileChanges(tc.ref, tc.id); got != tc.want {
			t.Errorf("NamesFileChanges(%q, %q) = %v", tc.ref, tc.id, got)
		}
	}
}
