package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; by
// default it comes from the module's build information.
var version = ""

type versionCmd struct {
	JSON bool `name:"json" help:"Print {\"version\",\"go\",\"os\",\"arch\"} as JSON."`
}

func (c versionCmd) Run(e *env) error {
	if c.JSON {
		return writeJSON(e.stdout, map[string]string{"version": buildVersion(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
	}
	_, err := fmt.Fprintf(e.stdout, "toolbelt %s (%s %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "dev"
	}
	return info.Main.Version
}
