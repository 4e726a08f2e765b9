package shell

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// gitOverrides are the settings git gets on the command line (through
// GIT_CONFIG_COUNT, which git treats like -c) when it runs without
// approval. They take precedence over every configuration file and turn
// off what can run a program or read a repository git merely found.
var gitOverrides = [][2]string{
	{"safe.bareRepository", "explicit"},
	// Any owner: the repository's configuration is vetted (gitConfigProblem)
	// and cannot run anything, and contained commands see the workspace
	// under another user id.
	{"safe.directory", "*"},
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"core.sshCommand", "false"},
	{"core.askPass", "false"},
	{"core.editor", "false"},
	{"core.gitProxy", ""},
	{"core.untrackedCache", "false"},
	{"credential.helper", ""},
	// Not diff.external: set to "", git diff would try to run "" and fail.
	// It is not on gitSafeKeys, and no system or user configuration is read.
	{"gpg.program", "false"},
	{"gpg.openpgp.program", "false"},
	{"gpg.x509.program", "false"},
	{"gpg.ssh.program", "false"},
	{"protocol.allow", "never"},
	{"protocol.file.allow", "never"},
	{"submodule.recurse", "false"},
	{"status.submoduleSummary", "false"},
	{"diff.ignoreSubmodules", "all"},
	{"log.showSignature", "false"},
	{"color.ui", "false"},
}

// gitEnv returns the variables git runs with without approval: no system
// or user configuration, the overrides above, no pager, no optional
// locks, no prompts, and no discovery of repositories above the workspace.
func gitEnv(root string) map[string]string {
	env := map[string]string{
		"GIT_CONFIG_NOSYSTEM":     "1",
		"GIT_CONFIG_GLOBAL":       "/dev/null",
		"GIT_CONFIG_SYSTEM":       "/dev/null",
		"GIT_ATTR_NOSYSTEM":       "1",
		"GIT_PAGER":               "cat",
		"PAGER":                   "cat",
		"GIT_OPTIONAL_LOCKS":      "0",
		"GIT_TERMINAL_PROMPT":     "0",
		"GIT_NO_REPLACE_OBJECTS":  "1",
		"GIT_PROTOCOL_FROM_USER":  "0",
		"GIT_ALLOW_PROTOCOL":      "",
		"GIT_CEILING_DIRECTORIES": filepath.Dir(root),
		"GIT_CONFIG_COUNT":        strconv.Itoa(len(gitOverrides)),
	}
	for i, kv := range gitOverrides {
		env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)] = kv[0]
		env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)] = kv[1]
	}
	return env
}

// gitSafeKeys are the configuration keys (lower case, path.Match patterns
// on the dotted name) a repository may set for git to run without
// approval: none of them names a program, a file to include or a command
// alias. Any other key — core.fsmonitor, hooks, pagers, diff.external,
// textconv, filters, credential helpers, core.sshCommand, alias.*,
// include.path, includeIf.*, and whatever git adds later — makes git need
// approval.
var gitSafeKeys = strings.Fields(`
	core.repositoryformatversion core.filemode core.bare core.logallrefupdates core.ignorecase
	core.precomposeunicode core.symlinks core.autocrlf core.eol core.safecrlf core.quotepath
	core.abbrev core.compression core.looscompression core.packedgitlimit core.packedgitwindowsize
	core.bigfilethreshold core.checkstat core.trustctime core.commentchar core.whitespace
	core.sharedrepository core.splitindex core.multipackindex core.commitgraph
	core.preloadindex core.fscache core.longpaths core.notesref
	extensions.* init.defaultbranch user.name user.email user.signingkey author.* committer.*
	remote.*.url remote.*.fetch remote.*.pushurl remote.*.push remote.*.tagopt remote.*.prune
	remote.*.mirror remote.*.skipdefaultupdate remote.*.promisor remote.*.partialclonefilter
	branch.*.remote branch.*.merge branch.*.rebase branch.*.pushremote branch.*.description
	pull.rebase pull.ff push.default push.autosetupremote fetch.prune merge.ff merge.conflictstyle
	rebase.autostash rebase.autosquash color.* column.* advice.* status.* log.date log.decorate
	log.abbrevcommit log.follow format.pretty diff.renames diff.algorithm diff.mnemonicprefix
	diff.noprefix diff.context diff.indentheuristic diff.colormoved blame.date gc.* pack.*
	index.* feature.* maintenance.* fetch.* receive.denycurrentbranch submodule.*.url
	submodule.*.active lfs.repositoryformatversion
`)

// gitConfigProblem runs git config --list in dir with the environment git
// gets without approval and returns the first setting of the repository
// git finds there that is not on gitSafeKeys, or "" when there is none
// (or no repository). It runs no program the repository could name:
// reading configuration runs nothing.
func gitConfigProblem(ctx context.Context, gitPath, dir, root string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitPath, "config", "--list", "--show-scope", "--includes", "-z")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + systemPath, "HOME=/nonexistent", "LC_ALL=C"}
	for k, v := range gitEnv(root) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" || strings.Contains(msg, "not in a git directory") {
			return "" // outside any repository: nothing of it is read
		}
		return "git cannot read the repository's configuration: " + firstLine(msg)
	}
	// -z: "scope\0key\nvalue\0" per entry.
	fields := strings.Split(out.String(), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope, entry := fields[i], fields[i+1]
		if scope == "command" {
			continue // the overrides
		}
		key, _, _ := strings.Cut(entry, "\n")
		key = strings.ToLower(key)
		if !gitKeySafe(key) {
			return fmt.Sprintf("the repository's configuration sets %s, which can make git run a program or read other files", key)
		}
	}
	return ""
}

func gitKeySafe(key string) bool {
	for _, p := range gitSafeKeys {
		// Patterns match dotted names element by element.
		if ok, _ := path.Match(strings.ReplaceAll(p, ".", "/"), strings.ReplaceAll(key, ".", "/")); ok {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
