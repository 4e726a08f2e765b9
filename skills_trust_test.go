package toolbelt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
)

// TestSkillSourcesTrust: the workspace's skills are untrusted even when
// its .toolbelt/skills is a link to a folder outside it, and so is a
// skills.paths folder inside the workspace, as written or through a link;
// a folder outside it is trusted.
func TestSkillSourcesTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".toolbelt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".toolbelt", "skills")); err != nil {
		t.Fatal(err)
	}
	inWs := filepath.Join(ws, "mine")
	linkToWs := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, linkToWs); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	cfg.Skills.Paths = []string{outside, inWs, linkToWs}
	want := map[string]bool{outside: true, inWs: false, linkToWs: false, filepath.Join(ws, ".toolbelt", "skills"): false}
	sources := toolbelt.SkillSources(cfg, ws)
	if len(sources) != 5 {
		t.Fatalf("%d sources: %+v", len(sources), sources)
	}
	for _, s := range sources {
		if trusted, ok := want[s.Path]; ok && s.Trusted != trusted {
			t.Errorf("%s: trusted %v, want %v", s.Path, s.Trusted, trusted)
		}
	}
}
