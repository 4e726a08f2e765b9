package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tools"
)

// BenchmarkCallCommand runs `toolbelt call` in this process, as the
// harnesses bench/memory and bench/fs run it in a new one (everything but
// the process's start): memory_search over 2,000 notes, find *.go over
// 20,000 files, grep over this module's tools/ tree. Its CPU profile
// (-cpuprofile) says where a whole call's time goes.
func BenchmarkCallCommand(b *testing.B) {
	data := b.TempDir()
	notes := b.TempDir()
	if err := os.MkdirAll(filepath.Join(notes, "memory"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		text := fmt.Sprintf("# Note %d\nharbour w%d boats w%d market w%d\n", i, i%97, i%13, i%7)
		if err := os.WriteFile(filepath.Join(notes, "memory", fmt.Sprintf("note-%05d.md", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tree := b.TempDir()
	for d := range 200 {
		sub := filepath.Join(tree, fmt.Sprintf("dir%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			ext := ".txt"
			if f%10 == 7 {
				ext = ".go"
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d%s", f, ext)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(wd, "..", "..", "tools")
	call := func(b *testing.B, args ...string) {
		var out, errOut bytes.Buffer
		e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, tools: early(tools.Core)}
		if code := run(append([]string{"--data", data, "call"}, args...), e); code != 0 {
			b.Fatalf("exit %d: %s %s", code, out.Bytes(), errOut.Bytes())
		}
		_, _ = io.Copy(io.Discard, &out)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"memory_search", []string{"memory_search", "--workspace", notes, "--args", `{"query":"harbour w5 w11"}`}},
		{"find", []string{"find", "--workspace", tree, "--args", `{"pattern":"*.go","limit":10000}`}},
		{"grep", []string{"grep", "--workspace", src, "--args", `{"pattern":"func NewReader\\(","limit":1000}`}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call(b, bc.args...) // the first indexes the notes
			for b.Loop() {
				call(b, bc.args...)
			}
		})
	}
}
