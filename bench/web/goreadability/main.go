// Command goreadability is the go-readability floor of bench/web: it
// fetches a page and prints the text of the article go-readability finds
// (this module's copy, internal/readability, as web_fetch runs it).
//
//	goreadability URL
package main

import (
	"bufio"
	"log"
	"os"
	"time"

	"github.com/toolbelt/toolbelt/internal/readability"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: goreadability URL")
	}
	a, err := readability.FromURL(os.Args[1], 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := a.RenderText(w); err != nil {
		log.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
}
