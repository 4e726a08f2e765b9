package dir

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// TestSandboxedHandler runs a handler whose metadata asks for the sandbox:
// it can write the workspace, not its own folder, and has no network. Its
// folder is untrusted, so the approved call runs from a copy of it, and its
// result comes back wrapped as external content.
func TestSandboxedHandler(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed, so the sandbox cannot be tested: apt-get install bubblewrap")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, tools := filepath.Join(base, "ws"), filepath.Join(base, "tools")
	for _, d := range []string{ws, tools} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		// Sandboxed programs run as the workspace's owner, never as root.
		if err := os.Chown(ws, sandbox.SandboxUID, sandbox.SandboxUID); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{base, filepath.Dir(base)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := sandbox.Find(context.Background(), "")
	if err == nil {
		err = b.Check(context.Background(), sandbox.Spec{Root: ws, Workdir: ws, ProcessLimit: 64})
	}
	if err != nil {
		t.Skipf("bubblewrap cannot create its sandbox here: %v", err)
	}
	folder := shTool(t, tools, "boxed", `
touch "$TOOLBELT_TOOL_DIR/escaped" 2>/dev/null && out=escaped || out=contained
echo hi > inside.txt && out="$out wrote-workspace"
printf '{"success":true,"result":"%s host=%s"}' "$out" "$(hostname)"`, map[string]any{"sandbox": true})
	dt, err := Load(folder, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := reg.Register(dt.Tool()); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: ws}}, invoke.WithConfirmer(invoke.AutoApprove))
	msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "boxed", Arguments: []byte(`{"text":"x"}`)})
	if got := text(msg); !strings.Contains(got, "\ncontained wrote-workspace host=sandbox\n<<<END_EXTERNAL_UNTRUSTED_CONTENT") {
		t.Errorf("result = %q", got)
	}
	if _, err := os.Stat(filepath.Join(folder, "escaped")); err == nil {
		t.Error("the sandboxed handler wrote outside the workspace")
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || !strings.Contains(string(b), "hi") {
		t.Errorf("the handler did not write the workspace: %v", err)
	}
}

// TestSandboxRequiredFailsClosed: a tool whose metadata asks for the
// sandbox is not run when bubblewrap cannot be found, or when the call has
// no workspace to confine it to.
func TestSandboxRequiredFailsClosed(t *testing.T) {
	t.Parallel()
	tools := t.TempDir()
	folder := shTool(t, tools, "boxed", `touch "$TOOLBELT_TOOL_DIR/ran"; echo '{"success":true,"result":"ran"}'`, map[string]any{"sandbox": true})
	for _, c := range []struct {
		name, bwrap, ws, want string
	}{
		{"no bubblewrap", filepath.Join(tools, "no-such-bwrap"), t.TempDir(), "bwrap"},
		{"no workspace", "", "", "must run in the sandbox, which needs a workspace"},
	} {
		dt, err := Load(folder, Options{Bwrap: c.bwrap})
		if err != nil {
			t.Fatal(err)
		}
		reg := registry.New()
		if err := reg.Register(dt.Tool()); err != nil {
			t.Fatal(err)
		}
		r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: c.ws}}, invoke.WithConfirmer(invoke.AutoApprove))
		msg := r.Run(context.Background(), tool.Call{ID: "c", Name: "boxed", Arguments: []byte(`{"text":"x"}`)})
		if !msg.IsError || !strings.Contains(text(msg), c.want) {
			t.Errorf("%s: result = %q, want an error about %q", c.name, text(msg), c.want)
		}
		if _, err := os.Stat(filepath.Join(folder, "ran")); err == nil {
			t.Fatalf("%s: the handler ran outside the sandbox", c.name)
		}
	}
}
