package browser

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// preview says what a call would do and how risky it is: reading pages is
// medium risk (the tool's); evaluate, upload, a form sent to a host not
// allowed, and a PDF written outside the workspace are high, so policy asks
// a person. The summary names the page the call acts on, for the person
// asked, the console and the audit.
func (m *Manager) preview(ctx context.Context, in args, tc *tool.Context) (tool.Effects, error) {
	page := m.pageOf(ctx, tc.SessionKey, in)
	e := tool.Effects{Summary: summary(in, page)}
	switch {
	case in.Action == "act" && in.Kind == "evaluate":
		e.Risk, e.RiskReason = tool.RiskHigh, "evaluate runs JavaScript in the page "+page
	case in.Action == "upload":
		e.Risk, e.RiskReason = tool.RiskHigh, fmt.Sprintf("upload hands workspace files %q to the page %s", in.Paths, page)
	case in.Action == "pdf":
		if abs, inside := pdfPath(in.Path, tc); !inside {
			e.Risk, e.RiskReason = tool.RiskHigh, "pdf writes "+abs+", outside the workspace"
		}
	case in.Action == "act" && (in.Kind == "click" || in.Kind == "press" || in.Kind == "type" && in.Submit):
		settings, err := loadSettings(tc.Config)
		if err != nil {
			return e, err
		}
		if host := m.formTarget(ctx, tc.SessionKey, in); host != "" && !settings.formAllowed(host) {
			e.Risk, e.RiskReason = tool.RiskHigh, "it may submit a form to "+host+", which is not in tools.browser.allowHosts or formHosts"
		}
	}
	return e, nil
}

// summary says in one line what the call does, and on which page.
func summary(in args, page string) string {
	s := "browser " + in.Action
	if in.Kind != "" {
		s += " " + in.Kind
	}
	if in.Ref != "" {
		s += " " + in.Ref
	}
	if in.URL != "" {
		return s + " " + in.URL
	}
	if page != "" {
		s += " on " + page
	}
	return s
}

// pageOf returns the address of the tab a call acts on, "" when the
// session's browser does not run or has no such tab. It starts nothing.
func (m *Manager) pageOf(ctx context.Context, session string, in args) string {
	s, err := m.session(session)
	if err != nil {
		return ""
	}
	defer s.mu.Unlock()
	if !s.running() {
		return ""
	}
	t, err := s.tab(in.TargetID)
	if err != nil {
		return ""
	}
	return s.tabURL(ctx, t)
}

// formTarget returns the host (host:port as the URL gives it) a click,
// Enter or submitted typing on in.Ref would send a form to; "" when it
// would send none, or the ref cannot be resolved (the call then fails).
func (m *Manager) formTarget(ctx context.Context, session string, in args) string {
	if in.Ref == "" || in.Action == "act" && in.Kind == "press" && !isEnter(in.Key) {
		return ""
	}
	s, err := m.session(session)
	if err != nil {
		return ""
	}
	defer s.mu.Unlock()
	if !s.running() {
		return ""
	}
	t, err := s.tab(in.TargetID)
	if err != nil {
		return ""
	}
	_, obj, err := t.element(ctx, in.Ref)
	if err != nil {
		return ""
	}
	host, _ := callOnObject[string](ctx, t, obj, `function(kind){
		const f = this.form || (this.closest && this.closest("form"));
		if (!f) return "";
		const tag = this.tagName, type = (this.type || "").toLowerCase();
		const submits = kind === "click"
			? (tag === "BUTTON" && type !== "button" && type !== "reset") || (tag === "INPUT" && (type === "submit" || type === "image"))
			: tag === "INPUT" || tag === "SELECT";
		if (!submits) return "";
		return new URL(f.action || location.href, location.href).host;
	}`, in.Kind)
	return host
}

// isEnter reports whether key names the Enter key.
func isEnter(key string) bool { return key == "\r" || key == "\n" || strings.EqualFold(key, "Enter") }
