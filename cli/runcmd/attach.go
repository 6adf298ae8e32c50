package runcmd

import (
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// What "mecha chat" shares with "mecha run": each prompt of a chat is an
// attach resolved and recorded exactly as a run's is.

// NewOptions returns the options of a run with the flags' defaults.
func NewOptions(env *cmdkit.Env) *Options {
	return &Options{Env: env, Provider: "mock", MaxTurns: defaultMaxTurns, MaxTokens: defaultMaxTokens,
		CompactKeepRecent: defaultCompactKeepRecent, Trifecta: string(tool.TrifectaRefuse),
		Sandbox: cmdkit.SandboxFlags{Mode: sandbox.ModeLandlock}}
}

// ResolveConfig resolves an attach's configuration over the session it
// resumes (nil for a new one), as "mecha run" does.
func ResolveConfig(opts *Options, cfg *config.Config, prev *session.Session) (transcript.Config, error) {
	return buildRunConfig(opts, cfg, prev)
}

// LearnedTaint is the history an attach continues from with the taint of
// its system prompt's learned rules merged in: a rule learned from private
// reflections starts the attach private, before any tool runs.
func LearnedTaint(h agent.History, rc transcript.Config) agent.History {
	return learnedTaint(h, rc)
}

// StartRecord opens prev (or creates a session titled from opts.Title,
// else opts.Task) and appends the attach's config record.
func StartRecord(opts *Options, rc *transcript.Config, prev *session.Session) (*session.Writer, error) {
	return startRecord(opts, rc, prev)
}
