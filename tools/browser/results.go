package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/tool"
)

// snapshotResult is the snapshot action's result: the page's title and
// address, then its accessibility tree (or the part asked for), cut at
// maxChars with a notice saying how to ask for the rest. The page's text
// is external content.
func (t *tab) snapshotResult(ctx context.Context, in args) (tool.Result, error) {
	tree, err := t.snapshot(ctx, in.Ref)
	if err != nil {
		return tool.Result{}, inputError(err)
	}
	url, title := t.info(ctx)
	max := in.MaxChars
	if max <= 0 {
		max = DefaultSnapshotChars
	}
	body, next := part(tree, in.Offset, max)
	header := fmt.Sprintf("Page: %s\nURL: %s\n", oneLine(title), url)
	if in.Ref != "" {
		header += "Part: " + in.Ref + "\n"
	}
	res := tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: header + "\n" + body, Origin: tool.FromOutside("browser " + url)}}}
	var note string
	switch {
	case next > 0:
		note = fmt.Sprintf("[snapshot cut here: characters %d–%d of %d shown. Ask for the rest with offset=%d, or for one part with ref=<the ref of a landmark, list or section above>.]", in.Offset, next, len(tree), next)
	case in.Offset >= len(tree) && in.Offset > 0:
		note = fmt.Sprintf("[offset %d is past the end of the snapshot (%d characters).]", in.Offset, len(tree))
	}
	if note += t.dialogNote(); note != "" {
		res.Content = append(res.Content, tool.Content{Type: tool.TextContent, Text: strings.TrimPrefix(note, "\n"), Origin: tool.OwnWords()})
	}
	res.Details = map[string]any{"url": url, "title": title, "chars": len(tree), "next": next}
	return res, nil
}

// screenshotResult is the screenshot action's result: an image of the
// viewport, the whole page, or the element ref.
func (t *tab) screenshotResult(ctx context.Context, in args) (tool.Result, error) {
	format, err := imageFormat(in.Type)
	if err != nil {
		return tool.Result{}, tool.InputErrorf("%v", err)
	}
	var clip *page.Viewport
	what := "the viewport"
	if in.FullPage {
		what = "the whole page"
	}
	if in.Ref != "" {
		_, obj, err := t.element(ctx, in.Ref)
		if err != nil {
			return tool.Result{}, inputError(err)
		}
		if clip, err = t.box(ctx, obj); err != nil {
			return tool.Result{}, inputError(err)
		}
		what = "element " + in.Ref
	}
	data, err := screenshot(ctx, t, format, in.FullPage, clip)
	if err != nil {
		return tool.Result{}, err
	}
	url, _ := t.info(ctx)
	res := tool.Image(fmt.Sprintf("Screenshot of %s of %s", what, url), data, "image/"+string(format))
	res.Content[0].Origin = tool.OwnWords()
	return res, nil
}

// box returns the element's box in the page's coordinates, for a clip.
func (t *tab) box(ctx context.Context, obj runtime.RemoteObjectID) (*page.Viewport, error) {
	r, err := callOnObject[struct{ X, Y, W, H float64 }](ctx, t, obj, `function(){
		this.scrollIntoView({block: "center"});
		const r = this.getBoundingClientRect();
		return {X: r.left + window.scrollX, Y: r.top + window.scrollY, W: r.width, H: r.height};
	}`)
	if err != nil {
		return nil, err
	}
	if r.W == 0 || r.H == 0 {
		return nil, fmt.Errorf("the element is not visible (it has no size): take a new snapshot")
	}
	return &page.Viewport{X: r.X, Y: r.Y, Width: r.W, Height: r.H, Scale: 1}, nil
}

// consoleResult lists what the page's console said, and the addresses the
// navigation guard refused.
func (s *session) consoleResult(t *tab) tool.Result {
	t.mu.Lock()
	lines := append([]string(nil), t.console...)
	t.mu.Unlock()
	refused, _ := s.gate.refused()
	lines = append(lines, refused...)
	if len(lines) == 0 {
		return own("The console is empty.")
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: strings.Join(lines, "\n")}}}
}

// pdfPath resolves where pdf writes: path (default page.pdf), relative to
// the workspace; inside says it is in the workspace.
func pdfPath(path string, tc *tool.Context) (abs string, inside bool) {
	if path == "" {
		path = "page.pdf"
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(tc.Workspace, path)
	}
	path = filepath.Clean(path)
	return path, tc.Workspace != "" && realpath.Within(realpath.Resolve(path), realpath.Resolve(tc.Workspace))
}

// pdf prints the page to a PDF file: in the workspace through its file
// bridge (whose protections hold), elsewhere once a person approved it.
func (t *tab) pdf(ctx context.Context, path string, tc *tool.Context) (tool.Result, error) {
	res, err := call(ctx, t, page.PrintToPDF, page.PrintToPDFParams{PrintBackground: new(true)})
	if err != nil {
		return tool.Result{}, fmt.Errorf("printing the page: %w", err)
	}
	abs, inside := pdfPath(path, tc)
	switch {
	case inside && tc.FS != nil:
		rel, err := filepath.Rel(realpath.Resolve(tc.Workspace), realpath.Resolve(abs))
		if err != nil {
			return tool.Result{}, err
		}
		if err := tc.FS.WriteFile(ctx, filepath.ToSlash(rel), res.Data, 0o644); err != nil {
			return tool.Result{}, tool.InputErrorf("writing %s: %v", rel, err)
		}
	default:
		if err := os.WriteFile(abs, res.Data, 0o644); err != nil {
			return tool.Result{}, tool.InputErrorf("writing %s: %v", abs, err)
		}
	}
	return own(fmt.Sprintf("Wrote the page as a PDF of %d bytes to %s.", len(res.Data), abs)), nil
}

// upload puts workspace files into the file input ref.
func (t *tab) upload(ctx context.Context, in args, tc *tool.Context) (tool.Result, error) {
	if in.Ref == "" || len(in.Paths) == 0 {
		return tool.Result{}, tool.InputErrorf("upload needs ref (a file input from the snapshot) and paths (workspace files)")
	}
	if tc.FS == nil {
		return tool.Result{}, tool.InputErrorf("upload takes files from the workspace, and this call has none")
	}
	files := make([]string, len(in.Paths))
	for i, p := range in.Paths {
		rel, err := tc.FS.Resolve(ctx, p)
		if err != nil {
			return tool.Result{}, tool.InputErrorf("upload: %s: %v (files come from the workspace only)", p, err)
		}
		if fi, err := tc.FS.Stat(ctx, rel); err != nil || !fi.Mode().IsRegular() {
			return tool.Result{}, tool.InputErrorf("upload: %s is not a file of the workspace", p)
		}
		files[i] = filepath.Join(tc.FSRoot, filepath.FromSlash(rel))
	}
	id, _, err := t.element(ctx, in.Ref)
	if err != nil {
		return tool.Result{}, inputError(err)
	}
	if _, err := call(ctx, t, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: files, BackendNodeID: id}); err != nil {
		return tool.Result{}, tool.InputErrorf("upload: %v (is %s a file input?)", err, in.Ref)
	}
	return own(fmt.Sprintf("Put %d file(s) into %s.", len(files), in.Ref)), nil
}

// answerDialog answers the dialog the page holds open, or arms the answer
// for the next one.
func (t *tab) answerDialog(ctx context.Context, in args) (tool.Result, error) {
	a := dialogAnswer{accept: in.Accept == nil || *in.Accept, promptText: in.PromptText}
	verb := "Accepted"
	if !a.accept {
		verb = "Dismissed"
	}
	t.mu.Lock()
	d := t.dialog
	if d == nil {
		t.answer = &a
	}
	t.dialog = nil
	t.mu.Unlock()
	if d == nil {
		return own("No dialog is open: the next one the page opens will be " + strings.ToLower(verb) + "."), nil
	}
	if err := t.handleDialog(ctx, a); err != nil {
		return tool.Result{}, err
	}
	return own(fmt.Sprintf("%s the %s dialog %q.", verb, d.Type, d.Message)), nil
}

// downloads sends the browser's downloads into the workspace's downloads
// folder, or refuses them when the call has no workspace.
func (s *session) downloads(ctx context.Context) error {
	want := ""
	if s.workspace != "" {
		want = filepath.Join(s.workspace, "downloads")
	}
	if s.downloadsTo != nil && *s.downloadsTo == want {
		return nil
	}
	p := browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}
	if want != "" {
		p = browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: want}
	}
	c, cancel := context.WithCancel(s.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	if _, err := chromedp.CallBrowser(c, browser.SetDownloadBehavior, p); err != nil {
		return fmt.Errorf("setting where downloads go: %w", err)
	}
	s.downloadsTo = &want
	return nil
}
