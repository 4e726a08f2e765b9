package console

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart is a small chart rendered as inline SVG: a bar chart (Bars) or a
// sparkline (Sparkline). Title and Desc become the SVG's <title> and
// <desc>, so a screen reader says what it shows; pages give the numbers as
// text beside it too.
type Chart struct {
	// Title names the chart; Desc says what it shows in a sentence.
	Title, Desc string
	// Width and Height are its size in pixels (defaults 320 × 80).
	Width, Height int
	// Labels name the points (a bar's <title>, its tooltip); Values are
	// the points, none negative.
	Labels []string
	Values []float64
}

// size returns the chart's width and height with their defaults.
func (c Chart) size() (w, h int) {
	w, h = c.Width, c.Height
	if w <= 0 {
		w = 320
	}
	if h <= 0 {
		h = 80
	}
	return w, h
}

// top is the largest value, or 1 when none is above 0, so that an empty
// chart is flat.
func (c Chart) top() float64 {
	m := 0.0
	for _, v := range c.Values {
		m = max(m, v)
	}
	if m <= 0 {
		return 1
	}
	return m
}

// open starts the SVG element with its accessible name and description.
func (c Chart) open(b *strings.Builder, class string) {
	w, h := c.size()
	fmt.Fprintf(b, `<svg class="chart %s" role="img" aria-labelledby="%[2]s-t %[2]s-d" width="%d" height="%d" viewBox="0 0 %[3]d %[4]d" xmlns="http://www.w3.org/2000/svg">`,
		class, chartID(c.Title), w, h)
	fmt.Fprintf(b, `<title id="%s-t">%s</title><desc id="%[1]s-d">%[3]s</desc>`, chartID(c.Title), template.HTMLEscapeString(c.Title), template.HTMLEscapeString(c.Desc))
}

// chartID makes an element id of a title: its letters and digits,
// lower-cased, words joined by dashes.
func chartID(title string) string {
	id := strings.Join(strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}), "-")
	return "chart-" + id
}

// Bars renders the chart as vertical bars, one per value, each with its
// label and value as its <title>. With labels, a row under the bars names
// them: each bar's label under it when there are few (cut to its width),
// else the first and the last label with the largest value between them.
func (c Chart) Bars() template.HTML {
	var b strings.Builder
	c.open(&b, "bars")
	w, h := c.size()
	if n := len(c.Values); n > 0 {
		ph := h // the bars' height: the chart's, less the labels' row
		if len(c.Labels) > 0 {
			ph -= labelRow
		}
		step := float64(w) / float64(n)
		bar := max(step-1, 1)
		top := c.top()
		for i, v := range c.Values {
			bh := v / top * float64(ph-1)
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
				num(float64(i)*step), num(float64(ph)-bh), num(bar), num(bh), template.HTMLEscapeString(c.label(i)), num(v))
		}
		if len(c.Labels) > 0 {
			c.labelRow(&b, step, h)
		}
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// labelRow is the height of the row of labels under a bar chart's bars,
// and fewBars the most bars that each get their label there.
const (
	labelRow = 14
	fewBars  = 8
)

// labelRow writes the labels' row of a bar chart of bars step wide and h
// high: see Bars.
func (c Chart) labelRow(b *strings.Builder, step float64, h int) {
	text := func(x float64, anchor, s string) {
		fmt.Fprintf(b, `<text class="axis" x="%s" y="%d" text-anchor="%s">%s</text>`, num(x), h-3, anchor, template.HTMLEscapeString(s))
	}
	n := len(c.Values)
	if n <= fewBars {
		fit := max(int(step/6.5), 1) // the characters a bar's width holds
		for i := range n {
			s := []rune(c.label(i))
			if len(s) > fit {
				s = append(s[:max(fit-1, 0)], '…')
			}
			text(float64(i)*step+step/2, "middle", string(s))
		}
		return
	}
	w, _ := c.size()
	text(0, "start", c.label(0))
	text(float64(w)/2, "middle", "peak "+num(c.top()))
	text(float64(w), "end", c.label(n-1))
}

// Sparkline renders the chart as one line through the values.
func (c Chart) Sparkline() template.HTML {
	var b strings.Builder
	c.open(&b, "sparkline")
	w, h := c.size()
	if n := len(c.Values); n > 0 {
		step := float64(w) / float64(max(n-1, 1))
		top := c.top()
		points := make([]string, n)
		for i, v := range c.Values {
			points[i] = num(float64(i)*step) + "," + num(float64(h-1)-v/top*float64(h-2))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="%s"/>`, strings.Join(points, " "))
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// label is point i's label, or its number from 1.
func (c Chart) label(i int) string {
	if i < len(c.Labels) {
		return c.Labels[i]
	}
	return strconv.Itoa(i + 1)
}

// num writes a coordinate or value with at most two decimals.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }
