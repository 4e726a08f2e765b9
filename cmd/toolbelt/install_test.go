package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// TestGoInstall: installCommand, the command the CLI and the docs
// recommend, installs a working toolbelt from a module proxy. The test
// publishes this checkout as github.com/toolbelt/toolbelt v0.99.0 in a proxy
// on disk, the only version it lists (so @latest is v0.99.0), runs
// installCommand with a fresh GOPATH, GOBIN and module cache and GOPROXY
// naming that proxy first, then the module cache's downloads and the usual
// proxy for the dependencies, checks what it downloaded against go.sum, and
// runs the installed `toolbelt --version`. A replace in go.mod fails it (go
// install refuses a module that has one), as does a package that does not
// build from the module's zip alone.
//
// When the module cache holds the dependencies, nothing comes from the
// network: GOSUMDB=off, as the checksum database would be asked about each
// of them (go install outside a module reads no go.sum); sumsMatch checks
// them against the checkout's go.sum instead, before anything installed
// runs. The build cache is the usual one, and -trimpath keys it by module
// version, not by the fresh module cache's directory, so later runs reuse
// what earlier ones compiled.
func TestGoInstall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: not building toolbelt with go install")
	}
	for _, name := range []string{"go", "git"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("go install from a module proxy needs %s in PATH: %v", name, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	published := module.Version{Path: "github.com/toolbelt/toolbelt", Version: "v0.99.0"}
	proxy := t.TempDir()
	publishModule(t, proxy, root, published)

	goEnv, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	modCache, goProxy, _ := strings.Cut(strings.TrimSpace(string(goEnv)), "\n")
	work := t.TempDir()
	bin, freshCache := filepath.Join(work, "bin"), filepath.Join(work, "mod")
	args := strings.Fields(installCommand)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"GOPROXY="+fileURL(proxy)+","+fileURL(filepath.Join(modCache, "cache", "download"))+","+goProxy,
		"GOSUMDB=off", "GOPRIVATE=", "GONOPROXY=", "GONOSUMDB=",
		"GOFLAGS=-mod=mod -modcacherw -trimpath", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOPATH="+filepath.Join(work, "gopath"), "GOMODCACHE="+freshCache, "GOBIN="+bin,
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", installCommand, err, out)
	}
	sumsMatch(t, freshCache, filepath.Join(root, "go.sum"), published.Path)
	out, err := exec.Command(filepath.Join(bin, "toolbelt"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("the installed toolbelt --version: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "toolbelt "+published.Version; got != want {
		t.Errorf("the installed toolbelt --version printed %q, want %q", got, want)
	}
}

// TestInstallCommandInDocs: where the README and the manual say how to
// install toolbelt from the module proxy, they give installCommand, the
// command TestGoInstall runs.
func TestInstallCommandInDocs(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	command := regexp.MustCompile("go install github\\.com/toolbelt/[^\\s`'\")]*")
	for _, page := range append(pages, filepath.Join("..", "..", "README.md")) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range command.FindAll(b, -1) {
			if string(c) != installCommand {
				t.Errorf("%s recommends %q, not %q, the command TestGoInstall runs", page, c, installCommand)
			}
		}
	}
}

// publishModule writes module m to the module proxy in dir (the list, .info,
// .mod and .zip files of the GOPROXY protocol), made of the files git shows
// in the checkout at root: the tracked ones and the new ones it does not
// ignore, as they are on disk. The zip follows the go command's rules
// (golang.org/x/mod/zip): nested modules and vendor directories are left out.
func publishModule(t *testing.T, dir, root string, m module.Version) {
	t.Helper()
	at := filepath.Join(dir, filepath.FromSlash(m.Path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	if err := zip.Create(&archive, m, checkoutFiles(t, root)); err != nil {
		t.Fatalf("the module zip: %v", err)
	}
	for name, data := range map[string][]byte{
		"list":              []byte(m.Version + "\n"),
		m.Version + ".info": info,
		m.Version + ".mod":  goMod,
		m.Version + ".zip":  archive.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkoutFiles lists the files of the git checkout at root: tracked (as
// they are on disk, edits included) and untracked but not ignored.
func checkoutFiles(t *testing.T, root string) []zip.File {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	var files []zip.File
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		f := checkoutFile{root: root, name: name}
		if _, err := f.Lstat(); errors.Is(err, fs.ErrNotExist) { // tracked, but deleted
			continue
		}
		files = append(files, f)
	}
	return files
}

// checkoutFile is a file of the checkout, named by its slash-separated path
// from the root, as golang.org/x/mod/zip reads it.
type checkoutFile struct{ root, name string }

func (f checkoutFile) Path() string                 { return f.name }
func (f checkoutFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.abs()) }
func (f checkoutFile) Open() (io.ReadCloser, error) { return os.Open(f.abs()) }
func (f checkoutFile) abs() string                  { return filepath.Join(f.root, filepath.FromSlash(f.name)) }

// fileURL is the file:// URL of a local directory, as GOPROXY takes it.
func fileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// sumsMatch checks every module downloaded into the module cache at
// modCache, but module self, against the go.sum file goSum, as the checksum
// database would: the hash of its zip (the .ziphash the go command wrote as
// it extracted the zip) and that of its go.mod must be lines of goSum. A
// module that does not match ends the test.
func sumsMatch(t *testing.T, modCache, goSum, self string) {
	t.Helper()
	data, err := os.ReadFile(goSum)
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]bool{}
	for line := range strings.Lines(string(data)) {
		pinned[strings.TrimSpace(line)] = true
	}
	download := filepath.Join(modCache, "cache", "download")
	checked, unpinned := 0, []string(nil)
	err = filepath.WalkDir(download, func(file string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		line, err := downloadSum(download, file, self)
		if err != nil || line == "" {
			return err
		}
		checked++
		if !pinned[line] {
			unpinned = append(unpinned, line)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", download, err)
	}
	if checked == 0 {
		t.Fatalf("no module downloaded into %s to check", download)
	}
	if len(unpinned) > 0 {
		t.Fatalf("the install downloaded what go.sum does not pin:\n%s", strings.Join(unpinned, "\n"))
	}
}

// downloadSum returns the go.sum line of a file of the module cache's
// download directory: "PATH VERSION HASH" for a zip's .ziphash, "PATH
// VERSION/go.mod HASH" for a .mod file, "" for other files and module self.
func downloadSum(download, file, self string) (string, error) {
	rel, err := filepath.Rel(download, file)
	if err != nil {
		return "", err
	}
	escaped, name, ok := strings.Cut(filepath.ToSlash(rel), "/@v/")
	ext := path.Ext(name)
	if !ok || (ext != ".ziphash" && ext != ".mod") {
		return "", nil
	}
	modPath, err := module.UnescapePath(escaped)
	if err != nil || modPath == self {
		return "", err
	}
	version, err := module.UnescapeVersion(strings.TrimSuffix(name, ext))
	if err != nil {
		return "", err
	}
	if ext == ".mod" {
		h, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) { return os.Open(file) })
		return modPath + " " + version + "/go.mod " + h, err
	}
	h, err := os.ReadFile(file)
	return modPath + " " + version + " " + strings.TrimSpace(string(h)), err
}
