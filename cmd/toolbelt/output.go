package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/toolbelt/toolbelt/internal/termsafe"
)

// writeJSON prints v as indented JSON, with &, < and > as themselves even
// where a value's own MarshalJSON escaped them (a JSON Schema does), and
// every character a terminal would act on or hide as an escape
// (termsafe.JSON).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(unescapeHTML(buf.Bytes())))
	return err
}

// unescapeHTML turns the escapes \u0026, \u003c and \u003e of JSON text back
// into &, < and >; every other escape is kept as it is.
func unescapeHTML(b []byte) []byte {
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1 // any other escape, whole
	}
	return out
}

// colors paints text for a terminal, or not at all.
type colors struct{ on bool }

// colorsFor turns colors on only when w is a terminal and NO_COLOR is unset.
func colorsFor(w io.Writer) colors {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return colors{}
	}
	st, err := f.Stat()
	return colors{on: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (c colors) paint(code, s string) string {
	if !c.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c colors) bold(s string) string   { return c.paint("1", s) }
func (c colors) dim(s string) string    { return c.paint("2", s) }
func (c colors) green(s string) string  { return c.paint("32", s) }
func (c colors) yellow(s string) string { return c.paint("33", s) }
func (c colors) red(s string) string    { return c.paint("1;31", s) }

// tableRow writes a row of a tabwriter table: each cell shown on one line,
// escapes visible (termsafe.Line), so that text from outside can neither
// add a row or a column nor drive the terminal.
func tableRow(w io.Writer, cells ...string) {
	for i, c := range cells {
		if i > 0 {
			io.WriteString(w, "\t")
		}
		io.WriteString(w, termsafe.Line(c))
	}
	io.WriteString(w, "\n")
}

// printError prints err on w (stderr) after "toolbelt: ", escapes visible:
// an error may echo what a caller, a model or a server sent.
func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "toolbelt: %s\n", termsafe.Text(err.Error()))
}
