package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Report statuses.
const (
	StatusClean    = "clean"
	StatusDiverged = "diverged"
	StatusRefused  = "refused"
)

// ToolsFunc builds today's tool surface for a recorded configuration, the
// same way a live run builds it: gated by rc's permission mode and tracked
// for taint. An error means a tool the recording used no longer exists.
type ToolsFunc func(rc transcript.Config) (*tool.Registry, *tool.Tracker, error)

// Options configure one replay.
type Options struct {
	Session *session.Session
	// Providers gives the client of each provider and model a turn is sent
	// to: by default the ones of the attach that recorded the turn, unless
	// Override replaces them. Each turn's config record names its own.
	Providers ProviderFunc
	Override  Override
	Mode      Mode
	// PermissionMode, when set, replaces the recorded one for live calls.
	PermissionMode string
	// Sent, when set, makes each turn's config, once its provider is
	// chosen, hold what that provider sends (the settings it does not
	// take recorded as null).
	Sent func(rc *transcript.Config)
	// SystemPrompt, when set, replaces the recorded system prompt of every
	// attach: a prompt tried against the recording.
	SystemPrompt *string
	MechaVersion string
	Tools        ToolsFunc
	// MCPServers describes today's MCP servers, as a config record names
	// them, with the tools among offered (nil: no MCP server). The
	// replay's config records name them, and a server whose version
	// changed since the recording is noted.
	MCPServers func(offered []string) []transcript.MCPServer
	// Recorder receives the replay's own records (its config per turn,
	// messages, taint, summaries). Nil records nothing.
	Recorder agent.Recorder
	Prices   pricing.Table
	Now      func() time.Time
	Log      io.Writer
}

// Report is the outcome of a replay.
type Report struct {
	Session string `json:"session"`
	// Provider and Model answered the first turn; when not every turn went
	// to the same pair, Attaches says who answered each attach's turns.
	Provider      string       `json:"provider"`
	Model         string       `json:"model"`
	Attaches      []Attach     `json:"attaches,omitempty"`
	Mode          Mode         `json:"mode"`
	Steered       bool         `json:"steered"`
	Status        string       `json:"status"`
	Reason        string       `json:"reason,omitempty"`
	CallsExpected int          `json:"calls_expected"`
	CallsReplayed int          `json:"calls_replayed"`
	CallsRun      int          `json:"calls_run"`
	Divergences   []Divergence `json:"divergences"`
	// RequestChanges are the parts of each attach's request that differ
	// from the recording's (system prompt, tools offered and their specs,
	// model, provider, sampling, thinking, limits), in that order, attach
	// by attach: what the replay changed before the model answered.
	RequestChanges []RequestChange `json:"request_changes"`
	// RequestFingerprints hash each part of each attach's request, as
	// recorded and as sent: two replays whose fingerprints agree sent the
	// same requests, whatever the model answered.
	RequestFingerprints []RequestFingerprint `json:"request_fingerprints"`
	// ToolSpecChanges are the tools whose spec (description, input schema)
	// differs from the recorded one: the model was offered today's, so a
	// changed description is part of what the replay measured. Not a
	// divergence. Null when the recording predates recorded specs.
	ToolSpecChanges []SpecChange `json:"tool_spec_changes"`
	// Notes are things worth knowing about the comparison that are not
	// divergences: an MCP server whose version changed since the
	// recording, for one.
	Notes []string         `json:"notes"`
	Turns int              `json:"turns"`
	Usage transcript.Usage `json:"usage"`
	// CostUSD is what the replay's model calls cost at today's prices;
	// null when a model that answered has no price.
	CostUSD *float64 `json:"cost_usd"`
	// Recorded are the recording's calls and Replayed the calls the
	// replay's model made, each in order with its turn: the two sequences
	// a side-by-side view lines up, turn by turn and position by position
	// within a turn, as the replay compared them.
	Recorded []Step `json:"recorded"`
	Replayed []Step `json:"replayed"`
	// Replay is the id of the session that recorded the replay, if any.
	Replay string `json:"replay,omitempty"`
	// Children are the replays of the child sessions (subagents' runs)
	// of the session, with a deep replay ("mecha replay --deep"), in the
	// order of the calls that started them.
	Children []Child `json:"children,omitempty"`
}

// Child is the deep replay of one child session.
type Child struct {
	// CallID is the id of the parent's call the child answered, and
	// Index that call's index among the parent's calls (-1 when the
	// recording holds no such call).
	CallID  string `json:"call_id"`
	Index   int    `json:"index"`
	Session string `json:"session"`
	// Report is the child's replay (refused ones included).
	Report *Report `json:"report"`
}

// Diverged reports whether the replay or any child's diverged.
func (r *Report) Diverged() bool {
	if len(r.Divergences) > 0 {
		return true
	}
	for _, c := range r.Children {
		if c.Report != nil && (c.Report.Diverged() || c.Report.Status == StatusRefused) {
			return true
		}
	}
	return false
}

// CallIndex is the index among s's calls of the call with the given id,
// -1 when there is none.
func CallIndex(s *session.Session, id string) int {
	traj, err := Extract(s)
	if err != nil {
		return -1
	}
	for i, c := range traj.Calls() {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Step is one call of a sequence: its turn (from 1), its position in its
// sequence (from 0), and whether it ran for real (live mode).
type Step struct {
	Turn  int             `json:"turn"`
	Index int             `json:"index"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Live  bool            `json:"live,omitempty"`
}

// Structural reports whether any divergence is structural.
func (r *Report) Structural() bool {
	for _, d := range r.Divergences {
		if d.Structural {
			return true
		}
	}
	return false
}

// refusal is a reason a session cannot be replayed.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// check reports whether a session can be replayed with today's tools,
// without running anything, and returns the tools whose spec changed since
// the recording (nil when the recording has no specs to compare with).
func check(s *session.Session, tools ToolsFunc) (*Trajectory, []SpecChange, error) {
	traj, err := Extract(s)
	if err != nil {
		return nil, nil, err
	}
	if len(traj.Turns) == 0 {
		return nil, nil, &refusal{"replay: the session has no user turn to replay"}
	}
	var changes specChanges
	seen := map[*transcript.Config]bool{}
	for _, turn := range traj.Turns {
		reg, _, err := tools(*turn.Config)
		if err != nil {
			var unknown *tool.UnknownError
			if errors.As(err, &unknown) {
				if msg := mcpMissing(turn.Config, unknown.Unknown, "offered"); msg != "" {
					return nil, nil, &refusal{msg}
				}
			}
			return nil, nil, &refusal{fmt.Sprintf("replay: a tool the recording offered no longer exists: %v", err)}
		}
		for _, c := range turn.Calls {
			if _, ok := reg.Get(c.Name); !ok {
				if msg := mcpMissing(turn.Config, []string{c.Name}, "called"); msg != "" {
					return nil, nil, &refusal{msg}
				}
				return nil, nil, &refusal{fmt.Sprintf("replay: the recording called %q, which no longer exists", c.Name)}
			}
		}
		if !seen[turn.Config] {
			seen[turn.Config] = true
			changes.compare(turn.Config.ToolSpecs, reg)
		}
	}
	return traj, changes.list, nil
}

// Replay re-drives a session. It returns a report whenever the replay ran
// or was refused (the refusal is then also the error); other errors mean
// the replay itself failed (the provider, recording, an interrupt).
func Replay(ctx context.Context, opts Options) (*Report, error) {
	rep := &Report{Session: opts.Session.Meta.ID, Mode: opts.Mode, Divergences: []Divergence{}}
	if ts := Targets(opts.Session, opts.Override); len(ts) > 0 {
		rep.Provider, rep.Model = ts[0].Provider, ts[0].Model
	}
	traj, changed, err := check(opts.Session, opts.Tools)
	if err != nil {
		rep.Status, rep.Reason = StatusRefused, err.Error()
		return rep, err
	}
	rep.ToolSpecChanges = changed
	rep.Notes = mcpNotes(opts.Session, opts.MCPServers)
	rt, err := newRoute(opts.Session, traj, opts.Override, opts.Providers)
	if err != nil {
		return rep, err
	}
	rep.Provider, rep.Model = rt.targets[0].Provider, rt.targets[0].Model
	rep.CostUSD = new(float64)
	if rt.mixed() {
		rep.Attaches = rt.attaches
	}
	rep.Steered = traj.Steered
	rep.CallsExpected = len(traj.Calls())
	rep.Recorded = recordedSteps(traj)
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	attachOf, err := rep.compareRequests(opts, traj, rt)
	if err != nil {
		return rep, err
	}
	d := &dispatcher{mode: opts.Mode, log: log}
	capture := &capturing{next: opts.Recorder}
	base := 0
	for i, turn := range traj.Turns {
		rc, reg, tracker, err := opts.request(turn.Config, rt.targets[i])
		if err != nil {
			return rep, err
		}
		trustPrompts(tracker, rc, traj.Turns[:i+1])
		rc.At = now(opts.Now)
		if err := capture.Append(&rc); err != nil {
			return rep, err
		}
		d.beginTurn(i+1, base, turn.Calls, tracker, reg)
		base += len(turn.Calls)
		prior := &session.Session{Records: capture.records}
		res, err := agent.Run(ctx, agent.Options{
			Provider: rt.clients[i], Tools: reg, Tracker: tracker, Config: rc, Recorder: capture,
			Prices: opts.Prices, Now: opts.Now, Log: log, Dispatcher: d,
			History: startHistory(prior, rc), Attach: turn.Images,
		}, turn.Prompt)
		if res != nil {
			rep.Turns += res.Turns
			rep.Usage = rep.Usage.Add(res.Usage)
			rep.addCost(opts.Prices, rt.targets[i], res.Usage)
		}
		if err != nil {
			rep.finish(d, attachOf)
			return rep, err
		}
		if res.StopReason == StopDiverged || d.endTurn() && opts.Mode != ModeLive {
			break
		}
	}
	rep.finish(d, attachOf)
	return rep, nil
}

// trustPrompts gives a turn's interlock the hosts its trusted text names,
// as the run's was given them: the system prompt it is replayed with, and
// the prompts of the turns so far as typed (before any file an @mention
// inlined). Hosts the replayed calls reach before untrusted content comes
// in the tracker learns as they are made.
func trustPrompts(tr *tool.Tracker, rc transcript.Config, turns []Turn) {
	if tr == nil {
		return
	}
	if rc.SystemPrompt != nil {
		tr.TrustText(*rc.SystemPrompt)
	}
	for _, t := range turns {
		tr.TrustText(transcript.Typed(t.Prompt))
	}
}

// request is the configuration a turn recorded under rec is replayed
// with, sent to t, and the tools it is offered: the recorded one with
// today's tool specs and MCP servers, and what the options replace.
func (o *Options) request(rec *transcript.Config, t Target) (transcript.Config, *tool.Registry, *tool.Tracker, error) {
	rc := *rec
	rc.Provider, rc.Model = t.Provider, t.Model
	if o.MechaVersion != "" {
		rc.MechaVersion = o.MechaVersion
	}
	if o.PermissionMode != "" {
		rc.PermissionMode = o.PermissionMode
	}
	if o.SystemPrompt != nil {
		rc.SystemPrompt = o.SystemPrompt
	}
	if o.Sent != nil {
		o.Sent(&rc)
	}
	reg, tracker, err := o.Tools(rc)
	if err != nil {
		return rc, nil, nil, err
	}
	rc.ToolSpecs = reg.TranscriptSpecs() // what this replay's model is offered
	rc.MCPServers = nil
	if o.MCPServers != nil {
		rc.MCPServers = o.MCPServers(reg.Names())
	}
	return rc, reg, tracker, nil
}

// compareRequests sets the report's request changes and fingerprints,
// attach by attach, before any turn is sent, and returns the attach (from
// 1) of each turn.
func (r *Report) compareRequests(opts Options, traj *Trajectory, rt *route) ([]int, error) {
	index := map[*transcript.Config]int{}
	for i, c := range opts.Session.Configs() {
		index[c] = i + 1
	}
	r.RequestChanges, r.RequestFingerprints = []RequestChange{}, []RequestFingerprint{}
	attachOf := make([]int, len(traj.Turns))
	for i, turn := range traj.Turns {
		n := index[turn.Config]
		attachOf[i] = n
		if i > 0 && attachOf[i-1] == n {
			continue
		}
		rc, _, _, err := opts.request(turn.Config, rt.targets[i])
		if err != nil {
			return nil, err
		}
		changes, fp := requestChanges(n, turn.Config, &rc)
		r.RequestChanges = append(r.RequestChanges, changes...)
		r.RequestFingerprints = append(r.RequestFingerprints, fp)
	}
	return attachOf, nil
}

// recordedSteps lists a trajectory's calls with their turns.
func recordedSteps(traj *Trajectory) []Step {
	steps := []Step{}
	for i, turn := range traj.Turns {
		for _, c := range turn.Calls {
			steps = append(steps, Step{Turn: i + 1, Index: len(steps), Name: c.Name, Input: c.Input})
		}
	}
	return steps
}

// addCost adds what a turn's usage cost on its target; an unpriced
// target leaves the replay without a cost.
func (r *Report) addCost(prices pricing.Table, t Target, u transcript.Usage) {
	if r.CostUSD == nil {
		return
	}
	if c, ok := prices.Cost(t.Provider, t.Model, u); ok {
		*r.CostUSD += c
	} else if u != (transcript.Usage{}) {
		r.CostUSD = nil
	}
}

// finish completes the report from the dispatcher's record, each
// divergence with the request changes of its attach that may explain it.
func (r *Report) finish(d *dispatcher, attachOf []int) {
	r.Divergences = d.sorted()
	for i := range r.Divergences {
		if t := r.Divergences[i].Turn; t >= 1 && t <= len(attachOf) {
			r.Divergences[i].Attach = attachOf[t-1]
			r.Divergences[i].After = explain(r.Divergences[i], r.RequestChanges, attachOf[t-1])
		}
	}
	r.Replayed = append([]Step{}, d.made...)
	r.CallsReplayed = d.replayed
	r.CallsRun = d.ran
	r.Status = StatusClean
	if len(r.Divergences) > 0 {
		r.Status = StatusDiverged
	}
}

// capturing keeps the replay's records in memory, to rebuild its context
// between turns, and passes them on to the real recorder.
type capturing struct {
	next    agent.Recorder
	records []transcript.Record
}

func (c *capturing) Append(recs ...transcript.Record) error {
	if c.next != nil {
		if err := c.next.Append(recs...); err != nil {
			return err
		}
	}
	c.records = append(c.records, recs...)
	return nil
}

func (c *capturing) Sync() error {
	if c.next != nil {
		return c.next.Sync()
	}
	return nil
}

func now(f func() time.Time) time.Time {
	if f != nil {
		return f().UTC()
	}
	return time.Now().UTC()
}
