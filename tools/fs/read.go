package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/tool"
)

// Limits of read.
const (
	readLines     = 2000
	readBytes     = 50 << 10
	maxImageBytes = 5 << 20
	// sniffLen is how much of a file is looked at to tell text from binary.
	sniffLen = 8 << 10
)

type readArgs struct {
	Path        string `json:"path" jsonschema:"The file to read, relative to the workspace root." minLength:"1"`
	Offset      int    `json:"offset,omitempty" jsonschema:"The first line to show, counting from 1 (default 1; 0 also means the start). Use the offset a previous result's notice gives to continue." minimum:"0"`
	Limit       int    `json:"limit,omitempty" jsonschema:"The most lines to show (default and maximum 2000). At most 50 KB is shown per call whatever the limit." minimum:"1" maximum:"2000"`
	LineNumbers bool   `json:"lineNumbers,omitempty" jsonschema:"Prefix each line with its line number and a tab."`
}

const readDescription = `Read a file in the workspace. Text comes back a page at a time: at most 2000 lines or 50 KB per call, whichever comes first. When there is more, the text ends with a notice such as "[Showing lines 1-2000 of 8123. Use offset=2001 to continue.]"; call read again with that offset. Images (PNG, JPEG, GIF, WebP) come back as images. Other binary files are refused. Paths are relative to the workspace root.`

// readDetails are the details of a text read.
type readDetails struct {
	Path       string `json:"path"`
	FirstLine  int    `json:"firstLine"`
	LastLine   int    `json:"lastLine"`
	TotalLines int    `json:"totalLines"`
	// Truncated is true when lines after LastLine were not shown.
	Truncated bool `json:"truncated"`
}

func (s *set) readTool() (tool.Tool, error) {
	return tool.New("read", readDescription, func(ctx context.Context, in readArgs, inv tool.Invocation) (tool.Result, error) {
		b, err := bridge(inv)
		if err != nil {
			return tool.Result{}, err
		}
		f, err := b.Open(ctx, in.Path)
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return tool.Result{}, problem(in.Path, err)
		}
		if st.IsDir() {
			return tool.Result{}, tool.InputErrorf("%s is a directory, not a file. Use ls to see what it holds.", in.Path)
		}
		src, rh, err := hashedRead(ctx, inv, b, in.Path, f)
		if err != nil {
			return tool.Result{}, err
		}
		br := readers.Get().(*bufio.Reader)
		br.Reset(&ctxReader{ctx, src})
		defer func() { br.Reset(nil); readers.Put(br) }()
		head, _ := br.Peek(sniffLen)
		var res tool.Result
		switch mime, kind := imageType(head), binaryKind(head); {
		case mime != "":
			res, err = readImage(in.Path, mime, br)
		case kind != "":
			return tool.Result{}, tool.InputErrorf("%s is a binary file (%s, %s): read shows text files and images (PNG, JPEG, GIF, WebP) only. To inspect its bytes, use a command such as `file` or `xxd` through exec, if that tool is available.", in.Path, kind, sizeText(st.Size()))
		default:
			limit := in.Limit
			if limit == 0 {
				limit = readLines
			}
			res, err = readPage(in.Path, br, max(in.Offset, 1), limit, in.LineNumbers, st.Size())
		}
		if err == nil {
			err = problem(in.Path, rh.done(br))
		}
		return res, err
	})
}

// imageType returns the MIME type of an image format models accept, sniffed
// from the first bytes of a file, or "".
func imageType(head []byte) string {
	switch mime := http.DetectContentType(head); mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return mime
	}
	return ""
}

// binaryKind returns what kind of binary file the first bytes show, or ""
// for text.
func binaryKind(head []byte) string {
	mime := http.DetectContentType(head)
	switch {
	case looksBinary(head):
		if strings.HasPrefix(mime, "text/") {
			return "it contains NUL bytes"
		}
		return mime
	case strings.HasPrefix(mime, "text/"), mime == "application/json":
		return ""
	case mime == "application/octet-stream":
		// Control bytes that text does not have, or a format Go does not
		// know; text with a few stray control bytes is still text.
		if utf8.Valid(trimPartialRune(head)) && controlShare(head) < 0.05 {
			return ""
		}
	}
	return mime
}

// trimPartialRune drops a UTF-8 sequence cut off at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// controlShare returns the share of bytes in b that are control characters
// text files do not use.
func controlShare(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	n := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// readImage returns the image r holds in the seeds' shape: MEDIA:<name>,
// the image, details {path, mimeType, bytes}.
func readImage(name, mime string, r io.Reader) (tool.Result, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxImageBytes+1))
	if err != nil {
		return tool.Result{}, problem(name, err)
	}
	if len(data) > maxImageBytes {
		return tool.Result{}, tool.InputErrorf("%s is an image (%s) larger than %s, the most read returns. Make a smaller copy (for example with exec and ImageMagick, if available) and read that.", name, mime, sizeText(maxImageBytes))
	}
	res := tool.Media(name, data, mime)
	res.Details = map[string]any{"path": name, "mimeType": mime, "bytes": len(data)}
	return res, nil
}

// readPage returns lines [offset, offset+limit) of r, at most readBytes of
// them, and a notice saying how to continue when there is more. size, the
// file's size, sizes the page's buffer once (a file read from its start
// usually fits in one page).
func readPage(name string, r *bufio.Reader, offset, limit int, numbers bool, size int64) (tool.Result, error) {
	var out strings.Builder
	if offset == 1 && limit >= readLines && !numbers {
		out.Grow(int(min(max(size, 0), readBytes)) + 1)
	}
	n, first, last := 0, 0, 0 // lines read; first and last shown
	cut, cutLen := 0, 0       // the line cut at readBytes, if any
	byBytes := false          // the page ended at readBytes
	for {
		line, size, err := readLine(r, readBytes)
		if err == io.EOF {
			break
		}
		if err != nil {
			return tool.Result{}, problem(name, err)
		}
		n++
		if n < offset {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		prefix := ""
		if numbers {
			prefix = fmt.Sprintf("%6d\t", n)
		}
		if out.Len()+len(prefix)+len(line)+1 > readBytes {
			if first != 0 {
				byBytes = true // this line starts the next page
				break
			}
			// The first line alone is too long: show its start.
			line = trimPartialRune(line[:min(len(line), readBytes-len(prefix)-1)])
			cut, cutLen = n, size
		}
		if first == 0 {
			first = n
		}
		last = n
		out.WriteString(prefix)
		out.Write(line)
		out.WriteByte('\n')
		if n-first+1 >= limit || cut > 0 {
			break
		}
	}
	rest, err := countLines(r)
	if err != nil {
		return tool.Result{}, problem(name, err)
	}
	total := n + rest
	switch {
	case total == 0:
		res := tool.Textf("(%s is empty)", name)
		res.Details = readDetails{Path: name}
		return res, nil
	case first == 0:
		return tool.Result{}, tool.InputErrorf("offset %d is past the end of %s, which has %d lines. Use an offset from 1 to %d.", offset, name, total, total)
	}
	text := out.String()
	if cut > 0 {
		text += fmt.Sprintf("\n[Line %d is %s long; only its first %s is shown. Search the file with grep to find what you need in it.]", cut, sizeText(int64(cutLen)), sizeText(readBytes))
	}
	if last < total {
		limitNote := ""
		if byBytes {
			limitNote = fmt.Sprintf(" (%s limit)", sizeText(readBytes))
		}
		text += fmt.Sprintf("\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]", first, last, total, limitNote, last+1)
	}
	res := tool.Text(text)
	res.Details = readDetails{Path: name, FirstLine: first, LastLine: last, TotalLines: total, Truncated: last < total}
	return res, nil
}

// readLine reads the next line of r, without its "\n". It keeps at most keep
// bytes of it and returns its full length; the rest is read and dropped, so
// a huge line costs no memory. io.EOF means there are no more lines. A
// line that fits in r's buffer is returned in it, not copied: it is valid
// until the next read of r.
func readLine(r *bufio.Reader, keep int) ([]byte, int, error) {
	var line []byte
	size := 0
	for {
		chunk, err := r.ReadSlice('\n')
		if size == 0 && (err == nil || (err == io.EOF && len(chunk) > 0)) {
			// The whole line at once, in r's buffer.
			kept := chunk[:min(len(chunk), keep)]
			if err == nil {
				return bytes.TrimSuffix(kept, []byte("\n")), len(chunk) - 1, nil
			}
			return kept, len(chunk), nil
		}
		size += len(chunk)
		if room := keep - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), size - 1, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && size > 0:
			return line, size, nil
		}
		return nil, 0, err
	}
}

// countLines counts the lines left in r; a last line without a break counts.
// readers reuses the large buffered readers read pages through.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func countLines(r *bufio.Reader) (int, error) {
	// WriteTo streams the rest through the reader's own buffer: no copy.
	c := lineCounter{last: '\n'}
	if _, err := r.WriteTo(&c); err != nil {
		return 0, err
	}
	if c.last != '\n' {
		c.lines++
	}
	return c.lines, nil
}

// lineCounter counts the newlines written to it.
type lineCounter struct {
	lines int
	last  byte
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.lines += bytes.Count(p, []byte("\n"))
		c.last = p[len(p)-1]
	}
	return len(p), nil
}

// ctxReader stops reading when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
