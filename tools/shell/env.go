package shell

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// secretMarkers are the name fragments of variables that commands do not
// inherit unless allowlisted: they usually hold credentials the server has
// and the model must not read.
var secretMarkers = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"}

// lockedNames are variables a call may not set: they change which programs
// run or what a shell executes before the command (PATH, loader and shell
// start-up hooks), so setting them could turn an allowed command into any
// other.
var lockedNames = []string{
	"PATH", "HOME", "ZDOTDIR", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS",
	"PS4", "PROMPT_COMMAND", "IFS", "GCONV_PATH",
}

// lockedPrefixes are prefixes of variables a call may not set (dynamic
// loader settings on Linux and macOS, exported bash functions).
var lockedPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnv refuses variables a call may not set, naming each one and why.
func checkEnv(env map[string]string) error {
	var bad []string
	for _, name := range sortedKeys(env) {
		switch {
		case !envName.MatchString(name):
			bad = append(bad, fmt.Sprintf("%q is not a valid variable name (use letters, digits and '_', not starting with a digit)", name))
		case slices.Contains(lockedNames, strings.ToUpper(name)):
			bad = append(bad, fmt.Sprintf("%s may not be set: it changes which programs or start-up scripts run", name))
		case hasLockedPrefix(name):
			bad = append(bad, fmt.Sprintf("%s may not be set: variables starting with %s are refused because they inject code into programs", name, strings.Join(lockedPrefixes, ", ")))
		case strings.ContainsRune(env[name], 0):
			bad = append(bad, fmt.Sprintf("the value of %s contains a NUL byte", name))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("env was refused and the command was not run: %s. Remove these variables from env (to change directory use workdir; to run a program not on PATH give its full path in the command)", strings.Join(bad, "; "))
	}
	return nil
}

// hasLockedPrefix reports whether name starts like a variable a call may
// not set.
func hasLockedPrefix(name string) bool {
	up := strings.ToUpper(name)
	return slices.ContainsFunc(lockedPrefixes, func(p string) bool { return strings.HasPrefix(up, p) })
}

// commandEnv returns the environment a command runs with: base (the
// server's environment, as "NAME=value" entries) without secret-looking
// variables that allow does not list, then set, which replaces variables of
// the same name.
func commandEnv(base, allow []string, set map[string]string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || looksSecret(name) && !allowed(name, allow) {
			continue
		}
		if _, replaced := set[name]; replaced {
			continue
		}
		out = append(out, kv)
	}
	for _, name := range sortedKeys(set) {
		out = append(out, name+"="+set[name])
	}
	return out
}

// looksSecret reports whether a variable's name suggests it holds a secret.
func looksSecret(name string) bool {
	up := strings.ToUpper(name)
	return slices.ContainsFunc(secretMarkers, func(m string) bool { return strings.Contains(up, m) })
}

// allowed reports whether name matches one of the allowlist's patterns.
func allowed(name string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, _ := path.Match(p, name)
		return ok
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
