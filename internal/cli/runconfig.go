package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/internal/config"
	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/tool"
	"github.com/mecha-agent/mecha/tool/builtin"
	"github.com/mecha-agent/mecha/transcript"
)

// defaultSystemPrompt is the system prompt when none is given; %s is the
// workspace. The resolved text is what the config record stores.
const defaultSystemPrompt = `You are mecha, an agent working in the directory %s (the workspace) through the tools you are given. Paths are relative to the workspace. Look before you change anything, keep changes small, and do not guess at file contents you can read. When the task is done, stop calling tools and answer with the result in a few sentences.`

// learnedRulesHeading introduces $MECHA_HOME/learned_rules.md in the prompt.
const learnedRulesHeading = "\n\nRules learned from earlier sessions:\n"

// buildRunConfig resolves the configuration of this attach: the flags, over
// the session's last configuration when resuming, over the defaults.
func buildRunConfig(opts *RunOptions, cfg *config.Config, prev *session.Session) (transcript.Config, error) {
	given := func(name string) bool { return opts.flags != nil && opts.flags.Changed(name) }
	set := func(name string) bool { return prev == nil || given(name) }
	var rc transcript.Config
	if prev != nil {
		if cs := prev.Configs(); len(cs) > 0 {
			rc = *cs[len(cs)-1]
			rc.At = rc.At.UTC()
		} else {
			m := prev.Meta
			rc = transcript.Config{Provider: m.Provider, Model: m.Model, Workspace: m.Workspace, MaxTurns: defaultMaxTurns,
				MaxTokens: defaultMaxTokens, CompactKeepRecent: defaultCompactKeepRecent, CachePrompt: true}
		}
	}
	rc.MechaVersion = Version()
	want := opts.Provider
	if !given("provider") && cfg.DefaultProvider != "" {
		want = cfg.DefaultProvider
	}
	if set("provider") && rc.Provider != want {
		rc.Provider = want
		rc.Model = "" // another provider's model would name one this one does not serve
	}
	if given("model") {
		rc.Model = opts.Model
	}
	if rc.Model == "" {
		rc.Model = defaultModel(cfg, rc.Provider)
	}
	if set("workspace") {
		ws, err := workspaceDir(opts.Workspace)
		if err != nil {
			return rc, err
		}
		rc.Workspace = ws
	} else if _, err := workspaceDir(rc.Workspace); err != nil {
		return rc, fmt.Errorf("the session's workspace is gone (give another with -w): %w", err)
	}
	if prev == nil || given("system-prompt-file") || given("no-learned-rules") || given("workspace") {
		p, err := systemPrompt(opts, rc.Workspace)
		if err != nil {
			return rc, err
		}
		rc.SystemPrompt = &p
	}
	if set("effort") {
		rc.Effort = nil
		if opts.Effort != "" {
			switch opts.Effort {
			case "low", "medium", "high":
			default:
				return rc, usagef("--effort must be low, medium or high, not %q", opts.Effort)
			}
			rc.Effort = &opts.Effort
		}
	}
	if given("temperature") {
		rc.Temperature = &opts.Temperature
	} else if prev == nil {
		rc.Temperature = nil
	}
	if given("seed") {
		rc.Seed = &opts.Seed
	}
	if set("thinking") {
		rc.Thinking = opts.Thinking
	}
	if set("no-cache-prompt") {
		rc.CachePrompt = !opts.NoCachePrompt
	}
	if set("max-turns") {
		if opts.MaxTurns < 1 {
			return rc, usagef("--max-turns must be at least 1")
		}
		rc.MaxTurns = opts.MaxTurns
	}
	if set("max-tokens") {
		if opts.MaxTokens < 1 {
			return rc, usagef("--max-tokens must be at least 1")
		}
		rc.MaxTokens = opts.MaxTokens
	}
	if given("max-output-tokens") {
		rc.MaxOutputTokens = &opts.MaxOutputTokens
	}
	if given("max-cost-usd") {
		if opts.MaxCostUSD <= 0 {
			return rc, usagef("--max-cost-usd must be more than 0")
		}
		rc.MaxCostUSD = &opts.MaxCostUSD
	}
	if given("compact-at-tokens") {
		rc.CompactAtTokens = &opts.CompactAtTokens
	}
	if set("compact-keep-recent") {
		if opts.CompactKeepRecent < 1 {
			return rc, usagef("--compact-keep-recent must be at least 1")
		}
		rc.CompactKeepRecent = opts.CompactKeepRecent
	}
	// Permission is never inherited: a resumed session runs under the
	// scrutiny asked for now.
	switch {
	case opts.Yes:
		rc.PermissionMode = string(tool.ModeYes)
	case opts.ReadOnly:
		rc.PermissionMode = string(tool.ModeReadOnly)
	default:
		rc.PermissionMode = string(tool.ModeAsk)
	}
	if given("tool") || prev == nil {
		rc.Tools = opts.Tools
	}
	rc.Trifecta = "off"
	rc.Sandbox = "none"
	rc.SandboxNetwork = true // nothing confines the shell tool
	return rc, nil
}

// systemPrompt resolves the system prompt's text.
func systemPrompt(opts *RunOptions, workspace string) (string, error) {
	text := fmt.Sprintf(defaultSystemPrompt, workspace)
	if opts.SystemPromptFile != "" {
		b, err := os.ReadFile(opts.SystemPromptFile)
		if err != nil {
			return "", fmt.Errorf("--system-prompt-file: %w", err)
		}
		text = string(b)
	}
	if opts.NoLearnedRules {
		return text, nil
	}
	home, err := config.Home(opts.Env.getenv)
	if err != nil {
		return "", err
	}
	rules, err := os.ReadFile(filepath.Join(home, "learned_rules.md"))
	if errors.Is(err, os.ErrNotExist) {
		return text, nil
	}
	if err != nil {
		return "", fmt.Errorf("learned rules: %w", err)
	}
	if r := strings.TrimSpace(string(rules)); r != "" {
		text += learnedRulesHeading + r
	}
	return text, nil
}

// toolSetup is what building the tool surface needs besides the config.
type toolSetup struct {
	// Only restricts the surface to these names, in registry order; empty
	// means rc.Tools when it is set, else every tool.
	Only []string
}

// buildTools builds the tools of a run: the built-ins confined to the
// workspace, each tracked for taint and gated by the permission mode.
func buildTools(env *Env, rc transcript.Config, setup toolSetup) (*tool.Registry, *tool.Tracker, error) {
	ws, err := builtin.NewWorkspace(rc.Workspace)
	if err != nil {
		return nil, nil, err
	}
	mode, err := tool.ParseMode(rc.PermissionMode)
	if err != nil {
		return nil, nil, err
	}
	var asker tool.Asker
	if env.InTTY {
		asker = tool.NewTerminalAsker(env.In, env.Err)
	}
	tracker := &tool.Tracker{}
	reg := &tool.Registry{}
	for _, t := range builtin.All(ws, builtin.Options{Env: scrubbedEnv(os.Environ())}) {
		if err := reg.Register(tool.Gate(tracker.Wrap(t), mode, asker)); err != nil {
			return nil, nil, err
		}
	}
	only := setup.Only
	if len(only) == 0 {
		only = rc.Tools
	}
	if len(only) > 0 {
		if reg, err = reg.Restrict(only); err != nil {
			return nil, nil, &usageError{err}
		}
	}
	return reg, tracker, nil
}

// scrubbedEnv is the environment of shell commands: mecha's own, less
// anything that looks like a credential, so a model that runs env cannot
// copy a key into the transcript.
func scrubbedEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(name)
		if strings.Contains(u, "API_KEY") || strings.Contains(u, "APIKEY") || strings.Contains(u, "SECRET") ||
			strings.Contains(u, "TOKEN") || strings.Contains(u, "PASSWORD") || strings.Contains(u, "CREDENTIAL") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
