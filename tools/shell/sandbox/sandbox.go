// Package sandbox runs commands under bubblewrap (bwrap), two ways.
// Contain is for commands that run without approval: nothing writable, no
// network, only the workspace and the system's programs visible. Wrap is
// the sandbox a call or the configuration asks for: as an unprivileged
// user, with the workspace the only writable directory, no network, a
// private /tmp, and a limit on the number of processes.
//
// Both build the command's view of the file system from nothing: an empty
// root, then read-only the system's programs and libraries and a few files
// of /etc, then the workspace. Nothing else of the host is there — no home
// directory (when the workspace lies in one, only the workspace's own path
// is), no /run, /var or other users' files, and so none of the host's
// Unix sockets; abstract sockets belong to the network namespace, which is
// new and empty. In the sandbox, the paths the workspace's file bridge
// protects stay read-only (see Spec.Protect), and sockets inside the
// workspace are covered.
//
// The limits apply inside the sandbox only, never to the calling process:
// the process limit is set by prlimit(1) as the last step before the
// command runs, inside the sandbox's own user namespace, so it counts the
// sandbox's processes and nothing else.
//
// The kernel does not enforce process limits on processes whose real user
// is root, so when the server runs as root the sandbox runs as the owner of
// the workspace instead, and refuses to run when that owner is root too.
package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SandboxUID is the user and group id commands have inside the sandbox
// ("nobody" on most systems).
const SandboxUID = 65534

// Bwrap is bubblewrap as installed on this machine.
type Bwrap struct {
	path    string
	prlimit string
	// disableUserns: this version can forbid new user namespaces inside.
	disableUserns bool
}

// Find looks up bubblewrap (name "" means "bwrap" from PATH) and the
// prlimit helper, and what this bubblewrap supports. Its error, written for
// the model, says what is missing and how to install it.
func Find(ctx context.Context, name string) (*Bwrap, error) {
	if name == "" {
		name = "bwrap"
	}
	path, prlimit, err := find(name)
	if err != nil {
		return nil, fmt.Errorf("this command must run in the sandbox, but %w, so the command was not run. Install it and retry", err)
	}
	help, err := exec.CommandContext(ctx, path, "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("this command must run in the sandbox, but %s --help failed (%v), so the command was not run. Reinstall bubblewrap (Debian/Ubuntu: apt-get install --reinstall bubblewrap)", path, err)
	}
	return &Bwrap{path: path, prlimit: prlimit, disableUserns: bytes.Contains(help, []byte("--disable-userns"))}, nil
}

// Installed says whether the sandbox's programs are installed: bubblewrap
// (name "" means "bwrap" from PATH) and prlimit. Its error says which is
// missing and how to install it.
func Installed(name string) error {
	_, _, err := find(cmp.Or(name, "bwrap"))
	return err
}

// find looks up bubblewrap and prlimit.
func find(name string) (bwrap, prlimit string, err error) {
	if bwrap, err = exec.LookPath(name); err != nil {
		return "", "", fmt.Errorf("bubblewrap (%s) is not installed (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)", name)
	}
	if prlimit, err = exec.LookPath("prlimit"); err != nil {
		return "", "", errors.New("prlimit (from util-linux), which sets the sandbox's process limit, is not installed (Debian/Ubuntu: apt-get install util-linux)")
	}
	return bwrap, prlimit, nil
}

// Spec describes one sandboxed run.
type Spec struct {
	// Root is the workspace (an absolute, real path): the only writable
	// directory.
	Root string
	// Workdir is where the command starts (Root or below it).
	Workdir string
	// ProcessLimit bounds the processes the command may run at once; it
	// must be positive.
	ProcessLimit int
	// ReadOnly lists directories outside the system's to show read-only
	// (the folder of a directory tool).
	ReadOnly []string
	// Conceal lists directories inside Root to cover with an empty file
	// system (Toolbelt's data directory, when the workspace holds it), so
	// that the command can neither read nor change them. Directories that
	// do not exist or lie outside Root are left alone.
	Conceal []string
	// Protect is the protected-path list of the workspace's file bridge
	// (fsbridge.Local.Protection), so that the command cannot change what
	// the file tools may not: every path in Root it matches, at any depth,
	// is mounted read-only, and each of its Names that does not exist is
	// held while the command runs (see Plan.Release) by an empty,
	// read-only directory, so that it cannot be created either. Nil
	// protects nothing.
	Protect Protection
	// Network, when set, gives the command the network through a proxy
	// (see Network); nil keeps it off the network.
	Network *Network
}

// Protection is a protected-path list (fsbridge.Protection).
type Protection interface {
	// Match reports whether a path relative to the root (slash-separated,
	// symbolic links resolved) is protected.
	Match(rel string) bool
	// Names returns the protected paths, relative to the root, that can
	// be created: those the list names without wildcards.
	Names() []string
}

// Plan is how to start a sandboxed command: run Path with Args, as
// Credential when it is not nil, with Env added to the environment. The
// process must be started in a directory every user can enter ("/"), and
// Release called once it has exited (or if it is never started).
type Plan struct {
	Path       string
	Args       []string
	Credential *syscall.Credential
	Env        map[string]string
	release    func()
}

// Release gives up what the plan holds in the workspace: the directories
// that keep protected names from being created (see Spec.Protect) are
// removed when no other sandbox in the workspace still needs them. Call it
// once the sandbox's process has exited — every process of a sandbox ends
// with it — and not before, or a command still running could create what
// they held. Calling it again does nothing.
func (p Plan) Release() {
	if p.release != nil {
		p.release()
	}
}

// Wrap returns the plan that runs argv in the sandbox s describes. Its
// error, written for the model, says why the sandbox cannot run and how to
// fix it.
func (b *Bwrap) Wrap(s Spec, argv []string) (Plan, error) {
	if len(argv) == 0 {
		return Plan{}, errors.New("sandbox: nothing to run")
	}
	if s.ProcessLimit <= 0 {
		return Plan{}, fmt.Errorf("sandbox: the process limit must be positive, not %d", s.ProcessLimit)
	}
	cred, err := identity(s.Root)
	if err != nil {
		return Plan{}, err
	}
	h, err := hold(s.Root, s.Protect)
	if err != nil {
		return Plan{}, err
	}
	cover := survey(s.Root, s.Protect, s.Conceal)
	args := []string{
		"--die-with-parent",
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", strconv.Itoa(SandboxUID), "--gid", strconv.Itoa(SandboxUID),
		"--hostname", "sandbox",
	}
	if b.disableUserns {
		args = append(args, "--disable-userns")
	}
	args = append(args, systemArgs(sandboxSystem())...)
	args = append(args,
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--bind", s.Root, s.Root,
	)
	for _, dir := range s.ReadOnly {
		args = append(args, "--ro-bind", dir, dir)
	}
	for _, p := range cover.protected {
		args = append(args, "--ro-bind", p, p)
	}
	// After the protected paths, which may hold a concealed directory (a
	// bind shows the host's tree, without what covers it here).
	args = append(args, concealArgs(s.Root, s.Conceal)...)
	args = append(args, cover.socketArgs()...)
	env := map[string]string{"HOME": "/tmp", "TMPDIR": "/tmp"}
	var forwarder []string
	if s.Network != nil {
		mounts, command, err := networkArgs(s.Network)
		if err != nil {
			h.release()
			return Plan{}, err
		}
		args, forwarder = append(args, mounts...), command
		maps.Copy(env, networkEnv())
	}
	args = append(args,
		"--remount-ro", "/", // the empty root the view is built on
		"--chdir", s.Workdir,
		"--",
	)
	args = append(args, forwarder...)
	args = append(args,
		b.prlimit, fmt.Sprintf("--nproc=%d:%d", s.ProcessLimit, s.ProcessLimit), "--",
	)
	args = append(args, argv...)
	return Plan{
		Path:       b.path,
		Args:       args,
		Credential: cred,
		Env:        env,
		release:    h.release,
	}, nil
}

// identity returns the credentials bubblewrap must run with: none (the
// server's own user) unless the server is root, in which case the owner of
// the workspace, because the kernel does not apply process limits to root.
func identity(root string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot inspect the workspace: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, errors.New("sandbox: cannot find the owner of the workspace on this system")
	}
	if sys.Uid == 0 {
		return nil, fmt.Errorf("this command must run in the sandbox, but toolbelt runs as root and the workspace %s belongs to root, so the command was not run: sandboxed commands never run as root (the kernel would not enforce their process limit). Give the workspace to an unprivileged user (chown -R USER %s) or run toolbelt as that user", root, root)
	}
	return &syscall.Credential{Uid: sys.Uid, Gid: sys.Gid, Groups: []uint32{}}, nil
}

// Check runs a command that does nothing in the sandbox s describes, to
// find out whether bubblewrap can set it up here (it needs user
// namespaces). The error says what failed and what to do.
func (b *Bwrap) Check(ctx context.Context, s Spec) error {
	p, err := b.Wrap(s, []string{"true"})
	if err != nil {
		return err
	}
	defer p.Release()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Path, p.Args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.Credential, Setsid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("this command must run in the sandbox, but bubblewrap cannot set up its sandbox here (%s), so the command was not run. bubblewrap needs unprivileged user namespaces (sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0 where those exist), and the workspace %s must be reachable by its owner", msg, s.Root)
	}
	return nil
}

// systemDirs are what a contained command sees of the system besides the
// workspace: the programs and libraries, and the few files of /etc the
// dynamic loader and programs' alternatives need.
var systemDirs = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
	"/etc/magic", "/etc/magic.mime",
}

// sandboxEtc is what builds and tests in the sandbox also read of /etc:
// users and groups, how to resolve localhost, certificates, MIME types,
// the system's name, the time zone, fonts, terminal descriptions, and the
// parts of Java, Python and Perl installed there (patterns).
var sandboxEtc = []string{
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/ssl", "/etc/ca-certificates", "/etc/mime.types",
	"/etc/os-release", "/etc/timezone", "/etc/fonts", "/etc/terminfo", "/etc/java-*", "/etc/python3*", "/etc/perl",
}

// sandboxSystem is what a command in the sandbox sees of the system:
// systemDirs and sandboxEtc, its patterns expanded.
func sandboxSystem() []string {
	paths := append([]string(nil), systemDirs...)
	for _, p := range sandboxEtc {
		matches, _ := filepath.Glob(p) // the patterns are well-formed
		paths = append(paths, matches...)
	}
	return paths
}

// systemArgs mounts paths read-only where they are, skipping those this
// system does not have.
func systemArgs(paths []string) []string {
	var args []string
	for _, p := range paths {
		args = append(args, "--ro-bind-try", p, p)
	}
	return args
}

// Contain returns the plan that runs argv contained: in new namespaces of
// every kind (no network), in a new session, dying with its parent, with
// the workspace root read-only, a read-only minimal view of the system
// (systemDirs, nothing of the rest of /etc, no home, no /run), an empty
// /tmp, its own /dev and /proc, and as root without capabilities. Nothing
// it does can change a file or reach the network; all it can read is the
// workspace and the system's programs; nor can it reach a process on the
// host through a Unix socket (those in the workspace are covered). The
// directories of conceal inside root (see Spec.Conceal) are covered with
// an empty file system.
func (b *Bwrap) Contain(root, workdir string, conceal, argv []string) Plan {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}
	if b.disableUserns {
		args = append(args, "--unshare-user", "--disable-userns")
	}
	args = append(args, systemArgs(systemDirs)...)
	args = append(args,
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--ro-bind", root, root,
	)
	args = append(args, concealArgs(root, conceal)...)
	args = append(args, survey(root, nil, conceal).socketArgs()...)
	args = append(args, "--remount-ro", "/", "--chdir", workdir, "--")
	return Plan{Path: b.path, Args: append(args, argv...), Env: map[string]string{"HOME": "/tmp", "TMPDIR": "/tmp"}}
}

// CheckContain runs a command that does nothing contained in root, to find
// out whether bubblewrap can set it up here.
func (b *Bwrap) CheckContain(ctx context.Context, root string) error {
	p := b.Contain(root, root, nil, []string{"/bin/sh", "-c", "exit 0"})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Path, p.Args...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bubblewrap cannot contain commands here: %s", strings.TrimSpace(out.String()+" "+err.Error()))
	}
	return nil
}

// concealArgs covers each directory of dirs that exists below root (a real
// path) with an empty, read-only file system; they come after root's own
// mount, which they must cover.
func concealArgs(root string, dirs []string) []string {
	var args []string
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // not there: nothing to hide
		}
		if real == root || !inside(real, root) {
			continue
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			continue
		}
		args = append(args, "--tmpfs", real, "--remount-ro", real)
	}
	return args
}
