package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/toolbelt/toolbelt/bench/internal/harness"
)

// page is the local page both sides open: a small shop's order page with
// what an agent meets on the pages it builds — headings, a navigation, a
// form with its fields, a list and a table — about 30 kB of HTML and no
// outside resources.
func page() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Order 1042 · Benchmark shop</title>
<style>body{font:15px system-ui;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>
<header><nav><a href="#orders">Orders</a> · <a href="#customers">Customers</a> · <a href="#settings">Settings</a></nav></header>
<main><h1>Order 1042</h1><p>Placed by <strong>Ada Lovelace</strong> on 29 November. Everything below is made up for the benchmark.</p>
<form><h2>Shipping</h2>
<label>Name <input name="name" value="Ada Lovelace"></label>
<label>Street <input name="street" value="12 Analytical Row"></label>
<label>Country <select name="country"><option>United Kingdom</option><option>France</option><option>Germany</option></select></label>
<label><input type="checkbox" name="gift" checked> Gift wrap</label>
<label>Notes <textarea name="notes">Leave at the door.</textarea></label>
<button type="submit">Save address</button></form>
<h2>Items</h2><ul>`)
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, `<li><a href="#item-%d">Item %d</a>: a widget of size %d, in stock</li>`, i, i, i*3)
	}
	b.WriteString(`</ul><h2>History</h2><table><thead><tr><th>Date</th><th>Event</th><th>By</th><th>Amount</th></tr></thead><tbody>`)
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, `<tr><td>2026-11-%02d</td><td>Status changed to step %d</td><td>agent %d</td><td>%d.00 €</td></tr>`, 1+i%28, i, i%7, i*11)
	}
	b.WriteString(`</tbody></table></main><footer><p>Benchmark shop · <button>Contact</button></p></footer></body></html>`)
	return b.String()
}

// servePage serves page on a free port of 127.0.0.1 for the whole run and
// returns its URL; every answer says not to cache it, so that each
// navigation loads it again.
func servePage() string {
	html := page()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	harness.Check(err)
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write([]byte(html))
		}))
	}()
	return "http://" + ln.Addr().String() + "/order"
}
