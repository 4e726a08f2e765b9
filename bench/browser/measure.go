package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// round is what one round measured of one side.
type round struct {
	handshake     time.Duration   // exec to the answer of initialize
	cold, coldCPU time.Duration   // exec to the first navigation's answer; the tree's CPU by then
	navSnap       []time.Duration // each navigation + snapshot
	nav, snap     []time.Duration // the navigation and the snapshot apart
	navSnapCPU    time.Duration   // the tree's CPU per navigation + snapshot
	shot          []time.Duration // each screenshot
	shotCPU       time.Duration   // the tree's CPU per screenshot
	navBytes      int             // the text of the last navigation's answer
	snapBytes     int             // the text of the last snapshot's answer
	shotBytes     int             // the last screenshot
	shotImage     string          // its dimensions and type
	pss           int64           // the tree's memory after the calls
	left          int             // its processes still running 2 s after the server exited
}

func (r round) String() string {
	return fmt.Sprintf("handshake %s, cold start %s (CPU %s), navigate + snapshot %s (CPU %s; navigate %s, snapshot %s), screenshot %s (CPU %s), answers %d B and %d B, screenshot %d B %s, PSS %s, left running %d",
		ms(r.handshake), ms(r.cold), ms(r.coldCPU), ms(median(r.navSnap)), ms(r.navSnapCPU), ms(median(r.nav)), ms(median(r.snap)),
		ms(median(r.shot)), ms(r.shotCPU), r.navBytes, r.snapBytes, r.shotBytes, r.shotImage, mb(r.pss), r.left)
}

// lacks says why side s cannot make the calls of the tools named ("" when
// it can): its server does not start, or does not list one of them.
func (s *side) lacks(ctx context.Context, tools ...string) string {
	ses, err := open(ctx, s)
	if err != nil {
		return "its server did not start: " + err.Error()
	}
	defer ses.close()
	listed := map[string]bool{}
	for t, err := range ses.cs.Tools(ctx, nil) {
		harness.Check(err)
		listed[t.Name] = true
	}
	for _, name := range tools {
		if !listed[name] {
			return fmt.Sprintf("its server lists no %s tool", name)
		}
	}
	return ""
}

// browserTools are the tools s's browser calls go to.
func (s *side) browserTools() []string {
	return []string{s.navigate("").Name, s.snapshot.Name, s.screenshot.Name}
}

// measure runs one round of side s: a fresh server, its first navigation
// to the page, then n navigations each followed by a snapshot, then n
// screenshots.
func measure(ctx context.Context, s *side, url string, n int) round {
	var r round
	start := time.Now()
	ses, err := open(ctx, s)
	if err != nil {
		log.Fatalf("%s: %v", s.name, err)
	}
	r.handshake = time.Since(start)
	ses.call(ctx, s.navigate(url+"?cold"))
	r.cold = time.Since(start)
	r.coldCPU = harness.TreeCPU(ses.pid())

	cpu := r.coldCPU
	for i := range n {
		t := time.Now()
		nav := ses.call(ctx, s.navigate(fmt.Sprintf("%s?%d", url, i)))
		mid := time.Now()
		snap := ses.call(ctx, s.snapshot)
		end := time.Now()
		r.navSnap = append(r.navSnap, end.Sub(t))
		r.nav, r.snap = append(r.nav, mid.Sub(t)), append(r.snap, end.Sub(mid))
		r.navBytes, r.snapBytes = len(text(nav)), len(text(snap))
	}
	now := harness.TreeCPU(ses.pid())
	r.navSnapCPU, cpu = (now-cpu)/time.Duration(n), now

	for range n {
		t := time.Now()
		res := ses.call(ctx, s.screenshot)
		r.shot = append(r.shot, time.Since(t))
		r.shotBytes, r.shotImage = picture(res)
	}
	r.shotCPU = (harness.TreeCPU(ses.pid()) - cpu) / time.Duration(n)
	r.pss = harness.TreePSS(ses.pid())
	r.left = ses.close()
	return r
}

// printTable prints the medians of every side over the rounds, with their
// spread and Toolbelt ÷ Playwright MCP.
func printTable(sides []*side, results map[*side][]round) {
	fmt.Print("| figure |")
	for _, s := range sides {
		fmt.Printf(" %s |", s.name)
	}
	if len(sides) == 2 {
		fmt.Printf(" %s ÷ %s |", sides[0].name, sides[1].name)
	}
	fmt.Print("\n| --- |" + strings.Repeat(" --- |", len(sides)+len(sides)/2) + "\n")
	rows := []struct {
		name string
		of   func(round) []time.Duration
	}{
		{"handshake: exec to the answer of initialize (rounds)", func(r round) []time.Duration { return []time.Duration{r.handshake} }},
		{"cold start: exec to the first navigation's answer (rounds)", func(r round) []time.Duration { return []time.Duration{r.cold} }},
		{"CPU of the cold start, whole tree (rounds)", func(r round) []time.Duration { return []time.Duration{r.coldCPU} }},
		{"navigate + snapshot (every one)", func(r round) []time.Duration { return r.navSnap }},
		{"the navigation alone (every one)", func(r round) []time.Duration { return r.nav }},
		{"the snapshot alone (every one)", func(r round) []time.Duration { return r.snap }},
		{"CPU per navigate + snapshot (rounds)", func(r round) []time.Duration { return []time.Duration{r.navSnapCPU} }},
		{"screenshot (every one)", func(r round) []time.Duration { return r.shot }},
		{"CPU per screenshot (rounds)", func(r round) []time.Duration { return []time.Duration{r.shotCPU} }},
	}
	for _, row := range rows {
		fmt.Printf("| %s |", row.name)
		var meds []time.Duration
		for _, s := range sides {
			var all []time.Duration
			for _, r := range results[s] {
				all = append(all, row.of(r)...)
			}
			meds = append(meds, median(all))
			fmt.Printf(" %s (%s–%s) |", ms(median(all)), num(slices.Min(all)), num(slices.Max(all)))
		}
		ratio(meds)
	}
	last := func(s *side) round { return results[s][len(results[s])-1] }
	fmt.Print("| the text of the navigation's answer, of the snapshot's |")
	for _, s := range sides {
		fmt.Printf(" %d B, %d B |", last(s).navBytes, last(s).snapBytes)
	}
	fmt.Print(strings.Repeat(" |", len(sides)/2) + "\n| the screenshot |")
	for _, s := range sides {
		fmt.Printf(" %d B, %s |", last(s).shotBytes, last(s).shotImage)
	}
	fmt.Print(strings.Repeat(" |", len(sides)/2) + "\n| PSS of the tree after the calls (rounds) |")
	for _, s := range sides {
		var all []int64
		for _, r := range results[s] {
			all = append(all, r.pss)
		}
		slices.Sort(all)
		fmt.Printf(" %s (%s–%s) |", mb(all[len(all)/2]), mb(all[0]), mb(all[len(all)-1]))
	}
	fmt.Print(strings.Repeat(" |", len(sides)/2) + "\n| processes left running after the server exited (all rounds) |")
	for _, s := range sides {
		n := 0
		for _, r := range results[s] {
			n += r.left
		}
		fmt.Printf(" %d |", n)
	}
	fmt.Print(strings.Repeat(" |", len(sides)/2) + "\n")
}

// ratio ends a table row with the first median ÷ the second, when there
// are two.
func ratio(meds []time.Duration) {
	if len(meds) == 2 {
		fmt.Printf(" %.2f× |", float64(meds[0])/float64(meds[1]))
	}
	fmt.Println()
}

// median is the median of ds (the lower one of an even count).
func median(ds []time.Duration) time.Duration { return harness.Quantile(ds, 0.5) }

// ms is d in milliseconds, to a tenth below 100 ms.
func ms(d time.Duration) string { return num(d) + " ms" }

// num is d's number of milliseconds, to a tenth below 100 ms.
func num(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }
