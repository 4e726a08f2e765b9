// Package testlocale gives tests a collating locale: one in which the C
// library orders text by a language's rules rather than byte by byte, as
// en_US.UTF-8 puts "a.txt" before "Z" (bash sorts its glob matches so).
package testlocale

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Name is the collating locale the tests use.
const Name = "en_US.UTF-8"

// install generates Name once per process when it is missing.
var install = sync.OnceValue(func() string {
	if collates() {
		return ""
	}
	if os.Geteuid() != 0 {
		return "the locale " + Name + " is not installed (install it with: localedef -i en_US -f UTF-8 " + Name + ", as root; Debian's locales package)"
	}
	if out, err := exec.Command("localedef", "-i", "en_US", "-f", "UTF-8", Name).CombinedOutput(); err != nil && !collates() {
		return "the locale " + Name + " is not installed and localedef could not generate it (install Debian's locales package): " + strings.TrimSpace(string(out))
	}
	if !collates() {
		return "the locale " + Name + " was generated but does not collate"
	}
	return ""
})

// collates reports whether sort orders by Name's rules ("a" before "Z").
func collates() bool {
	cmd := exec.Command("sort")
	cmd.Env = append(os.Environ(), "LC_ALL="+Name)
	cmd.Stdin = strings.NewReader("Z\na\n")
	out, err := cmd.Output()
	return err == nil && string(out) == "a\nZ\n"
}

// Collating returns Name, generating the locale with localedef when it is
// missing and the test runs as root; when that cannot be done the test is
// skipped, saying how to install it.
func Collating(t testing.TB) string {
	t.Helper()
	if why := install(); why != "" {
		t.Skip(why)
	}
	return Name
}
