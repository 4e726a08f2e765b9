package main

import (
	"encoding/json"
	"io"
	"os"
)

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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
