// Package wrapper knows the programs that start another program named by
// their arguments — env, timeout, xargs, sudo, … — and how each reads its
// arguments before that program, as the GNU and BSD tools document them.
// The shell tool lists the programs a command line starts with it, and the
// audit keeps those programs' names out of redaction.
package wrapper

import (
	"path"
	"slices"
	"strings"
)

// Spec is how a wrapper reads its arguments: options, then (env) NAME=VALUE
// words, then its own operands (timeout's duration), then the command it
// starts.
type Spec struct {
	// valued options take a value: the next word, or attached (-n5,
	// --max-args=5); plain ones take none, or an optional attached one
	// (xargs -i{}, --replace={}).
	valued, plain []string
	// assigns: NAME=VALUE words come before the command (env).
	assigns bool
	// operands is how many operands of its own come before the command.
	operands int
	// oldNice: -N gives the adjustment (nice -5).
	oldNice bool
}

func spec(valued, plain string) Spec {
	return Spec{valued: strings.Fields(valued), plain: strings.Fields(plain)}
}

// specs are the wrappers. Options that make a wrapper run something else
// than its operands — env -S (--split-string), flock -c, runuser -c — are
// left out on purpose: unknown, they make the command it starts unknown.
var specs = map[string]Spec{
	"exec":    spec("-a", "-c -l"),
	"command": spec("", "-p"),
	"builtin": spec("", ""),
	"nohup":   spec("", ""),
	"setsid":  spec("", "-c -f -w --ctty --fork --wait"),
	"busybox": spec("", ""),
	"source":  spec("", ""),
	".":       spec("", ""),
	"env": with(spec("-u -C --unset --chdir",
		"- -i -0 -v --ignore-environment --null --debug --block-signal --default-signal --ignore-signal --list-signal-handling"),
		func(s *Spec) { s.assigns = true }),
	"nice":    with(spec("-n --adjustment", ""), func(s *Spec) { s.oldNice = true }),
	"ionice":  spec("-c -n -p -P -u --class --classdata --pid --pgid --uid", "-t --ignore"),
	"timeout": with(spec("-s -k --signal --kill-after", "-v -f -p --verbose --foreground --preserve-status"), operand),
	"sudo": spec("-u -g -h -p -C -D -R -T -U -r -t --user --group --host --prompt --close-from --chdir --chroot --command-timeout --other-user --role --type",
		"-A -b -E -H -i -K -k -l -n -P -S -s -V -v --askpass --background --preserve-env --set-home --login --remove-timestamp --reset-timestamp --list --non-interactive --preserve-groups --stdin --shell --version --validate"),
	"doas": spec("-u -C", "-n -s -L"),
	"xargs": spec("-a -d -E -I -L -n -P -s --arg-file --delimiter --max-lines --max-args --max-procs --max-chars --process-slot-var",
		"-0 -e -i -l -o -p -r -t -x --null --eof --replace --interactive --no-run-if-empty --open-tty --verbose --exit"),
	"stdbuf":  spec("-i -o -e --input --output --error", ""),
	"chroot":  with(spec("--userspec --groups", "--skip-chdir"), operand),
	"taskset": with(spec("", "-a -p -c --all-tasks --pid --cpu-list"), operand),
	"flock": with(spec("-w -E --timeout --conflict-exit-code",
		"-s -x -u -n -o -F --shared --exclusive --unlock --nonblock --close --no-fork --verbose"), operand),
	"time": spec("-f -o --format --output", "-p -a -v --portability --append --verbose"),
	"strace": spec("-o -e -p -s -u -E -P -a -b -I -O -S -X",
		"-f -c -C -d -D -F -h -i -k -n -q -r -t -T -v -V -w -x -y -z -Z"),
	"nsenter": spec("-t -S -G --target --setuid --setgid --wd",
		"-a -m -u -i -n -p -U -C -T -r -w -F --all --mount --uts --ipc --net --pid --user --cgroup --time --root --preserve-credentials --no-fork"),
	"runuser": spec("-u -g -G -s --user --group --supp-group --shell", "-l -m -p --login --preserve-environment"),
	"sshpass": spec("-p -f -d -P", "-e -v"),
}

func with(s Spec, f func(*Spec)) Spec {
	f(&s)
	return s
}

func operand(s *Spec) { s.operands = 1 }

// Lookup returns how the program name (a path: its base name counts)
// reads its arguments, and false when it starts no program named by them.
func Lookup(name string) (Spec, bool) {
	s, ok := specs[path.Base(name)]
	return s, ok
}

// Split says where args, the arguments of a wrapper, stop being its own:
// args[:operands] are its options (and NAME=VALUE words), args[operands:command]
// its own operands, args[command:] the command it starts (none when command
// is len(args)). known is false when an option is not one the wrapper is
// known to read, or changes what it starts (env -S): then the split takes
// it as an option without a value, a guess.
func (s Spec) Split(args []string) (operands, command int, known bool) {
	known = true
	i := 0
options:
	for i < len(args) {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			if a == "-" && slices.Contains(s.plain, "-") {
				i++
				continue
			}
			break
		}
		i++
		switch {
		case a == "--":
			break options
		case slices.Contains(s.valued, a):
			i = min(i+1, len(args))
		case slices.Contains(s.plain, a):
		case strings.HasPrefix(a, "--"):
			name, _, attached := strings.Cut(a, "=")
			if !attached || !slices.Contains(s.valued, name) && !slices.Contains(s.plain, name) {
				known = false
			}
		case s.oldNice && strings.Trim(a[1:], "0123456789") == "":
		case !s.shortOptions(a):
			known = false
		}
	}
	if s.assigns {
		for i < len(args) && strings.Contains(args[i], "=") {
			i++
		}
	}
	return i, min(i+s.operands, len(args)), known
}

// shortOptions reports whether a, one word of short options (-0r, -n5,
// -i{}), is made of options s knows: plain ones, then perhaps one that
// takes the rest of the word as its value.
func (s Spec) shortOptions(a string) bool {
	for i := 1; i < len(a); i++ {
		o := "-" + a[i:i+1]
		switch {
		case slices.Contains(s.valued, o):
			return i+1 < len(a) // attached; a separate value would be the next word
		case slices.Contains(s.plain, o):
		default:
			return false
		}
	}
	return true
}
