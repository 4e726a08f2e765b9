//go:build !linux

package shell

// groupAlive reports whether a process is left in the process group pgid.
func groupAlive(pgid int) bool { return groupExists(pgid) }
