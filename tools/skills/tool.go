package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Name is the skill tool's name.
const Name = "skill"

// maxFiles bounds the files a loaded skill lists.
const maxFiles = 200

type args struct {
	Name string `json:"name" jsonschema:"The skill's name, as the system prompt lists it." minLength:"1"`
	File string `json:"file,omitempty" jsonschema:"A file of the skill to read instead, relative to its folder (one the loaded skill lists)."`
}

const description = "Load a skill: its instructions, which say how to do a kind of task, and the list of its other files. " +
	"The system prompt lists the skills by name and description; load one when the task matches it, then follow it. " +
	"With file, read one of the skill's other files."

// Details are a skill result's details.
type Details struct {
	Name string `json:"name"`
	// File is the file read, "" for the skill itself.
	File string `json:"file,omitempty"`
	// Files are the skill's other files, relative to its folder.
	Files []string `json:"files,omitempty"`
	// Trusted is false for a workspace skill.
	Trusted bool `json:"trusted"`
	// PreApproved are the tools the skill pre-approved in the session.
	PreApproved []string `json:"preApproved,omitempty"`
}

// Register adds the skill tool to reg. It is offered to a tool context
// that carries a Catalog with skills (Service).
func Register(reg *registry.Registry) error {
	t, err := tool.New(Name, description, load)
	if err != nil {
		return err
	}
	meta := tool.Meta{ID: Name, Label: "Skill", Description: description, ReadOnly: true, Idempotent: true, Source: tool.SourceCore}
	return reg.RegisterFactory(func(tc *tool.Context) (*tool.Tool, error) {
		if c, ok := Service.Get(tc); !ok || len(c.skills) == 0 {
			return nil, &tool.NotHere{Reason: "no skills here: toolbelt run and chat offer the skills of the workspace's .toolbelt/skills, the user's toolbelt/skills and skills.paths (docs/agents.md)"}
		}
		own := t
		return &own, nil
	}, meta)
}

func load(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
	c, _ := Service.Get(inv.Context)
	s, ok := c.Get(in.Name)
	if !ok {
		names := make([]string, len(c.skills))
		for i, s := range c.skills {
			names[i] = s.Name
		}
		return tool.Result{}, tool.InputErrorf("No skill is called %q. The skills: %s.", in.Name, strings.Join(names, ", "))
	}
	if in.File != "" {
		return readFile(s, in.File)
	}
	files, err := otherFiles(s.Dir)
	if err != nil {
		return tool.Result{}, fmt.Errorf("listing the skill's files: %w", err)
	}
	scope, _ := tool.ScopeFrom(ctx)
	c.activate(scope.Session, s)
	d := Details{Name: s.Name, Files: files, Trusted: s.Trusted}
	if s.Trusted {
		d.PreApproved = s.AllowedTools
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: loaded(s, files, inv.Context.Workspace)}}, Details: d}, nil
}

// loaded is the text of a loaded skill: its body, its other files and
// how to read them, and what its allowed-tools do.
func loaded(s Skill, files []string, workspace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s loaded. Follow these instructions:\n\n%s\n", s.Name, s.Body)
	if len(files) > 0 {
		rel, err := filepath.Rel(workspace, s.Dir)
		if inWorkspace := workspace != "" && err == nil && filepath.IsLocal(rel); inWorkspace {
			fmt.Fprintf(&b, "\nThe skill's other files, in its folder %s of the workspace (read them with read when the instructions call for them):\n", filepath.ToSlash(rel))
		} else {
			fmt.Fprintf(&b, "\nThe skill's other files (read one when the instructions call for it with skill, name %q and file):\n", s.Name)
		}
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	switch {
	case len(s.AllowedTools) == 0:
	case s.Trusted:
		fmt.Fprintf(&b, "\nPre-approved while this skill is active in this session (no confirmation; policy denials and ask rules still hold): %s\n", strings.Join(s.AllowedTools, ", "))
	default:
		fmt.Fprintf(&b, "\nThis skill comes from the workspace, which is untrusted: its allowed-tools (%s) pre-approve nothing, and calls are confirmed as usual.\n", strings.Join(s.AllowedTools, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// otherFiles lists the files in dir besides SKILL.md, relative to it, with
// slashes, at most maxFiles of them.
func otherFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || p == filepath.Join(dir, FileName) {
			return nil
		}
		if len(files) == maxFiles {
			return fs.SkipAll
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	return files, err
}

// readFile reads name in the skill's folder, confined to it.
func readFile(s Skill, name string) (tool.Result, error) {
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return tool.Result{}, err
	}
	defer root.Close()
	b, err := root.ReadFile(filepath.FromSlash(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return tool.Result{}, tool.InputErrorf("Skill %s has no file %q: load the skill to see its files.", s.Name, name)
		}
		return tool.Result{}, tool.InputErrorf("Reading %q of skill %s: %v (files are read inside the skill's folder only).", name, s.Name, err)
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: string(b)}}, Details: Details{Name: s.Name, File: name, Trusted: s.Trusted}}, nil
}
