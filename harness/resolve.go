package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/internal/workdir"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// defaultSystemPrompt is the system prompt when none is given; %s is the
// workspace. The resolved text is what the config record stores.
const defaultSystemPrompt = `You are mecha, an agent working in the directory %s (the workspace) through the tools you are given. Paths are relative to the workspace. Look before you change anything, keep changes small, and do not guess at file contents you can read. When the task is done, stop calling tools and answer with the result in a few sentences.`

// maxPromptFile bounds the files the system prompt is read from
// (--system-prompt-file, learned_rules.md).
const maxPromptFile = 4 << 20

// projectHeading introduces the project instructions in the prompt; %s
// is the file they came from.
const projectHeading = "\n\nProject instructions, from %s at the root of the workspace:\n"

// projectMark is how a resolved prompt shows it holds project instructions.
const projectMark = "\n\nProject instructions, from "

// maxInstructions bounds AGENTS.md and CLAUDE.md.
const maxInstructions = 256 << 10

// instructionFiles are the files project instructions are read from, the
// first that exists: AGENTS.md, the convention shared by most harnesses,
// then Claude Code's CLAUDE.md.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// learnedRulesHeading introduces $MECHA_HOME/learned_rules.md in the prompt.
const learnedRulesHeading = "\n\nRules learned from earlier sessions:\n"

// Resolve resolves the configuration of an attach: the settings, over the
// resumed session's last configuration (prev; nil for a new session), over
// config.toml, over the defaults. A resumed session inherits every setting
// not given, except the permission mode and the trifecta policy, which are
// always the ones asked for now. Its system prompt, project instructions
// included as they were read then, is kept unless a setting that shapes it
// is given. The sandbox is lowered to what this kernel enforces, with a
// note on the World's Err.
func Resolve(w *World, s *Settings, cfg *config.Config, prev *session.Session) (transcript.Config, error) {
	rc := inherited(prev)
	// A flag the last attach's provider did not send was recorded as null:
	// the settings say it now (Door.Run records it as null again when this
	// provider does not send it either).
	rc.Nulls = slices.DeleteFunc(slices.Clone(rc.Nulls), func(n string) bool {
		switch n {
		case provider.SettingThinking:
			rc.Thinking = s.Thinking
		case provider.SettingCachePrompt:
			rc.CachePrompt = !s.NoCachePrompt
		default:
			return false
		}
		return true
	})
	rc.MechaVersion = w.Version
	resumed := prev != nil
	resolveModel(s, cfg, resumed, &rc)
	if err := resolveWorkspace(s, resumed, &rc); err != nil {
		return rc, err
	}
	var prevRC *transcript.Config
	if resumed {
		if cs := prev.Configs(); len(cs) > 0 {
			prevRC = cs[len(cs)-1]
		}
	}
	trust := WorkspaceTrust(cfg, rc.Workspace, recordedTrust(prevRC, rc.Workspace), s.TrustAsked)
	rc.WorkspaceTrust = &trust
	// A prompt inherited from an attach that read the project instructions
	// trusted (or before trust was recorded) is resolved again when the
	// workspace is not trusted now: they are left out.
	reprompt := resumed && !trust.Trusted && rc.SystemPrompt != nil &&
		strings.Contains(*rc.SystemPrompt, projectMark) && (prevRC == nil || prevRC.WorkspaceTrust == nil || prevRC.WorkspaceTrust.Trusted)
	if !resumed || reprompt || s.given("system-prompt-file") || s.given("no-learned-rules") || s.given("workspace") ||
		s.given("no-project-instructions") {
		p, err := systemPrompt(w, s, rc.Workspace, trust.Trusted)
		if err != nil {
			return rc, err
		}
		rc.SystemPrompt = &p
	}
	applySampling(s, resumed, &rc)
	applyBudgets(s, resumed, &rc)
	// Permission is never inherited: a resumed session runs under the
	// scrutiny asked for now.
	mode, _ := PermissionMode(s.Yes, s.ReadOnly)
	if mode == "" {
		mode = tool.ModeAsk
	}
	rc.PermissionMode = string(mode)
	if s.given("tool") || !resumed {
		rc.Tools = s.Tools
	}
	// Neither is the trifecta policy: a session once run with --trifecta off
	// is not left without the interlock when resumed without the flag.
	rc.Trifecta = string(tool.TrifectaRefuse)
	if s.Trifecta != "" {
		rc.Trifecta = s.Trifecta
	}
	applySandbox(w, s, resumed, &rc)
	return rc, nil
}

// applySandbox sets what confines the shell: the flags, over what the
// resumed session enforced, then lowered to what this kernel enforces
// (saying so in one line), so that the record never claims more. A mode
// given anew takes --sandbox-network's value with it: "network on" under
// an unconfined shell was no choice of the person's.
func applySandbox(w *World, s *Settings, resumed bool, rc *transcript.Config) {
	if s.set(resumed, "sandbox") || rc.Sandbox == "" {
		if rc.Sandbox != s.Sandbox.Mode {
			rc.SandboxNetwork = s.Sandbox.Network
		}
		rc.Sandbox = s.Sandbox.Mode
	}
	if s.set(resumed, "sandbox-network") {
		rc.SandboxNetwork = s.Sandbox.Network
	}
	if s.set(resumed, "allow-domain") {
		rc.SandboxAllowDomains = s.Sandbox.AllowDomains
	}
	lowerSandbox(w, rc)
}

// inherited is the configuration a run starts from: the resumed session's
// last config record, what its header says when it has none, or nothing.
func inherited(prev *session.Session) transcript.Config {
	if prev == nil {
		return transcript.Config{}
	}
	if cs := prev.Configs(); len(cs) > 0 {
		rc := *cs[len(cs)-1]
		rc.At = rc.At.UTC()
		return rc
	}
	m := prev.Meta
	return transcript.Config{Provider: m.Provider, Model: m.Model, Workspace: m.Workspace, MaxTurns: DefaultMaxTurns,
		MaxTokens: DefaultMaxTokens, CompactKeepRecent: DefaultCompactKeepRecent, CachePrompt: true}
}

// resolveModel picks the provider (-p, else config.toml's default_provider)
// and the model. Another provider's model would name one this one does
// not serve, so a change of provider drops the inherited model.
func resolveModel(s *Settings, cfg *config.Config, resumed bool, rc *transcript.Config) {
	want := s.Provider
	if !s.given("provider") && cfg.DefaultProvider != "" {
		want = cfg.DefaultProvider
	}
	if s.set(resumed, "provider") && rc.Provider != want {
		rc.Provider = want
		rc.Model = ""
	}
	if s.given("model") {
		rc.Model = s.Model
	}
	if rc.Model == "" {
		rc.Model = DefaultModel(cfg, rc.Provider)
	}
}

func resolveWorkspace(s *Settings, resumed bool, rc *transcript.Config) error {
	if !s.set(resumed, "workspace") {
		if _, err := workdir.Dir(rc.Workspace); err != nil {
			return fmt.Errorf("the session's workspace is gone (give another with -w): %w", err)
		}
		return nil
	}
	ws, err := workdir.Dir(s.Workspace)
	if err != nil {
		return err
	}
	rc.Workspace = ws
	return nil
}

// applySampling sets what shapes a response: effort, temperature, seed,
// thinking and prompt caching.
func applySampling(s *Settings, resumed bool, rc *transcript.Config) {
	if s.set(resumed, "effort") {
		rc.Effort = nil
		if s.Effort != "" {
			rc.Effort = &s.Effort
		}
	}
	if s.given("temperature") {
		rc.Temperature = &s.Temperature
	} else if !resumed {
		rc.Temperature = nil
	}
	if s.given("seed") {
		rc.Seed = &s.Seed
	}
	if s.set(resumed, "thinking") {
		rc.Thinking = s.Thinking
	}
	if s.set(resumed, "no-cache-prompt") {
		rc.CachePrompt = !s.NoCachePrompt
	}
}

// applyBudgets sets the run's limits and compaction.
func applyBudgets(s *Settings, resumed bool, rc *transcript.Config) {
	if s.set(resumed, "max-turns") {
		rc.MaxTurns = s.MaxTurns
	}
	if s.set(resumed, "max-tokens") {
		rc.MaxTokens = s.MaxTokens
	}
	if s.given("max-output-tokens") {
		rc.MaxOutputTokens = &s.MaxOutputTokens
	}
	if s.given("max-cost-usd") {
		rc.MaxCostUSD = &s.MaxCostUSD
	}
	if s.given("compact-at-tokens") {
		rc.CompactAtTokens = &s.CompactAtTokens
	}
	if s.set(resumed, "compact-keep-recent") {
		rc.CompactKeepRecent = s.CompactKeepRecent
	}
}

// systemPrompt resolves the system prompt's text.
// The project instructions are read only from a trusted workspace; an
// untrusted one's are left out, with a note saying so.
func systemPrompt(w *World, s *Settings, workspace string, trusted bool) (string, error) {
	text := fmt.Sprintf(defaultSystemPrompt, workspace)
	if s.SystemPromptFile != "" {
		b, err := safeopen.ReadFile(s.SystemPromptFile, maxPromptFile)
		if err != nil {
			return "", fmt.Errorf("--system-prompt-file: %w", err)
		}
		text = string(b)
	}
	switch {
	case s.NoProjectInstructions:
	case !trusted:
		// Not even read: the note names the file that would have been.
		if name := instructionsPresent(workspace); name != "" {
			fmt.Fprintln(w.errw(), untrustedNote(workspace, name))
		}
	default:
		name, instr, err := projectInstructions(workspace)
		if err != nil {
			return "", err
		}
		if instr != "" {
			text += fmt.Sprintf(projectHeading, name) + instr
		}
	}
	if s.NoLearnedRules {
		return text, nil
	}
	home, err := w.Home()
	if err != nil {
		return "", err
	}
	rules, err := safeopen.ReadFile(filepath.Join(home, "learned_rules.md"), maxPromptFile)
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

// instructionsPresent is the name of the workspace's project instructions
// file, "" when it has none (nothing is read).
func instructionsPresent(workspace string) string {
	for _, name := range instructionFiles {
		if _, err := os.Lstat(filepath.Join(workspace, name)); err == nil {
			return name
		}
	}
	return ""
}

// projectInstructions returns the name and the text (trimmed) of the
// workspace's project instructions, "" for both when there are none. The
// file is opened inside the workspace's os.Root: a symbolic link that
// leads out of the workspace (to ~/.ssh, /etc, another project) is refused
// with an error rather than read into a prompt that is recorded and sent
// to a provider. Not a regular file, or larger than 256 KiB: an error too.
func projectInstructions(workspace string) (string, string, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", "", fmt.Errorf("project instructions: %w", err)
	}
	defer root.Close()
	for _, name := range instructionFiles {
		b, err := safeopen.ReadFileIn(root, name, maxInstructions)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			if fi, lerr := root.Lstat(name); lerr == nil && fi.Mode()&os.ModeSymlink != 0 &&
				!errors.Is(err, safeopen.ErrNotRegular) && !errors.Is(err, safeopen.ErrTooLarge) {
				err = fmt.Errorf("%s is a link that leads out of the workspace (or loops): not read: %w", name, err)
			}
			return "", "", fmt.Errorf("project instructions: %w (--no-project-instructions runs without them)", err)
		}
		return name, strings.TrimSpace(string(b)), nil
	}
	return "", "", nil
}
