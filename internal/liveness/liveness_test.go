package liveness_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/internal/liveness"
)

// TestAliveUntilReleased: a holder is alive to every other open of its
// file until it lets go; a released or swept one is not.
func TestAliveUntilReleased(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, err := liveness.Hold(dir)
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := liveness.Alive(dir, h.Name()); !alive || err != nil {
		t.Fatalf("Alive of a holder = %v, %v", alive, err)
	}
	if err := h.Release(false); err != nil {
		t.Fatal(err)
	}
	if alive, err := liveness.Alive(dir, h.Name()); alive || err != nil {
		t.Fatalf("Alive after Release = %v, %v", alive, err)
	}
	for _, name := range []string{"", "gone.lock"} {
		if alive, err := liveness.Alive(dir, name); alive || err != nil {
			t.Errorf("Alive(%q) = %v, %v", name, alive, err)
		}
	}
	for _, name := range []string{"../x.lock", "site"} {
		if _, err := liveness.Alive(dir, name); err == nil {
			t.Errorf("Alive(%q) accepted a name that is no lock", name)
		}
	}
}

// TestSweep: the files of ended holders go, unless kept; a holder's file
// stays; a file still under its temporary name is never taken.
func TestSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var ended []string
	for range 3 {
		h, err := liveness.Hold(dir)
		if err != nil {
			t.Fatal(err)
		}
		ended = append(ended, h.Name())
		h.Release(false)
	}
	live, err := liveness.Hold(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A lock file not yet locked has a temporary name.
	making := ".0123456789abcdef.tmp"
	if err := os.WriteFile(filepath.Join(dir, making), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := liveness.Sweep(dir, func(name string) bool { return name == ended[0] }); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := map[string]bool{ended[0]: true, live.Name(): true, making: true}
	if len(left) != len(want) || !want[left[0]] || !want[left[1]] || !want[left[2]] {
		t.Errorf("left %v, want %v", left, want)
	}
	if err := live.Release(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, live.Name())); !os.IsNotExist(err) {
		t.Errorf("Release(true) left the file: %v", err)
	}
}

// TestSite: the processes of one directory get one id, made once.
func TestSite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := liveness.Site(dir)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("site ids %v, want one", ids)
		}
	}
	other, err := liveness.Site(t.TempDir())
	if err != nil || other == ids[0] {
		t.Errorf("another directory's id = %q, %v", other, err)
	}
}

// TestPID: the process id in the name of a lock Hold made, and none in
// names Hold does not make.
func TestPID(t *testing.T) {
	h, err := liveness.Hold(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(true)
	if pid, ok := liveness.PID(h.Name()); !ok || pid != os.Getpid() {
		t.Errorf("PID(%q) = %d, %v; want %d", h.Name(), pid, ok, os.Getpid())
	}
	for _, name := range []string{"", "site", "abc-x.lock", "12.lock", "-1-x.lock", "0-x.lock", "12-x.spool"} {
		if pid, ok := liveness.PID(name); ok {
			t.Errorf("PID(%q) = %d, true; want none", name, pid)
		}
	}
}
