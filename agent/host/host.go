// Package host runs agent sessions in the process: the session of an agent
// run, the sub-agents it spawns (sessions_spawn) and the sessions it sends
// messages to (sessions_send). It keeps each session's status and
// transcript in the store and delivers messages to sessions: to a running
// session as a follow-up (agent.Agent.FollowUp), to an idle one as a new
// run. A sub-agent's final answer is delivered to its parent the same way.
//
// Every session runs as an identity (tool.Identity) that is kept with it in
// the store: who it runs for (agent, channel, principal, owner or not) and
// the limits that bind it (sandbox, sub-agent policy). It is recorded when
// the session is created — a sub-agent's is its parent's, as a sub-agent of
// its agent — and every run of the session runs as it, however the work
// reached it; work asked for by someone with fewer rights than the session
// is refused (Identity).
//
// A Host implements sessions.Host; the tool context of every session it
// runs should carry it, so the session tools reach it.
package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/sessions"
)

// Agent is a configured agent as the host applies its sub-agent policy.
type Agent struct {
	ID string
	// Model is its PROVIDER/MODEL.
	Model string
	// Allow lists the agents it may spawn ("*": any).
	Allow []string
	// MaxDepth bounds how deep sub-agents below one of its sessions may
	// go; MaxConcurrent how many of a session's sub-agents may run at once.
	MaxDepth, MaxConcurrent int
}

// Defaults of the sub-agent policy for a session that runs as no agent.
const (
	DefaultMaxDepth      = 1
	DefaultMaxConcurrent = 4
)

// Spec says which session to run and as what.
type Spec struct {
	// Key is the session's key in the store.
	Key string
	// As is who the session runs as, its agent included ("" for none). For
	// Start it is who asks for the run: a kept session runs as the identity
	// recorded with it instead (see Host.Identity).
	As tool.Identity
	// ParentKey is the session that spawned it.
	ParentKey string
	// Model is its PROVIDER/MODEL.
	Model string
	// Thinking is its thinking level; empty: its agent's.
	Thinking string
	// Label names a sub-agent's task.
	Label string
	// Depth counts the sub-agent levels above it (0 for a session that
	// was not spawned).
	Depth int
	// Transient sessions are not kept in the store (a run without a
	// session key).
	Transient bool
}

// Builder makes the agent loop of a session: its model client (s.Model),
// system prompt, and a runner whose tool context runs as s.As
// (tool.Identity.RunAs) and carries the host.
type Builder func(s Spec) (*agent.Agent, error)

// Sessions is where a host keeps sessions: their records and transcripts
// (a *store.Sessions).
type Sessions interface {
	Info(ctx context.Context, key string) (store.SessionInfo, error)
	Messages(ctx context.Context, key string) ([]store.SessionMessage, error)
	List(ctx context.Context, f store.SessionFilter) ([]store.SessionInfo, error)
	Start(ctx context.Context, s store.SessionStart) error
	Append(ctx context.Context, key, workspace, model string, msgs []store.SessionMessage) error
	Finish(ctx context.Context, key, status string, usage store.SessionUsage) error
}

var _ Sessions = (*store.Sessions)(nil)

// Options configure a Host.
type Options struct {
	// Sessions keeps the sessions; Workspace is recorded with new ones.
	Sessions  Sessions
	Workspace string
	// Build makes a session's agent loop.
	Build Builder
	// Agents are the configured agents.
	Agents []Agent
	// ContextWindow returns a model's context window in tokens, 0 when it
	// is not known.
	ContextWindow func(model string) int
	// SubagentEnded, when set, is called with a sub-agent's session key
	// once its run has ended, before its report goes to its parent: what the
	// program keeps for the session (its browser) may go. A later message
	// to it starts a run afresh.
	SubagentEnded func(key string)
}

// Host runs sessions. Its methods are safe for concurrent use.
//
// Work for one session — starting or ending a run of it, loading it from
// the store — holds that session's lock (see lock) across its store I/O and
// the Builder; the host's own mutex guards only what it keeps in memory.
// So a store slow to answer for one session holds up no other, and whoever
// waits gives up when its context is done.
//
// It is a [lifecycle.Service]: sessions run between Start and Stop.
type Host struct {
	o      Options
	agents map[string]Agent
	loops  sync.WaitGroup // the sessions' run loops

	mu       sync.Mutex // guards the fields below and the sessions' run state
	sessions map[string]*session
	locks    map[string]chan struct{} // by session key, see lock
	active   int
	changed  chan struct{} // closed and replaced when active changes
	sends    map[string]*send
	started  bool
	stopped  bool
	base     context.Context    // the runs' life, from Start
	stop     context.CancelFunc // cancels base
}

// session is a session the host has run. Its Spec does not change once it
// is made; the rest is guarded by Host.mu, but for what only the run's
// goroutine uses.
type session struct {
	Spec
	a          *agent.Agent
	transcript []llm.Message
	running    bool
	killed     bool
	cancel     context.CancelFunc
	ended      chan struct{} // closed when the current run loop ends
	runID      string
	status     string
	err        error
	timeout    time.Duration
	waiters    []*send
	// context is the token count of its last model call.
	context atomic.Int64
	// saved counts the messages of the current agent run already in the
	// store, saveErr is the first error saving them, and record is the
	// context of the run's writes to the store; only the run's goroutine
	// uses them.
	saved   int
	saveErr error
	record  context.Context
}

// newSession makes the record of a session the host runs with a. Each
// message of a run is kept in the store as it ends (the loop reports
// messages in transcript order), so a running session's history shows it
// and a crash loses no more than the message in progress; and the size of
// each model call is noted as a's turns end.
func (h *Host) newSession(s Spec, a *agent.Agent, history []llm.Message) *session {
	s.As.SessionKey = s.Key
	ss := &session{Spec: s, a: a, transcript: history}
	ss.context.Store(int64(contextOf(history)))
	on := a.OnEvent
	a.OnEvent = func(e agent.Event) {
		switch {
		case e.Type == agent.EventMessageEnd && e.Message != nil:
			if err := h.save(ss, []llm.Message{*e.Message}); err != nil && ss.saveErr == nil {
				ss.saveErr = err
			}
			ss.saved++
		case e.Type == agent.EventTurnEnd && e.Message != nil && e.Message.Usage != nil:
			ss.context.Store(int64(contextOf([]llm.Message{*e.Message})))
		}
		if on != nil {
			on(e)
		}
	}
	return ss
}

// contextOf is the size in tokens of the last model call of msgs, 0 when
// none reports its usage.
func contextOf(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if u := msgs[i].Usage; msgs[i].Role == llm.RoleAssistant && u != nil {
			return u.Input + u.CacheRead + u.CacheWrite + u.Output
		}
	}
	return 0
}

// send is a message waiting for its reply.
type send struct {
	id, from, to string
	done         chan struct{}
	result       tool.SendResult
}

// New returns a host.
func New(o Options) *Host {
	h := &Host{o: o, agents: map[string]Agent{}, sessions: map[string]*session{}, locks: map[string]chan struct{}{}, changed: make(chan struct{}), sends: map[string]*send{}}
	for _, a := range o.Agents {
		h.agents[a.ID] = a
	}
	return h
}

// errNotRunning refuses a run outside Start and Stop.
var errNotRunning = errors.New("the session host is not running: no session can start")

// Start lets sessions run; ctx bounds starting only ([lifecycle.Service]).
func (h *Host) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started || h.stopped {
		return errors.New("session host: Start called twice, or after Stop")
	}
	h.started = true
	h.base, h.stop = context.WithCancel(context.WithoutCancel(ctx))
	return nil
}

// Stop refuses new runs — a session started, a message or a sub-agent's
// answer that would start one, a spawn — lets the runs under way finish
// until ctx ends, then cancels them, and returns once their loops have
// ended ([lifecycle.Service]).
func (h *Host) Stop(ctx context.Context) error {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil
	}
	h.stopped = true
	started := h.started
	h.mu.Unlock()
	if !started {
		return nil
	}
	err := lifecycle.Drain(ctx, &h.loops, h.stop)
	h.stop()
	h.endSessions(context.WithoutCancel(ctx))
	return err
}

// endSessions ends the sessions the host ran: their agents' session_end
// hooks run.
func (h *Host) endSessions(ctx context.Context) {
	h.mu.Lock()
	agents := make([]*agent.Agent, 0, len(h.sessions))
	for _, s := range h.sessions {
		agents = append(agents, s.a)
	}
	h.mu.Unlock()
	for _, a := range agents {
		a.EndSession(ctx, "exit")
	}
}

// running says whether runs may start; h.mu is held.
func (h *Host) running() bool { return h.started && !h.stopped }

// accepting returns errNotRunning when no run may start.
func (h *Host) accepting() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running() {
		return errNotRunning
	}
	return nil
}

var _ sessions.Host = (*Host)(nil)

// lock takes the lock of session key, which orders the work for it that
// reaches the store or the Builder: starting a run (Start, Deliver, Steer,
// Send, Spawn for the parent), ending one (its run loop) and loading the
// session. It waits until ctx is done. No one holds two session locks at
// once, so they cannot deadlock.
func (h *Host) lock(ctx context.Context, key string) (unlock func(), err error) {
	h.mu.Lock()
	l, ok := h.locks[key]
	if !ok {
		l = make(chan struct{}, 1)
		h.locks[key] = l
	}
	h.mu.Unlock()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("session %s: waiting for earlier work on it: %w", key, ctx.Err())
	}
}

// find returns the session key the host runs, if it does.
func (h *Host) find(key string) (*session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[key]
	return s, ok
}

// StartSession runs session s with history and the prompt messages,
// returning once the run has started. The session must not be running
// already, and the host must be started. A kept session runs as the
// identity recorded with it, which s.As (who asks) must not fall short of
// (see Identity). ctx bounds the start — waiting for earlier work on the
// session, reading and recording it — not the run, which ends with the
// model, Abort, its timeout or Stop.
func (h *Host) StartSession(ctx context.Context, s Spec, history []llm.Message, prompt ...llm.Message) error {
	if err := h.accepting(); err != nil {
		return err
	}
	unlock, err := h.lock(ctx, s.Key)
	if err != nil {
		return err
	}
	defer unlock()
	h.mu.Lock()
	old, ok := h.sessions[s.Key]
	busy := ok && old.running
	h.mu.Unlock()
	if busy {
		return fmt.Errorf("session %s is already running", s.Key)
	}
	if !s.Transient {
		info, kept, err := h.record(ctx, s.Key)
		if err != nil {
			return err
		}
		if s.As, err = resolve(s.Key, info, kept, s.As); err != nil {
			return err
		}
		if s.ParentKey == "" && info.ParentKey != "" {
			// A kept sub-agent's session resumed on its own keeps its place
			// below its parent, for the depth limit.
			if s.Depth, err = h.depthOf(ctx, info.ParentKey); err != nil {
				return err
			}
			s.ParentKey = info.ParentKey
		}
	}
	a, err := h.o.Build(s)
	if err != nil {
		return err
	}
	return h.run(ctx, h.newSession(s, a, history), prompt, 0)
}

// Identity returns who session key runs as when as asks for work in it (a
// person resuming it, a schedule's message): as is who asks, with the agent
// it asks for ("" for the session's own). A kept session runs as the
// identity recorded with it, which must be of that agent and must not have
// a right as lacks (tool.Identity.Exceeds); one kept before identities were
// recorded takes as's, with its own agent, as a sub-agent when it has a
// parent; a new session takes as's, but a sub-agent cannot start one (it
// spawns). Otherwise the error says why, and nothing should run.
func (h *Host) Identity(ctx context.Context, key string, as tool.Identity) (tool.Identity, error) {
	info, kept, err := h.record(ctx, key)
	if err != nil {
		return tool.Identity{}, err
	}
	return resolve(key, info, kept, as)
}

// record reads session key's record; kept is false when the store does not
// hold it.
func (h *Host) record(ctx context.Context, key string) (info store.SessionInfo, kept bool, err error) {
	info, err = h.o.Sessions.Info(ctx, key)
	switch {
	case errors.Is(err, store.ErrNoSession):
		return info, false, nil
	case err != nil:
		return info, false, fmt.Errorf("session %s: cannot tell who it runs as, so it is not run: %w", key, err)
	}
	return info, true, nil
}

// resolve is Identity for session key, whose record is info when kept.
func resolve(key string, info store.SessionInfo, kept bool, as tool.Identity) (tool.Identity, error) {
	switch {
	case !kept && as.Subagent:
		return tool.Identity{}, tool.InputErrorf("There is no session %q, and a sub-agent cannot start one: spawn a sub-agent with sessions_spawn, or send to a session that exists.", key)
	case !kept:
		as.SessionKey = key
		return as, nil
	case as.AgentID != "" && info.AgentID != "" && as.AgentID != info.AgentID:
		return tool.Identity{}, tool.InputErrorf("Session %q belongs to agent %q and runs only as it, not as agent %q: run it as %q (toolbelt run --agent %s), or without naming an agent.", key, info.AgentID, as.AgentID, info.AgentID, info.AgentID)
	case info.Identity == nil:
		// Kept before identities were recorded: the identity of whoever
		// asks, limited as the record says (recorded at its start).
		as.AgentID, as.SessionKey = cmp.Or(info.AgentID, as.AgentID), key
		as.Subagent = as.Subagent || info.ParentKey != ""
		return as, nil
	}
	id := *info.Identity
	if why := id.Exceeds(as); why != "" {
		return tool.Identity{}, refusal(key, why)
	}
	// The record keeps who, not where: the session runs where it is asked
	// to.
	id.SessionKey, id.Workspace = key, as.Workspace
	return id, nil
}

// refusal says that session key is not run for someone without the rights
// why names.
func refusal(key, why string) error {
	return tool.InputErrorf("Session %q has rights that whoever asked for this lacks (%s), so nothing was delivered to it and it did not run: a session takes work only from someone with every right it has. Send to sessions that run within your limits, or spawn a sub-agent (sessions_spawn).", key, why)
}

// Agent returns the agent loop of session key, to watch its events; nil
// when the host does not run it.
func (h *Host) Agent(key string) *agent.Agent {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.sessions[key]; ok {
		return s.a
	}
	return nil
}

// Wait returns when no session runs and none has a message waiting, or
// with ctx's error.
func (h *Host) Wait(ctx context.Context) error {
	for {
		h.mu.Lock()
		n, ch := h.active, h.changed
		h.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Abort cancels every run; Wait then returns once they have ended.
func (h *Host) Abort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sessions {
		if s.running {
			s.killed = true
			s.cancel()
		}
	}
}

// Result returns session key's transcript and the error its last run
// ended with.
func (h *Host) Result(key string) ([]llm.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[key]
	if !ok {
		return nil, fmt.Errorf("session %s: %w", key, store.ErrNoSession)
	}
	return append([]llm.Message(nil), s.transcript...), s.err
}

// Truncate keeps the first keep messages of the transcript of session key
// and drops the rest (a rewind of its conversation); its next run goes on
// from there. The session must not be running. The store's copy is the
// caller's to cut (store.Sessions.Truncate).
func (h *Host) Truncate(key string, keep int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[key]
	switch {
	case !ok:
		return fmt.Errorf("session %s: %w", key, store.ErrNoSession)
	case s.running:
		return fmt.Errorf("session %s: %w", key, store.ErrSessionRunning)
	case keep < 0 || keep > len(s.transcript):
		return fmt.Errorf("session %s has %d messages: it cannot keep %d", key, len(s.transcript), keep)
	}
	s.transcript = s.transcript[:keep:keep]
	s.context.Store(int64(contextOf(s.transcript)))
	return nil
}

// run records that s runs, makes it the session of its key the host runs
// and starts its run loop with prompt. The caller holds the lock of s.Key,
// or s is a new sub-agent no one else knows of yet; not h.mu.
func (h *Host) run(ctx context.Context, s *session, prompt []llm.Message, timeout time.Duration) error {
	if err := h.accepting(); err != nil {
		return err
	}
	if !s.Transient {
		if err := h.o.Sessions.Start(ctx, store.SessionStart{ID: s.Key, Workspace: h.o.Workspace, Model: s.Model, ParentKey: s.ParentKey, Label: s.Label, As: s.As}); err != nil {
			return err
		}
	}
	h.mu.Lock()
	base := h.base
	h.mu.Unlock()
	runCtx, cancel := context.WithCancel(base)
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(base, timeout)
	}
	if s.Key != "" {
		// Every call of the run runs as the session, whatever the runner
		// was made for.
		runCtx = invoke.WithCaller(runCtx, s.As)
	}
	h.mu.Lock()
	if !h.running() {
		// Stop came while the run was being recorded.
		h.mu.Unlock()
		cancel()
		if !s.Transient {
			_ = h.o.Sessions.Finish(context.WithoutCancel(ctx), s.Key, store.SessionAborted, store.SessionUsage{})
		}
		return errNotRunning
	}
	h.sessions[s.Key] = s
	s.running, s.killed, s.cancel, s.ended, s.runID, s.status, s.err, s.timeout = true, false, cancel, make(chan struct{}), randid.New("run-", 6), store.SessionRunning, nil, timeout
	h.setActive(+1)
	h.loops.Go(func() { h.loop(runCtx, s, prompt) })
	h.mu.Unlock()
	return nil
}

// setActive counts d more active sessions; h.mu is held.
func (h *Host) setActive(d int) {
	h.active += d
	close(h.changed)
	h.changed = make(chan struct{})
}

// loop runs s until the model stops with no message waiting.
func (h *Host) loop(ctx context.Context, s *session, prompt []llm.Message) {
	h.mu.Lock()
	history, a, ended, cancel := s.transcript, s.a, s.ended, s.cancel
	h.mu.Unlock()
	defer cancel()
	// The run's messages and end are recorded even when it was cancelled.
	record := context.WithoutCancel(ctx)
	s.record = record
	for {
		s.saved, s.saveErr = 0, nil
		transcript, err := a.Run(ctx, history, prompt...)
		// What the events did not bring (none, as the loop reports every
		// message) is kept now.
		if fresh := transcript[len(history):]; s.saved < len(fresh) {
			if err := h.save(s, fresh[s.saved:]); err != nil && s.saveErr == nil {
				s.saveErr = err
			}
		}
		unlock, _ := h.lock(record, s.Key) // never cancelled
		h.mu.Lock()
		s.transcript = transcript
		// Messages that came while the run was ending (or failing: a
		// sub-agent's answer must not be lost with a provider error) start
		// another run; a cancelled session takes none.
		if more := a.Drain(); len(more) > 0 && ctx.Err() == nil {
			h.mu.Unlock()
			unlock()
			history, prompt = transcript, more
			continue
		}
		status := settle(ctx, s, err)
		h.mu.Unlock()
		report, toParent := h.finish(s, status, transcript[len(history):])
		if s.ParentKey != "" && h.o.SubagentEnded != nil {
			h.o.SubagentEnded(s.Key) // before a new run of s may start
		}
		if p := h.agentOf(s.ParentKey); p != nil {
			p.RunSubagentStop(record, agent.SubagentStop{Session: s.ParentKey, Child: s.Key, Agent: s.As.AgentID, Label: s.Label, Status: status, Answer: lastAnswer(transcript)})
		}
		unlock() // from here on, a new run of s may start
		if toParent {
			_ = h.Deliver(record, s.ParentKey, llm.UserText(report))
		}
		h.mu.Lock()
		close(ended)
		h.setActive(-1)
		h.mu.Unlock()
		return
	}
}

// settle marks s as no longer running after its loop ended with err, with
// the status of how it ended, and returns that status; h.mu is held.
func settle(ctx context.Context, s *session, err error) string {
	s.running = false
	s.err = cmp.Or(err, s.saveErr)
	s.status = store.SessionDone
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		s.status, s.err = store.SessionFailed, fmt.Errorf("the run timed out after %s (runTimeoutSeconds)", s.timeout)
	case ctx.Err() != nil:
		s.status = store.SessionAborted
	case s.err != nil:
		s.status = store.SessionFailed
	}
	return s.status
}

// finish records that the run of s, which added the messages fresh, ended
// with status, answers whoever waits for its reply and returns the report
// for its parent, when it is to have one. The lock of s.Key is held.
func (h *Host) finish(s *session, status string, fresh []llm.Message) (report string, toParent bool) {
	var err error
	if !s.Transient {
		err = h.o.Sessions.Finish(s.record, s.Key, status, Usage(fresh))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.err = cmp.Or(s.err, err)
	answer := lastAnswer(s.transcript)
	for _, w := range s.waiters {
		w.result = tool.SendResult{Status: "ok", SessionKey: s.Key, Reply: answer, ReplyStatus: status}
		if s.err != nil {
			w.result.Error = s.err.Error()
		}
		close(w.done)
	}
	s.waiters = nil
	_, parent := h.sessions[s.ParentKey]
	return h.report(s, answer), parent && s.ParentKey != "" && !s.killed
}

// report is the follow-up that tells a parent how its sub-agent's run
// ended, with its answer.
func (h *Host) report(s *session, answer string) string {
	name := s.Key
	if s.Label != "" {
		name = fmt.Sprintf("%q (%s)", s.Label, s.Key)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[sub-agent %s, agent %s, run %s: %s", name, cmp.Or(s.As.AgentID, "-"), s.runID, s.status)
	if s.err != nil {
		fmt.Fprintf(&b, ": %v", s.err)
	}
	b.WriteString("]\n")
	if answer == "" {
		b.WriteString("(no answer)")
	}
	b.WriteString(answer)
	return b.String()
}

// save appends a run's messages to the store.
func (h *Host) save(s *session, msgs []llm.Message) error {
	if s.Transient || len(msgs) == 0 {
		return nil
	}
	rows, err := Rows(s.Key, msgs)
	if err != nil {
		return err
	}
	return h.o.Sessions.Append(s.record, s.Key, h.o.Workspace, s.Model, rows)
}

// Rows encodes the messages msgs of session key as a store keeps them
// (ReadTranscript reads them back).
func Rows(key string, msgs []llm.Message) ([]store.SessionMessage, error) {
	rows := make([]store.SessionMessage, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("session %s: encoding a message: %w", key, err)
		}
		rows[i] = store.SessionMessage{Role: m.Role, Body: b}
		if m.Timestamp > 0 {
			rows[i].Time = time.UnixMilli(m.Timestamp)
		}
	}
	return rows, nil
}

// Usage adds up the tokens the messages msgs of a run used.
func Usage(msgs []llm.Message) store.SessionUsage {
	var u store.SessionUsage
	for _, m := range msgs {
		if m.Usage != nil {
			u.Input += int64(m.Usage.Input)
			u.Output += int64(m.Usage.Output)
		}
	}
	return u
}

// lastAnswer is the text of the transcript's last assistant message.
func lastAnswer(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return strings.TrimSpace(msgs[i].Text())
		}
	}
	return ""
}

// Deliver hands m to session key: a follow-up when it runs, a new run
// when it is idle. ctx bounds the delivery, as it does Start.
func (h *Host) Deliver(ctx context.Context, key string, m llm.Message) error {
	unlock, err := h.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	s, ok := h.find(key)
	if !ok {
		return fmt.Errorf("session %s: %w", key, store.ErrNoSession)
	}
	return h.deliver(ctx, s, m, (*agent.Agent).FollowUp)
}

// deliver hands m to s: to its run by pass (as a follow-up or to steer it)
// when it runs, in a new run when it is idle. The lock of s.Key is held.
func (h *Host) deliver(ctx context.Context, s *session, m llm.Message, pass func(*agent.Agent, llm.Message)) error {
	h.mu.Lock()
	running := s.running
	if running {
		pass(s.a, m)
	}
	h.mu.Unlock()
	if running {
		return nil
	}
	return h.run(ctx, s, []llm.Message{m}, 0)
}

// Transcript returns the messages the store keeps of session key, in
// order; none for a session it does not hold. A message that cannot be read
// is an error: a session is not resumed without part of its history.
func (h *Host) Transcript(ctx context.Context, key string) ([]llm.Message, error) {
	return ReadTranscript(ctx, h.o.Sessions, key)
}

// ReadTranscript returns the messages ss keeps of session key, in order,
// as Host.Transcript does, for a program that runs no host.
func ReadTranscript(ctx context.Context, ss Sessions, key string) ([]llm.Message, error) {
	rows, err := ss.Messages(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([]llm.Message, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r.Body, &out[i]); err != nil {
			return nil, fmt.Errorf("session %s: message %d cannot be read: %v", key, r.Seq, err)
		}
	}
	return out, nil
}

// adopt returns the session key the host runs, for work asked for by by,
// loading it from the store when it does not run it yet; a session that
// runs with rights by lacks is refused. The lock of key is held.
func (h *Host) adopt(ctx context.Context, key string, by tool.Identity) (*session, error) {
	by.AgentID = "" // the session's own agent
	if s, ok := h.find(key); ok {
		if why := s.As.Exceeds(by); why != "" {
			return nil, refusal(key, why)
		}
		return s, nil
	}
	info, err := h.o.Sessions.Info(ctx, key)
	if errors.Is(err, store.ErrNoSession) {
		return nil, tool.InputErrorf("No session %q: use sessions_list to see the sessions you can reach.", key)
	}
	if err != nil {
		return nil, err
	}
	if info.AgentID == "" {
		return nil, tool.InputErrorf("Session %q runs as no configured agent, so it cannot be run to take a message.", key)
	}
	if _, ok := h.agents[info.AgentID]; !ok {
		return nil, tool.InputErrorf("Session %q belongs to agent %q, which is no longer configured.", key, info.AgentID)
	}
	if info.Status == store.SessionRunning {
		return nil, tool.InputErrorf("Session %q is running in another process (or one that stopped without finishing its record), so this one cannot deliver to it.", key)
	}
	history, err := h.Transcript(ctx, key)
	if err != nil {
		return nil, err
	}
	as, err := resolve(key, info, true, by)
	if err != nil {
		return nil, err
	}
	depth, err := h.depthOf(ctx, info.ParentKey)
	if err != nil {
		return nil, err
	}
	spec := Spec{Key: key, As: as, ParentKey: info.ParentKey, Model: info.Model, Label: info.Label, Depth: depth}
	a, err := h.o.Build(spec)
	if err != nil {
		return nil, err
	}
	s := h.newSession(spec, a, history)
	s.status = info.Status
	h.mu.Lock()
	h.sessions[key] = s
	h.mu.Unlock()
	return s, nil
}

// depthOf is the depth of a child of session parent. A session above it
// that cannot be read is an error: the depth limit is not guessed.
func (h *Host) depthOf(ctx context.Context, parent string) (int, error) {
	d := 0
	for seen := map[string]bool{}; parent != "" && !seen[parent]; d++ {
		seen[parent] = true
		if p, ok := h.find(parent); ok {
			return d + p.Depth + 1, nil
		}
		info, err := h.o.Sessions.Info(ctx, parent)
		if err != nil {
			return 0, fmt.Errorf("session %s, above the one to run, cannot be read, so how deep it is (subagents.maxDepth) is not known: %w", parent, err)
		}
		parent = info.ParentKey
	}
	return d, nil
}

// limits returns agent id's sub-agent policy.
func (h *Host) limits(id string) Agent {
	a, ok := h.agents[id]
	if !ok {
		return Agent{ID: id, Allow: []string{"*"}, MaxDepth: DefaultMaxDepth, MaxConcurrent: DefaultMaxConcurrent}
	}
	a.MaxDepth = cmp.Or(a.MaxDepth, DefaultMaxDepth)
	a.MaxConcurrent = cmp.Or(a.MaxConcurrent, DefaultMaxConcurrent)
	return a
}

// caller returns the running session key, or a refusal.
func (h *Host) caller(key, what string) (*session, error) {
	if key == "" {
		return nil, tool.InputErrorf("%s needs a session: this run keeps none (run it with --agent ID or --session KEY).", what)
	}
	s, ok := h.find(key)
	if !ok {
		return nil, tool.InputErrorf("%s: session %q is not run by this process, so it cannot reach its sub-agents.", what, key)
	}
	return s, nil
}

// Spawn implements sessions.Host.
func (h *Host) Spawn(ctx context.Context, req tool.SpawnRequest) (tool.SpawnResult, error) {
	parent, err := h.caller(req.ParentKey, "sessions_spawn")
	if err != nil {
		return tool.SpawnResult{}, err
	}
	target := cmp.Or(req.AgentID, parent.As.AgentID)
	if target == "" {
		return tool.SpawnResult{}, tool.InputErrorf("Name the agent to spawn with agentId: this session runs as no agent, so there is no own agent to default to (agents_list shows them).")
	}
	ta, ok := h.agents[target]
	if !ok {
		return tool.SpawnResult{}, tool.InputErrorf("No agent %q is configured: agents_list shows the agents you may spawn.", target)
	}
	if parent.As.AgentID != "" {
		if own := h.limits(parent.As.AgentID); !slices.Contains(own.Allow, "*") && !slices.Contains(own.Allow, target) {
			allowed := "none"
			if len(own.Allow) > 0 {
				allowed = strings.Join(own.Allow, ", ")
			}
			return tool.SpawnResult{}, tool.InputErrorf("Agent %q may not spawn agent %q: its subagents.allow names %s.", parent.As.AgentID, target, allowed)
		}
	}
	// Spawns from one session are made one at a time, for its limits.
	unlock, err := h.lock(ctx, parent.Key)
	if err != nil {
		return tool.SpawnResult{}, err
	}
	defer unlock()
	if err := h.checkDepth(ctx, parent); err != nil {
		return tool.SpawnResult{}, err
	}
	own := h.limits(parent.As.AgentID)
	if running := h.runningChildren(parent.Key); running >= own.MaxConcurrent {
		return tool.SpawnResult{}, tool.InputErrorf("Session %q already has %d sub-agents running, the limit of agent %q (subagents.maxConcurrent %d): wait for one to finish (its answer comes to you as a message) or stop one with subagents kill.",
			parent.Key, running, cmp.Or(parent.As.AgentID, "-"), own.MaxConcurrent)
	}
	model := cmp.Or(req.Model, ta.Model)
	// The child runs as its parent does, as a sub-agent of its own agent.
	as := parent.As
	as.AgentID, as.Subagent = target, true
	spec := Spec{Key: store.SessionKey(target, "subagent", randid.New("", 6)), As: as, ParentKey: parent.Key, Model: model, Thinking: req.Thinking, Label: req.Label, Depth: parent.Depth + 1}
	a, err := h.o.Build(spec)
	if err != nil {
		return tool.SpawnResult{}, tool.InputErrorf("Cannot start agent %q with model %q: %v", target, model, err)
	}
	s := h.newSession(spec, a, nil)
	if pa := h.agentOf(parent.Key); pa != nil {
		pa.RunSubagentStart(ctx, agent.SubagentStart{Session: parent.Key, Child: spec.Key, Agent: target, Label: req.Label, Task: req.Task})
	}
	if err := h.run(ctx, s, []llm.Message{llm.UserText(req.Task)}, req.Timeout); err != nil {
		return tool.SpawnResult{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return tool.SpawnResult{Status: "accepted", ChildSessionKey: spec.Key, RunID: s.runID, AgentID: target, Model: model}, nil
}

// agentOf returns the agent loop of session key, nil when the host has
// not run it.
func (h *Host) agentOf(key string) *agent.Agent {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.sessions[key]; ok && key != "" {
		return s.a
	}
	return nil
}

// runningChildren counts the sub-agents of session key that run.
func (h *Host) runningChildren(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.sessions {
		if c.ParentKey == key && c.running {
			n++
		}
	}
	return n
}

// checkDepth refuses a spawn from parent that would go deeper than the
// maxDepth of parent's agent or of any agent above it allows, and one whose
// ancestors cannot be read: the limit is not guessed.
func (h *Host) checkDepth(ctx context.Context, parent *session) error {
	depth := parent.Depth + 1
	for key, d := parent.Key, parent.Depth; key != "" && d >= 0; d-- {
		agentID, next := "", ""
		if s, ok := h.find(key); ok {
			agentID, next = s.As.AgentID, s.ParentKey
		} else if info, err := h.o.Sessions.Info(ctx, key); err == nil {
			agentID, next = info.AgentID, info.ParentKey
		} else {
			return fmt.Errorf("spawning from session %q: session %s above it cannot be read, so the depth limits (subagents.maxDepth) cannot be checked: %w", parent.Key, key, err)
		}
		if l := h.limits(agentID); depth-d > l.MaxDepth {
			where := "its own session"
			if key != parent.Key {
				where = fmt.Sprintf("session %q of agent %q above it", key, cmp.Or(agentID, "-"))
			}
			return tool.InputErrorf("Spawning from session %q is refused: a sub-agent of it would be %d levels below %s, and subagents.maxDepth of agent %q is %d. Do the task yourself.",
				parent.Key, depth-d, where, cmp.Or(agentID, "-"), l.MaxDepth)
		}
		key = next
	}
	return nil
}

// child returns the sub-agent childKey of parentKey, or a refusal; the
// lock of childKey is held.
func (h *Host) child(ctx context.Context, parentKey, childKey, what string) (*session, error) {
	parent, err := h.caller(parentKey, what)
	if err != nil {
		return nil, err
	}
	s, ok := h.find(childKey)
	if !ok {
		info, err := h.o.Sessions.Info(ctx, childKey)
		if err != nil && !errors.Is(err, store.ErrNoSession) {
			return nil, err
		}
		if err != nil || info.ParentKey != parentKey {
			return nil, tool.InputErrorf("%q is not a sub-agent of your session %q: subagents list shows yours.", childKey, parentKey)
		}
		return h.adopt(ctx, childKey, parent.As)
	}
	if s.ParentKey != parentKey {
		return nil, tool.InputErrorf("%q is not a sub-agent of your session %q: subagents list shows yours.", childKey, parentKey)
	}
	return s, nil
}

// Children implements sessions.Host.
func (h *Host) Children(ctx context.Context, parentKey string) ([]tool.ChildInfo, error) {
	list, err := h.o.Sessions.List(ctx, store.SessionFilter{ParentKey: parentKey, Limit: 1000})
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []tool.ChildInfo{}
	for _, c := range list {
		ci := tool.ChildInfo{Key: c.ID, AgentID: c.AgentID, Label: c.Label, Status: c.Status, Model: c.Model}
		if s, ok := h.sessions[c.ID]; ok {
			ci.Status, ci.RunID = s.status, s.runID
			if !s.running {
				ci.Answer = textclip.Clip(lastAnswer(s.transcript), 500)
			}
			if s.err != nil {
				ci.Error = s.err.Error()
			}
		}
		out = append(out, ci)
	}
	slices.SortFunc(out, func(a, b tool.ChildInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Steer implements sessions.Host.
func (h *Host) Steer(ctx context.Context, parentKey, childKey, message string) error {
	unlock, err := h.lock(ctx, childKey)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := h.child(ctx, parentKey, childKey, "subagents steer")
	if err != nil {
		return err
	}
	return h.deliver(ctx, s, llm.UserText(message), (*agent.Agent).Steer)
}

// Kill implements sessions.Host. It returns once the run has ended.
func (h *Host) Kill(ctx context.Context, parentKey, childKey string) error {
	unlock, err := h.lock(ctx, childKey)
	if err != nil {
		return err
	}
	s, err := h.child(ctx, parentKey, childKey, "subagents kill")
	unlock()
	if err != nil {
		return err
	}
	h.mu.Lock()
	if !s.running {
		h.mu.Unlock()
		return tool.InputErrorf("Sub-agent %q is not running (status %s): there is nothing to stop.", childKey, s.status)
	}
	var ended []chan struct{}
	var kill func(*session)
	kill = func(s *session) {
		if s.running {
			s.killed = true
			s.cancel()
			ended = append(ended, s.ended)
		}
		for _, c := range h.sessions {
			if c.ParentKey == s.Key {
				kill(c)
			}
		}
	}
	kill(s)
	h.mu.Unlock()
	for _, ch := range ended {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Send implements sessions.Host.
func (h *Host) Send(ctx context.Context, req tool.SendRequest) (tool.SendResult, error) {
	if req.From == req.To {
		return tool.SendResult{}, tool.InputErrorf("Session %q is your own session: sessions_send delivers to another session.", req.To)
	}
	sender, err := h.caller(req.From, "sessions_send")
	if err != nil {
		return tool.SendResult{}, err
	}
	w, err := h.sendTo(ctx, sender, req)
	if err != nil {
		return tool.SendResult{}, err
	}
	if req.Timeout <= 0 {
		return tool.SendResult{Status: "accepted", SessionKey: req.To, Message: "Delivered; not waiting for the reply (give timeoutSeconds to wait for it)."}, nil
	}
	return h.await(ctx, w, req.Timeout)
}

// sendTo delivers req's message from sender to session req.To, with a
// waiter for its reply when req.Timeout is set.
func (h *Host) sendTo(ctx context.Context, sender *session, req tool.SendRequest) (*send, error) {
	unlock, err := h.lock(ctx, req.To)
	if err != nil {
		return nil, err
	}
	defer unlock()
	target, err := h.adopt(ctx, req.To, sender.As)
	if err != nil {
		return nil, err
	}
	w := &send{id: randid.New("send-", 6), from: req.From, to: req.To, done: make(chan struct{})}
	if req.Timeout > 0 {
		h.mu.Lock()
		target.waiters = append(target.waiters, w)
		h.sends[w.id] = w
		h.mu.Unlock()
	}
	m := llm.UserText(fmt.Sprintf("[message from session %s]\n%s", req.From, req.Message))
	pass := (*agent.Agent).FollowUp
	if req.Steer {
		pass = (*agent.Agent).Steer
	}
	if err := h.deliver(ctx, target, m, pass); err != nil {
		h.mu.Lock()
		delete(h.sends, w.id)
		target.waiters = slices.DeleteFunc(target.waiters, func(x *send) bool { return x == w })
		h.mu.Unlock()
		return nil, err
	}
	return w, nil
}

// Await implements sessions.Host.
func (h *Host) Await(ctx context.Context, from, handle string, timeout time.Duration) (tool.SendResult, error) {
	h.mu.Lock()
	w, ok := h.sends[handle]
	h.mu.Unlock()
	if !ok || w.from != from {
		return tool.SendResult{}, tool.InputErrorf("No pending reply has the handle %q for your session: a handle is given by a sessions_send that timed out, and its reply is collected once.", handle)
	}
	return h.await(ctx, w, timeout)
}

func (h *Host) await(ctx context.Context, w *send, timeout time.Duration) (tool.SendResult, error) {
	replied := func() tool.SendResult {
		h.mu.Lock()
		delete(h.sends, w.id)
		h.mu.Unlock()
		return w.result
	}
	select {
	case <-w.done:
		return replied(), nil
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.done:
		return replied(), nil
	case <-t.C:
		return tool.SendResult{Status: "pending", SessionKey: w.to, Handle: w.id,
			Message: fmt.Sprintf("No reply within %s; session %s is still working on it. Call sessions_send with handle %q (and timeoutSeconds) to wait for the reply again.", timeout, w.to, w.id)}, nil
	case <-ctx.Done():
		return tool.SendResult{}, ctx.Err()
	}
}

// Queue implements sessions.Host.
func (h *Host) Queue(key string) tool.SessionQueue {
	h.mu.Lock()
	defer h.mu.Unlock()
	var q tool.SessionQueue
	s, ok := h.sessions[key]
	if !ok {
		return q
	}
	q.Running = s.running
	q.PendingMessages = s.a.Queued()
	for _, c := range h.sessions {
		if c.ParentKey == key && c.running {
			q.RunningChildren++
		}
	}
	q.ContextTokens = int(s.context.Load())
	if h.o.ContextWindow != nil {
		q.ContextWindow = h.o.ContextWindow(s.Model)
	}
	return q
}
