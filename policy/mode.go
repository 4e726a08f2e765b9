package policy

import (
	"fmt"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/internal/closest"
)

// Mode is a permission mode: what happens to a call the policy lets
// through, before anyone is asked. A deny is a deny in every mode.
type Mode string

// The permission modes.
const (
	// ModeDefault asks when the policy, a hook or the call's risk says
	// to ask.
	ModeDefault Mode = "default"
	// ModeAcceptEdits lets file changes inside the workspace (write, edit,
	// apply_patch) run without asking; everything else asks as in default.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan refuses every call that may change anything, telling the
	// model it is planning: only read-only tools (and commands the shell
	// knows change nothing) run.
	ModePlan Mode = "plan"
	// ModeDontAsk denies what would ask, saying so.
	ModeDontAsk Mode = "dontAsk"
	// ModeBypass runs everything without asking, commands only inside the
	// sandbox; it is never available to a process running as root, nor
	// where the sandbox does not work.
	ModeBypass Mode = "bypass"
)

// Modes lists the permission modes, from the most careful default on.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass}

// Description says in a line what the mode does.
func (m Mode) Description() string {
	switch m {
	case ModeDefault:
		return "ask when the policy, a hook or a call's risk says to"
	case ModeAcceptEdits:
		return "file changes inside the workspace run without asking"
	case ModePlan:
		return "read-only: tools that change anything are refused while the model plans"
	case ModeDontAsk:
		return "what would ask is denied, without asking"
	case ModeBypass:
		return "everything runs without asking; commands only in the sandbox"
	}
	return ""
}

// modeNames are the names of Modes.
func modeNames() []string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return names
}

// ParseMode returns the mode named name; "" is ModeDefault. An unknown
// name's error lists the modes and names the closest.
func ParseMode(name string) (Mode, error) {
	if name == "" {
		return ModeDefault, nil
	}
	for _, m := range Modes {
		if string(m) == name {
			return m, nil
		}
	}
	names := modeNames()
	msg := fmt.Sprintf("%q is not a permission mode: use %s or %s", name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
	if c := closest.Names(name, names, 1); len(c) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", c[0])
	}
	return "", fmt.Errorf("%s", msg)
}

// ModeSwitch holds the permission mode calls run in: the configured one
// (for all agents, and per agent), until Set chooses one for every call.
// It is safe for concurrent use; a switch shows in the next call.
type ModeSwitch struct {
	mu     sync.RWMutex
	base   Mode
	agents map[string]Mode
	set    Mode // "" until Set
}

// NewModeSwitch returns a switch in mode base ("" for ModeDefault), where
// the agents named in agents run in their own mode.
func NewModeSwitch(base Mode, agents map[string]Mode) *ModeSwitch {
	if base == "" {
		base = ModeDefault
	}
	return &ModeSwitch{base: base, agents: agents}
}

// Configure replaces the configured modes (base, "" for ModeDefault, and
// the agents'), as a running server does when its configuration changes;
// a mode Set chose stays in force.
func (s *ModeSwitch) Configure(base Mode, agents map[string]Mode) {
	if base == "" {
		base = ModeDefault
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base, s.agents = base, agents
}

// For returns the mode of a call made by agent ("" for none): the one Set
// chose, else the agent's configured mode, else the configured one.
func (s *ModeSwitch) For(agent string) Mode {
	if s == nil {
		return ModeDefault
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.set != "" {
		return s.set
	}
	if m := s.agents[agent]; m != "" {
		return m
	}
	return s.base
}

// Set makes every later call run in m, whichever agent makes it.
func (s *ModeSwitch) Set(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = m
}

// Uses reports whether any call may run in m as configured or set now.
func (s *ModeSwitch) Uses(m Mode) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.set != "" {
		return s.set == m
	}
	if s.base == m {
		return true
	}
	for _, a := range s.agents {
		if a == m {
			return true
		}
	}
	return false
}
