// Package closest finds, among known names, those a mistyped name most
// likely meant: the suggestions of "did you mean …?" messages.
package closest

import (
	"slices"
	"strings"
)

// Names returns up to n of candidates closest to name, best first: a name
// differing only in case or separators (_ - . and spaces), then one
// containing or contained in name (at most four times as long), then by
// edit distance (a swap of two
// neighbouring letters counts as one edit). Candidates too far from name to
// be a plausible typo are left out; equally close ones keep their order.
func Names(name string, candidates []string, n int) []string {
	want := fold(name)
	type scored struct {
		name  string
		score int
	}
	var cands []scored
	for _, c := range candidates {
		if s, ok := score(want, fold(c)); ok {
			cands = append(cands, scored{c, s})
		}
	}
	slices.SortStableFunc(cands, func(a, b scored) int { return a.score - b.score })
	out := make([]string, 0, min(n, len(cands)))
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// score rates how close the folded names are, lower is closer; ok is false
// when they are too far apart.
func score(want, got string) (int, bool) {
	switch {
	case got == want:
		return 0, true
	case min(len(got), len(want)) >= 3 && max(len(got), len(want)) <= 4*min(len(got), len(want)) &&
		(strings.Contains(got, want) || strings.Contains(want, got)):
		return 1 + abs(len(got)-len(want))/4, true
	}
	limit := max(1, max(len(want), len(got))/3)
	if abs(len(want)-len(got)) > limit { // the distance is at least that: no need to compute it
		return 0, false
	}
	d := distance(want, got)
	if d > limit {
		return 0, false
	}
	return d + 1, true
}

// fold lowercases and drops separators, so "Web-Fetch" and "web_fetch" fold alike.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, strings.TrimSpace(s))
}

// distance is the optimal string alignment distance between a and b, by
// bytes: insertions, deletions, substitutions and swaps of neighbours.
func distance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
