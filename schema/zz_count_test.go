package schema

import "testing"

func TestZZCount(t *testing.T) {
	tools := loadCorpus(t)
	for _, d := range testDialects() {
		nodes, changes, ns := 0, 0, 0
		for _, tl := range tools {
			c := &compiler{d: d, root: tl.Doc, rep: Report{Dialect: d.name, Changes: []Change{}}, used: map[string]bool{}}
			c.movable = c.movableDefinitions()
			c.compileRoot(tl.Doc)
			nodes += c.nodes
			changes += len(c.rep.Changes)
			ns += len(c.rep.NotStrict)
		}
		t.Logf("%s nodes %d changes %d notstrict %d", d.name, nodes, changes, ns)
	}
}
