//go:build !unix

package doctest

import "os/exec"

func ownGroup(*exec.Cmd)  {}
func stopGroup(*exec.Cmd) {}
