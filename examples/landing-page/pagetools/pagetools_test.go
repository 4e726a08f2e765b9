package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteHTMLStaysInTheWorkspace: write_html writes files and folders of
// the workspace, and refuses a path, or a link, that leads out of it.
func TestWriteHTMLStaysInTheWorkspace(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	ss := newSites()
	defer ss.Close()
	s, err := ss.of(ws)
	if err != nil {
		t.Fatal(err)
	}
	call := func(file string) error {
		args, _ := json.Marshal(map[string]string{"filename": file, "content": "<p>hi</p>"})
		_, err := writeHTML(context.Background(), s, args)
		return err
	}
	if err := call("css/site/styles.css"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "css", "site", "styles.css")); err != nil || string(b) != "<p>hi</p>" {
		t.Errorf("the file: %q, %v", b, err)
	}
	for _, file := range []string{"../escape.html", filepath.Join(outside, "abs.html"), "out/linked.html"} {
		if err := call(file); err == nil {
			t.Errorf("%s was written", file)
		}
	}
	if left, _ := os.ReadDir(outside); len(left) > 0 {
		t.Errorf("files outside the workspace: %v", left)
	}
}

// TestJudge: what was measured becomes findings — overflow at any
// viewport, the document's own flaws once (at desktop), weight over the
// budget only.
func TestJudge(t *testing.T) {
	t.Parallel()
	all := map[string]bool{"responsive": true, "performance": true}
	tests := []struct {
		name, vp string
		m        measured
		opts     map[string]bool
		want     []string
	}{
		{"a sound page", "desktop", measured{Width: 1440, ScrollWidth: 1440, ViewportMeta: true, Bytes: 100 << 10}, all, nil},
		{"overflow on a phone", "mobile", measured{Width: 375, ScrollWidth: 1100, Overflowing: []string{"section#menu"}}, map[string]bool{"responsive": true}, []string{"horizontal-overflow"}},
		{"document flaws once", "tablet", measured{Width: 768, ScrollWidth: 768, UnsizedImages: []string{"img"}}, map[string]bool{"responsive": true}, nil},
		{"document flaws at desktop", "desktop", measured{Width: 1440, ScrollWidth: 1440, UnsizedImages: []string{"img"}}, all, []string{"meta-viewport", "image-dimensions"}},
		{"over the budget", "desktop", measured{Width: 1440, ScrollWidth: 1440, ViewportMeta: true, Bytes: 501 << 10}, all, []string{"page-weight"}},
		{"responsive not asked", "desktop", measured{Width: 1440, ScrollWidth: 2000}, map[string]bool{"performance": true}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, i := range judge(tt.vp, tt.m, tt.opts, defaultBudgetKB) {
			got = append(got, i.Rule)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
