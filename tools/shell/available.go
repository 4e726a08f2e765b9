package shell

import (
	"context"

	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/shell/sandbox"
)

// SandboxWorks says why commands cannot run in the sandbox in the
// workspace root with the settings of c (tools.exec), nil when they can:
// bubblewrap and prlimit are installed, and bubblewrap sets up the sandbox
// the exec tool would use there.
func SandboxWorks(ctx context.Context, c tool.Config, root string) error {
	cfg, err := loadSettings(c)
	if err != nil {
		return err
	}
	if err := sandbox.Installed(cfg.sandbox.Bwrap); err != nil {
		return err
	}
	b, err := sandbox.Find(ctx, cfg.sandbox.Bwrap)
	if err != nil {
		return err
	}
	return b.Check(ctx, sandbox.Spec{Root: root, Workdir: root, ProcessLimit: cfg.sandbox.ProcessLimit})
}
