package textdiff

import (
	"slices"
	"strings"
)

// maxEdits bounds the search for the fewest inserted and deleted lines.
// When two texts differ by more, [Compute] reports one change covering every
// line between their common beginning and end: still correct, not minimal,
// and it keeps the time and memory spent on very different texts bounded
// (the search keeps about maxEdits² numbers).
const maxEdits = 1000

// Compute returns the changes that turn before into after, line by line,
// sorted: the fewest lines removed and added (Myers's algorithm), up to a
// bound past which one change covers every line in between.
func Compute(before, after string) []Change {
	// The lines both texts start and end with are skipped before the texts
	// are split into lines: most edits change a few lines of a long file.
	head := commonPrefix(before, after)
	head = strings.LastIndexByte(before[:head], '\n') + 1
	tail := commonSuffix(before[head:], after[head:])
	if !lineStart(before, len(before)-tail) || !lineStart(after, len(after)-tail) {
		if i := strings.IndexByte(before[len(before)-tail:], '\n'); i >= 0 {
			tail -= i + 1
		} else {
			tail = 0
		}
	}
	pre := strings.Count(before[:head], "\n")
	a, b := Lines(before[head:len(before)-tail]), Lines(after[head:len(after)-tail])
	if len(a)+len(b) == 0 {
		return nil
	}
	keepA, keepB, ok := lcs(numbered(a, b))
	if !ok {
		return []Change{{OldStart: pre, NewStart: pre, Old: a, New: b}}
	}
	var out []Change
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && j < len(b) && keepA[i] && keepB[j] {
			i, j = i+1, j+1
			continue
		}
		c := Change{OldStart: pre + i, NewStart: pre + j}
		for ; i < len(a) && !keepA[i]; i++ {
			c.Old = append(c.Old, a[i])
		}
		for ; j < len(b) && !keepB[j]; j++ {
			c.New = append(c.New, b[j])
		}
		out = append(out, c)
	}
	return out
}

// numbered returns the lines of a and b as numbers, equal for equal lines.
func numbered(a, b []string) ([]int32, []int32) {
	ids := make(map[string]int32, len(a)+len(b))
	num := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return num(a), num(b)
}

// lcs finds a longest common subsequence of a and b with Myers's O(ND)
// algorithm and says which elements of each it keeps; ok is false when a
// and b differ by more than maxEdits insertions and deletions.
func lcs(a, b []int32) (keepA, keepB []bool, ok bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int32, 2*limit+3)
	// trace[d] holds v[k] for k in [-d, d] after round d, at index k+d.
	var trace [][]int32
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				trace = append(trace, slices.Clone(v[off-d:off+d+1]))
				keepA, keepB = backtrack(trace, n, m)
				return keepA, keepB, true
			}
		}
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
	}
	return nil, nil, false
}

// backtrack walks the rounds of the search back from (n, m) and marks the
// elements on the diagonals of the path as kept.
func backtrack(trace [][]int32, n, m int) (keepA, keepB []bool) {
	keepA, keepB = make([]bool, n), make([]bool, m)
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		prevK := k - 1
		if k == -d || k != d && at(k-1) < at(k+1) {
			prevK = k + 1
		}
		px := at(prevK)
		py := px - prevK
		// The move of round d ends at (mx, my); a diagonal follows.
		mx, my := px+1, py
		if prevK == k+1 {
			mx, my = px, py+1
		}
		for x > mx && y > my {
			x, y = x-1, y-1
			keepA[x], keepB[y] = true, true
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		keepA[x], keepB[y] = true, true
	}
	return keepA, keepB
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// lineStart reports whether offset i of t starts a line.
func lineStart(t string, i int) bool { return i == 0 || t[i-1] == '\n' }
