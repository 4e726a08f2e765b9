package schema

import (
	"strings"
	"testing"
)

func TestZZRuns(t *testing.T) {
	for _, tl := range loadCorpus(t) {
		c := newCompiler()
		c.d, c.root = OpenAIStrict, tl.Doc
		c.movable = c.movableDefinitions()
		out := c.compileRoot(tl.Doc)
		c.strictLimits(out)
		ch := c.rep.Changes
		r := 1
		for i := 1; i < len(ch); i++ {
			if strings.Compare(ch[i-1].Path, ch[i].Path) > 0 {
				r++
			}
		}
		if r > 1 && len(ch) < 30 && len(ch) > 20 {
			for _, x := range ch {
				t.Logf("%s | %s", x.Path, x.Action)
			}
			t.Log("----")
		}
	}
}

func BenchmarkZZSort(b *testing.B) {
	var lists [][]Change
	for _, tl := range loadCorpus(b) {
		c := newCompiler()
		c.d, c.root = OpenAIStrict, tl.Doc
		c.movable = c.movableDefinitions()
		out := c.compileRoot(tl.Doc)
		c.strictLimits(out)
		lists = append(lists, c.rep.Changes)
	}
	c := newCompiler()
	b.Run("byPath", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lists {
				dst := make([]Change, len(l))
				c.byPath(dst, l)
			}
		}
	})
}
