package dir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolbelt/toolbelt/tool"
)

// What the fingerprint of a tool's folder covers at most: a tool from an
// untrusted folder that holds more is not run outside containment (keep its
// dependencies elsewhere, or declare its folder trusted).
const (
	maxCodeFiles = 2048
	maxCodeBytes = 64 << 20
)

// codeHash returns the SHA-256 of everything in the folder dir: the path
// of every folder, and the path, executable bits and content of every file
// — the code a handler can run, however it sources or imports its other
// files. It refuses what it cannot fingerprint for certain: a symbolic link
// (what it leads to can change, or lie outside the folder), a FIFO, socket
// or device, more than maxCodeFiles entries or maxCodeBytes of content.
//
// When copyTo is not "", the folder is copied there (an empty folder) as it
// is read, so that the copy is exactly what the hash describes, whatever
// happens to the folder meanwhile.
func codeHash(dir, copyTo string) (string, error) {
	h := sha256.New()
	files, size := 0, int64(0)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		if files++; files > maxCodeFiles {
			return fmt.Errorf("its folder holds more than %d files and folders", maxCodeFiles)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link", rel)
		case d.IsDir():
			fmt.Fprintf(h, "d %d:%s\n", len(rel), rel)
			if copyTo != "" {
				return os.Mkdir(filepath.Join(copyTo, rel), 0o755)
			}
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file (a FIFO, socket or device)", rel)
		}
		b, perm, err := readCode(p, maxCodeBytes-size)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		size += int64(len(b))
		fmt.Fprintf(h, "f %d:%s %o %d\n", len(rel), rel, perm, len(b))
		h.Write(b)
		if copyTo != "" {
			return os.WriteFile(filepath.Join(copyTo, rel), b, perm)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readCode reads the regular file at path, at most limit bytes, without
// following a link or waiting on a FIFO put in its place since it was
// listed, and returns its content and permissions (0o755 or 0o644).
func readCode(path string, limit int64) ([]byte, os.FileMode, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(b)) > limit {
		return nil, 0, fmt.Errorf("the folder's files hold more than %d MiB", maxCodeBytes>>20)
	}
	perm := os.FileMode(0o644)
	if st.Mode()&0o111 != 0 {
		perm = 0o755
	}
	return b, perm, nil
}

// copyCode copies the tool's folder to a new private folder and checks
// that the copy is the code a person approved (want, a codeHash). It
// returns the copy's path; the caller removes it.
func (t *Tool) copyCode(want string) (string, error) {
	tmp, err := os.MkdirTemp("", "toolbelt-tool-")
	if err != nil {
		return "", err
	}
	// Readable by the sandbox's user; writable by no one else.
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	got, err := codeHash(t.Dir, tmp)
	switch {
	case err != nil:
		os.RemoveAll(tmp)
		return "", t.cannotCopy(err)
	case got != want:
		os.RemoveAll(tmp)
		return "", &Failure{Info: tool.ErrorInfo{
			Message:    fmt.Sprintf("%s was not run: its folder %s changed after the call was approved (the approved code had SHA-256 %s, the folder now has %s)", t.Meta.ID, t.Dir, want, got),
			Suggestion: "Call it again: the person is then asked about the code as it is now.",
		}}
	}
	return tmp, nil
}

// argvIn is the handler's command line run from a copy of its folder.
func (t *Tool) argvIn(copyDir string) []string {
	argv := append([]string(nil), t.Argv...)
	for i, a := range argv {
		if a == t.Handler {
			argv[i] = filepath.Join(copyDir, strings.TrimPrefix(a, t.Dir+string(filepath.Separator)))
		}
	}
	return argv
}

// cannotCopy is the failure of a tool whose folder cannot be fingerprinted.
func (t *Tool) cannotCopy(err error) *Failure {
	return &Failure{Info: tool.ErrorInfo{
		Message:    fmt.Sprintf("%s cannot be approved to run outside containment: %v. A tool from a folder the agent can write runs so only from an exact copy of its folder, fingerprinted for the person who approves it", t.Meta.ID, err),
		Suggestion: fmt.Sprintf("Tell the user: the tool's folder may hold only regular files and folders (at most %d, %d MiB); keep its dependencies outside it, or declare the folder trusted in toolbelt.yaml.", maxCodeFiles, maxCodeBytes>>20),
	}}
}
