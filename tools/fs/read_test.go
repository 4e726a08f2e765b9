package fs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

func numbered(n int, format string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return b.String()
}

func TestReadPaging(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{
			"big.txt":   numbered(8123, "line %d"),
			"wide.txt":  numbered(1000, "%04d "+strings.Repeat("x", 95)),
			"crlf.txt":  "one\r\ntwo\r\nthree",
			"empty.txt": "",
		})
		got := e.ok(t, "read", map[string]any{"path": "big.txt"})
		if !strings.HasPrefix(got, "line 1\nline 2\n") || !strings.Contains(got, "line 2000\n") || strings.Contains(got, "line 2001\n") {
			t.Fatalf("first page:\n%.200s…", got)
		}
		if !strings.HasSuffix(got, "\n[Showing lines 1-2000 of 8123. Use offset=2001 to continue.]") {
			t.Fatalf("first page ends with %q", got[len(got)-80:])
		}
		// The seeds' own example call: offset 0 means from the start.
		if seeds := e.ok(t, "read", map[string]any{"file_path": "big.txt", "offset": 0, "limit": 200}); !strings.HasPrefix(seeds, "line 1\n") || !strings.HasSuffix(seeds, "[Showing lines 1-200 of 8123. Use offset=201 to continue.]") {
			t.Fatalf("offset 0: %.40q … %q", seeds, seeds[len(seeds)-70:])
		}
		got = e.ok(t, "read", map[string]any{"path": "big.txt", "offset": 2001})
		if !strings.HasPrefix(got, "line 2001\n") || !strings.HasSuffix(got, "[Showing lines 2001-4000 of 8123. Use offset=4001 to continue.]") {
			t.Fatalf("second page: %.40q … %q", got, got[len(got)-70:])
		}
		got = e.ok(t, "read", map[string]any{"path": "big.txt", "offset": 8001})
		if !strings.HasSuffix(got, "line 8123\n") || strings.Contains(got, "[Showing") {
			t.Fatalf("last page ends with %q", got[len(got)-40:])
		}
		got = e.ok(t, "read", map[string]any{"path": "big.txt", "offset": 5, "limit": 3, "lineNumbers": true})
		want := "     5\tline 5\n     6\tline 6\n     7\tline 7\n\n[Showing lines 5-7 of 8123. Use offset=8 to continue.]"
		if got != want {
			t.Fatalf("offset and limit:\n%q\nwant\n%q", got, want)
		}
		// 1000 lines of 100 bytes: the 50 KB limit ends the page first.
		got = e.ok(t, "read", map[string]any{"path": "wide.txt"})
		contains(t, got, "[Showing lines 1-506 of 1000 (50 KB limit). Use offset=507 to continue.]")
		if len(got) > 50<<10+200 {
			t.Fatalf("page of %d bytes", len(got))
		}
		contains(t, e.ok(t, "read", map[string]any{"path": "crlf.txt"}), "one\ntwo\nthree\n")
		contains(t, e.ok(t, "read", map[string]any{"path": "empty.txt"}), "(empty.txt is empty)")
		contains(t, e.fails(t, "read", map[string]any{"path": "big.txt", "offset": 9000}),
			"offset 9000 is past the end of big.txt, which has 8123 lines. Use an offset from 1 to 8123.")
		contains(t, e.fails(t, "read", map[string]any{"path": "nope.txt"}), "nope.txt does not exist", "ls or find")
		contains(t, e.fails(t, "read", map[string]any{"path": "big.txt", "limit": 5000}), "limit", "maximum")
	})
}

func TestReadLongLine(t *testing.T) {
	t.Parallel()
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{"min.js": strings.Repeat("é", 100<<10) + "\nsecond\n"})
		got := e.ok(t, "read", map[string]any{"path": "min.js"})
		contains(t, got, "[Line 1 is 200 KB long; only its first 50 KB is shown.", "[Showing lines 1-1 of 2. Use offset=2 to continue.]")
		if !strings.HasPrefix(got, "éé") || strings.Contains(got, "\uFFFD") {
			t.Fatal("the cut line is not valid text")
		}
		if got := e.ok(t, "read", map[string]any{"path": "min.js", "offset": 2}); got != "second\n" {
			t.Fatalf("offset 2: %q", got)
		}
	})
}

func TestReadImagesAndBinaries(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var pngB, jpgB, gifB bytes.Buffer
	if err := png.Encode(&pngB, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpgB, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gifB, img, nil); err != nil {
		t.Fatal(err)
	}
	// A 1×1 lossless WebP image.
	webp, err := base64.StdEncoding.DecodeString("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
	if err != nil {
		t.Fatal(err)
	}
	bothEnvs(t, func(t *testing.T, e *env) {
		e.put(t, map[string]string{
			"pic.png":   pngB.String(),
			"photo.jpg": jpgB.String(),
			"anim.gif":  gifB.String(),
			"pic.webp":  string(webp),
			"no-ext":    pngB.String(),
			"a.zip":     "PK\x03\x04" + strings.Repeat("\x00\x01", 100),
			"data.bin":  "abc\x00def",
			"ctrl.bin":  strings.Repeat("\x01\x02\x03\x04", 100),
			"big.png":   pngB.String() + strings.Repeat("x", 5<<20),
		})
		for name, want := range map[string]struct {
			mime string
			data []byte
		}{
			"pic.png":   {"image/png", pngB.Bytes()},
			"photo.jpg": {"image/jpeg", jpgB.Bytes()},
			"anim.gif":  {"image/gif", gifB.Bytes()},
			"pic.webp":  {"image/webp", webp},
			"no-ext":    {"image/png", pngB.Bytes()},
		} {
			msg := e.call(t, "read", map[string]any{"path": name})
			if msg.IsError || len(msg.Content) != 2 || msg.Content[1].Type != tool.ImageContent {
				t.Fatalf("%s: %+v", name, msg)
			}
			if msg.Content[1].MIMEType != want.mime {
				t.Errorf("%s: MIME type %s, want %s", name, msg.Content[1].MIMEType, want.mime)
			}
			if data, _ := base64.StdEncoding.DecodeString(msg.Content[1].Data); !bytes.Equal(data, want.data) {
				t.Errorf("%s: image data differs", name)
			}
			if msg.Content[0].Text != "MEDIA:"+name {
				t.Errorf("%s: caption %q, want MEDIA:%s", name, msg.Content[0].Text, name)
			}
			if d, _ := msg.Details.(map[string]any); d["path"] != name || d["mimeType"] != want.mime {
				t.Errorf("%s: details %v, want path and mimeType", name, msg.Details)
			}
		}
		for _, name := range []string{"a.zip", "data.bin", "ctrl.bin"} {
			contains(t, e.fails(t, "read", map[string]any{"path": name}), name+" is a binary file", "text files and images")
		}
		contains(t, e.fails(t, "read", map[string]any{"path": "big.png"}), "larger than 5 MB")
		e.put(t, map[string]string{"dir/x": ""})
		contains(t, e.fails(t, "read", map[string]any{"path": "dir"}), "dir is a directory", "ls")
	})
}

// TestReadHugeFile reads pages of a 10 MB file without loading it all.
func TestReadHugeFile(t *testing.T) {
	t.Parallel()
	e := localEnv(t)
	e.put(t, map[string]string{"huge.log": numbered(400_000, "%07d log line of some length")})
	got := e.ok(t, "read", map[string]any{"path": "huge.log", "offset": 200_000, "limit": 2})
	want := "0200000 log line of some length\n0200001 log line of some length\n\n[Showing lines 200000-200001 of 400000. Use offset=200002 to continue.]"
	if got != want {
		t.Fatalf("got %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	msg := e.r.Run(ctx, tool.Call{ID: "1", Name: "read", Arguments: []byte(`{"path":"huge.log"}`)})
	if !msg.IsError {
		t.Fatalf("read with a cancelled context: %s", text(msg))
	}
}

// TestReadPageIsTheFile reads files that fit in one page: the text is the
// file's, line for line, whether lines fit in the reader's buffer (handed
// out without a copy) or the file ends without a newline
// (TestReadPageCutsAWideLine has a line longer than the page).
func TestReadPageIsTheFile(t *testing.T) {
	t.Parallel()
	e := localEnv(t)
	var mixed strings.Builder
	for i := range 700 {
		mixed.WriteString(strings.Repeat(string(rune('a'+i%26)), i%97))
		mixed.WriteString("\n")
	}
	files := map[string]string{
		"4k.txt":    strings.Repeat(strings.Repeat("x", 63)+"\n", 64),
		"mixed.txt": mixed.String(),
		"nonl.txt":  "first\nsecond\nno newline at the end",
		"crlf.txt":  "a\r\nb\r\n",
		"blank.txt": "\n\n\n",
		"one.txt":   "x",
	}
	e.put(t, files)
	want := map[string]string{
		"4k.txt":    files["4k.txt"],
		"mixed.txt": files["mixed.txt"],
		"nonl.txt":  files["nonl.txt"] + "\n",
		"crlf.txt":  "a\nb\n",
		"blank.txt": "\n\n\n",
		"one.txt":   "x\n",
	}
	for name, w := range want {
		if got := e.ok(t, "read", map[string]any{"path": name}); got != w {
			t.Errorf("read %s:\n%q\nwant\n%q", name, got, w)
		}
	}
}
