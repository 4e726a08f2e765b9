package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/toolbelt/toolbelt/tools/browser"
)

// viewport is a device size the page is looked at in, in CSS pixels.
type viewport struct{ Width, Height int }

// viewports are the sizes the tools preview and check the page at.
var viewports = map[string]viewport{
	"desktop": {1440, 900},
	"tablet":  {768, 1024},
	"mobile":  {375, 812},
}

// viewportOrder is the order in which the tools report the viewports.
var viewportOrder = []string{"desktop", "tablet", "mobile"}

// sites are the workspaces the handler has answered for, and the browser
// (tools/browser's, whose proxy keeps pages off private hosts) it shows
// their pages in.
type sites struct {
	mu      sync.Mutex
	byDir   map[string]*site
	browser *browser.Manager
}

func newSites() *sites {
	return &sites{byDir: map[string]*site{}, browser: browser.NewManager(browser.Options{})}
}

// of returns the site of the workspace dir.
func (ss *sites) of(dir string) (*site, error) {
	if dir == "" {
		return nil, errors.New("the call has no workspace to hold the page")
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s := ss.byDir[dir]; s != nil {
		return s, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	s := &site{root: root, browser: ss.browser}
	ss.byDir[dir] = s
	return s, nil
}

// Close stops the sites' servers and the browser.
func (ss *sites) Close() error {
	var errs []error
	for _, s := range ss.byDir {
		errs = append(errs, s.close())
	}
	return errors.Join(append(errs, ss.browser.Close())...)
}

// site is the page's files in one workspace, confined to it (os.Root: no
// path or link leads out), and their server on loopback.
type site struct {
	root    *os.Root
	browser *browser.Manager

	mu   sync.Mutex
	srv  *http.Server
	base string // the server's URL, with a final slash
}

// url returns the URL the server (started on first use) serves the
// workspace's file page at.
func (s *site) url(page string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		s.srv = &http.Server{Handler: noStore(http.FileServerFS(s.root.FS()))}
		s.base = "http://" + ln.Addr().String() + "/"
		go s.srv.Serve(ln)
	}
	if _, err := s.root.Stat(page); err != nil {
		return "", fmt.Errorf("the page %s is not in the workspace: write it with write_html first", page)
	}
	return s.base + page, nil
}

// noStore keeps the browser from showing an earlier version of a file.
func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

func (s *site) close() error {
	if s.srv != nil {
		s.srv.Close()
	}
	return s.root.Close()
}
