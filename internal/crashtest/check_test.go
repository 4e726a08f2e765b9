package crashtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

// record is what the check reads of an audit record.
type record struct {
	Seq        int64           `json:"seq"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	ErrorClass string          `json:"errorClass"`
}

// labelInArgs finds the labels in a record's arguments: what a call
// writes names it (call=LABEL), and so does the pattern of a grep.
var labelInArgs = regexp.MustCompile(`call=(r\d{3}-[a-z]\d-\d{5})`)

// check checks what the round left, after a restart: the audit, the files,
// and the undo of some answered changes.
func (h *harness) check(rng *rand.Rand) {
	h.restart()
	if out, errOut, code := h.runCLI("audit", "verify"); code != 0 {
		h.problem("audit verify", "exit %d: %s %s", code, firstLines(out, 3), firstLines(errOut, 3))
	}
	ids := h.checkAudit()
	h.checkFiles(ids)
	h.undoSome(ids, rng)
}

// restart starts Toolbelt once more in the workspace, as the next process
// after a crash: it runs one call (ls), which must be answered.
func (h *harness) restart() {
	const slot = "z0"
	o := op{label: h.ledger.label(slot), tool: "ls", args: `{"path":"."}`}
	h.ledger.issue(slot, o)
	out, errOut, code := h.runCLI("call", "ls", "--id", o.label, "--workspace", h.ws, "--json", "--args", o.args)
	var msg struct {
		ToolCallID string `json:"toolCallId"`
		IsError    bool   `json:"isError"`
	}
	if code > 1 || json.Unmarshal([]byte(out), &msg) != nil || msg.ToolCallID != o.label {
		h.problem("failed start", "the restart after the crash (toolbelt call ls) ended with exit %d: %s", code, firstLines(errOut, 3))
		return
	}
	h.ledger.answer(o.label, msg.IsError)
	for _, l := range errorLine.FindAllString(errOut, -1) {
		h.problem("error logged", "the restart: %s", l)
	}
}

// checkAudit matches the audit's records with the test's calls: every
// answered call has exactly one, no call has more. It returns the call id
// each call has in the audit, by label.
func (h *harness) checkAudit() map[string]string {
	out, errOut, code := h.runCLI("audit", "list", "--json")
	var recs []record
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil {
		h.problem("audit verify", "toolbelt audit list --json: exit %d: %s", code, firstLines(errOut, 3))
		return nil
	}
	n := map[string]int{}
	ids := map[string]string{}
	of := map[string][]string{} // what each label's records are, for the report
	unknown := 0
	for _, r := range recs {
		if r.Tool == "undo" {
			continue
		}
		label := h.labelOf(r)
		if label == "" {
			unknown++
			continue
		}
		n[label]++
		ids[label] = r.CallID
		of[label] = append(of[label], fmt.Sprintf("#%d id %s errorClass %q", r.Seq, r.CallID, r.ErrorClass))
	}
	h.mu.Lock()
	h.figures.unknown = unknown
	h.mu.Unlock()
	h.ledger.mu.Lock()
	defer h.ledger.mu.Unlock()
	for _, label := range slices.Sorted(maps.Keys(h.ledger.calls)) {
		c := h.ledger.calls[label]
		switch {
		case n[label] > 1:
			h.problem("duplicated", "call %s (%s by %s, answered %v) has %d audit records: %s", label, c.tool, c.slot, c.answered, n[label], strings.Join(of[label], "; "))
		case c.answered && n[label] == 0:
			h.problem("lost", "call %s (%s by %s) was answered but has no audit record", label, c.tool, c.slot)
		}
	}
	return ids
}

// labelOf is the label of the test's call that record r is of: its call id
// (the CLI's calls carry their labels as ids), else the newest label in
// its arguments (an edit or a patch names the call before it too); "" for
// none.
func (h *harness) labelOf(r record) string {
	if h.ledger.get(r.CallID) != nil {
		return r.CallID
	}
	var newest string
	for _, m := range labelInArgs.FindAllStringSubmatch(string(r.Arguments), -1) {
		newest = max(newest, m[1])
	}
	if h.ledger.get(newest) == nil {
		return ""
	}
	return newest
}

// checkFiles checks every slot's files: each whole, each group whole
// together, none older than the last answered change to it, each change on
// disk recorded in the audit (ids), and the file of every answered exec.
func (h *harness) checkFiles(ids map[string]string) {
	h.ledger.mu.Lock()
	defer h.ledger.mu.Unlock()
	slots := map[string]bool{}
	for _, c := range h.ledger.calls {
		slots[c.slot] = true
		if c.tool == "exec" && c.answered && !c.isError {
			if st := readState(h.ws, c.files[0], execLines); st.label != c.label {
				h.problem("lost change", "exec %s was answered, but its file %s is %s", c.label, c.files[0], st)
			}
		}
	}
	for _, slot := range slices.Sorted(maps.Keys(slots)) {
		for i := range singles {
			p := singleFile(slot, i)
			h.checkSet([]string{p}, singleLines, ids)
		}
		h.checkSet(group(slot), groupLines, ids)
	}
}

// checkSet checks files that change together; ledger.mu is held.
func (h *harness) checkSet(files []string, lines int, ids map[string]string) {
	st := readState(h.ws, files[0], lines)
	for _, p := range files {
		s := readState(h.ws, p, lines)
		if s.broken != "" {
			h.problem("half-made", "%s is %s", p, s)
			return
		}
		if s != st {
			h.problem("half-made", "the files of one patch differ: %s is %s but %s is %s", files[0], st, p, s)
			return
		}
	}
	last := h.ledger.calls[h.ledger.lastAnswered[files[0]]]
	now := h.ledger.calls[st.label]
	switch {
	case !st.absent && now == nil:
		h.problem("half-made", "%s holds what no call of the test wrote to it (%s)", files[0], st)
	case last == nil:
	case st.absent:
		h.problem("lost change", "%s is absent, but call %s (%s) was answered after writing it", files[0], last.label, last.tool)
	case now.seq < last.seq:
		h.problem("lost change", "%s holds %s's change, older than answered call %s (%s)", files[0], now.label, last.label, last.tool)
	}
	if now != nil && ids != nil && ids[now.label] == "" {
		h.problem("unrecorded change", "%s holds the change of call %s (%s, answered %v), which has no audit record", files[0], now.label, now.tool, now.answered)
	}
}

// undoSome undoes up to undosPerRound answered changes that are still on
// disk as their calls left them, and checks that each undo restores a
// whole earlier state.
func (h *harness) undoSome(ids map[string]string, rng *rand.Rand) {
	var candidates []*call
	h.ledger.mu.Lock()
	for _, label := range slices.Sorted(maps.Keys(h.ledger.calls)) {
		c := h.ledger.calls[label]
		if !c.answered || c.isError || len(c.files) == 0 || c.tool == "exec" || ids[label] == "" {
			continue
		}
		if !slices.ContainsFunc(c.files, func(p string) bool { return readState(h.ws, p, c.lines).label != label }) {
			candidates = append(candidates, c)
		}
	}
	h.ledger.mu.Unlock()
	rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, c := range candidates[:min(len(candidates), undosPerRound)] {
		out, errOut, code := h.runCLI("undo", ids[c.label])
		if code != 0 || !strings.HasPrefix(out, "Undid call") {
			h.problem("not undoable", "toolbelt undo %s (%s, %s) ended with exit %d: %s %s", ids[c.label], c.label, c.tool, code, firstLines(out, 2), firstLines(errOut, 2))
			continue
		}
		h.mu.Lock()
		h.figures.undone++
		h.mu.Unlock()
		h.checkUndone(c)
	}
}

// checkUndone checks what undoing c left: each of its files as the call
// found it — or, where a restart rolled back a change the call found
// (one killed before its answer), an earlier whole state — and the files'
// last answered changes forgotten (they are undone).
func (h *harness) checkUndone(c *call) {
	h.ledger.mu.Lock()
	defer h.ledger.mu.Unlock()
	for i, p := range c.files {
		s, found := readState(h.ws, p, c.lines), c.before[i]
		if s != found && !h.earlier(s, found) {
			h.problem("not undoable", "undoing %s (%s) left %s %s; the call found it %s", c.label, c.tool, p, s, found)
		}
		delete(h.ledger.lastAnswered, p)
	}
}

// earlier says s is a whole state (or absent) older than found; ledger.mu
// is held.
func (h *harness) earlier(s, found state) bool {
	if s.broken != "" || found.absent {
		return false
	}
	if s.absent {
		return true
	}
	was, now := h.ledger.calls[found.label], h.ledger.calls[s.label]
	return was != nil && now != nil && now.seq < was.seq
}
