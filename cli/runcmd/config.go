package runcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"

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

// maxInstructions bounds AGENTS.md and CLAUDE.md.
const maxInstructions = 256 << 10

// instructionFiles are the files project instructions are read from, the
// first that exists: AGENTS.md, the convention shared by most harnesses,
// then Claude Code's CLAUDE.md.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// learnedRulesHeading introduces $MECHA_HOME/learned_rules.md in the prompt.
const learnedRulesHeading = "\n\nRules learned from earlier sessions:\n"

// buildRunConfig resolves the configuration of this attach: the flags, over
// the session's last configuration when resuming, over the defaults. A
// resumed session inherits every setting not given on the command line,
// except the permission mode and the trifecta policy, which are always the
// ones asked for now. Its system prompt, project instructions included as
// they were read then, is kept unless a flag that shapes it is given.
func buildRunConfig(opts *Options, cfg *config.Config, prev *session.Session) (transcript.Config, error) {
	rc := inherited(prev)
	rc.MechaVersion = cmdkit.Version()
	resolveModel(opts, cfg, prev, &rc)
	if err := resolveWorkspace(opts, prev, &rc); err != nil {
		return rc, err
	}
	if prev == nil || opts.given("system-prompt-file") || opts.given("no-learned-rules") || opts.given("workspace") ||
		opts.given("no-project-instructions") {
		p, err := systemPrompt(opts, rc.Workspace)
		if err != nil {
			return rc, err
		}
		rc.SystemPrompt = &p
	}
	applySampling(opts, prev, &rc)
	applyBudgets(opts, prev, &rc)
	// Permission is never inherited: a resumed session runs under the
	// scrutiny asked for now.
	mode, _ := cmdkit.PermissionMode(opts.Yes, opts.ReadOnly)
	if mode == "" {
		mode = tool.ModeAsk
	}
	rc.PermissionMode = string(mode)
	if opts.given("tool") || prev == nil {
		rc.Tools = opts.Tools
	}
	// Neither is the trifecta policy: a session once run with --trifecta off
	// is not left without the interlock when resumed without the flag.
	rc.Trifecta = string(tool.TrifectaRefuse)
	if opts.Trifecta != "" {
		rc.Trifecta = opts.Trifecta
	}
	applySandbox(opts, prev, &rc)
	return rc, nil
}

// applySandbox sets what confines the shell: the flags, over what the
// resumed session enforced, then lowered to what this kernel enforces
// (saying so in one line), so that the record never claims more. A mode
// given anew takes --sandbox-network's value with it: "network on" under
// an unconfined shell was no choice of the person's.
func applySandbox(opts *Options, prev *session.Session, rc *transcript.Config) {
	if opts.set(prev, "sandbox") || rc.Sandbox == "" {
		if rc.Sandbox != opts.Sandbox.Mode {
			rc.SandboxNetwork = opts.Sandbox.Network
		}
		rc.Sandbox = opts.Sandbox.Mode
	}
	if opts.set(prev, "sandbox-network") {
		rc.SandboxNetwork = opts.Sandbox.Network
	}
	got, note := opts.Env.Sandbox(rc.Sandbox, rc.SandboxNetwork)
	if note != "" && opts.Env.Err != nil {
		fmt.Fprintln(opts.Env.Err, "mecha: "+note)
	}
	rc.Sandbox, rc.SandboxNetwork = got.Mode, got.Network
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
	return transcript.Config{Provider: m.Provider, Model: m.Model, Workspace: m.Workspace, MaxTurns: defaultMaxTurns,
		MaxTokens: defaultMaxTokens, CompactKeepRecent: defaultCompactKeepRecent, CachePrompt: true}
}

// set reports whether a flag's value applies: always on a new session, and
// on a resumed one only when given.
func (o *Options) set(prev *session.Session, name string) bool { return prev == nil || o.given(name) }

// resolveModel picks the provider (-p, else config.toml's default_provider)
// and the model. Another provider's model would name one this one does
// not serve, so a change of provider drops the inherited model.
func resolveModel(opts *Options, cfg *config.Config, prev *session.Session, rc *transcript.Config) {
	want := opts.Provider
	if !opts.given("provider") && cfg.DefaultProvider != "" {
		want = cfg.DefaultProvider
	}
	if opts.set(prev, "provider") && rc.Provider != want {
		rc.Provider = want
		rc.Model = ""
	}
	if opts.given("model") {
		rc.Model = opts.Model
	}
	if rc.Model == "" {
		rc.Model = cmdkit.DefaultModel(cfg, rc.Provider)
	}
}

func resolveWorkspace(opts *Options, prev *session.Session, rc *transcript.Config) error {
	if !opts.set(prev, "workspace") {
		if _, err := cmdkit.WorkspaceDir(rc.Workspace); err != nil {
			return fmt.Errorf("the session's workspace is gone (give another with -w): %w", err)
		}
		return nil
	}
	ws, err := cmdkit.WorkspaceDir(opts.Workspace)
	if err != nil {
		return err
	}
	rc.Workspace = ws
	return nil
}

// applySampling sets what shapes a response: effort, temperature, seed,
// thinking and prompt caching.
func applySampling(opts *Options, prev *session.Session, rc *transcript.Config) {
	if opts.set(prev, "effort") {
		rc.Effort = nil
		if opts.Effort != "" {
			rc.Effort = &opts.Effort
		}
	}
	if opts.given("temperature") {
		rc.Temperature = &opts.Temperature
	} else if prev == nil {
		rc.Temperature = nil
	}
	if opts.given("seed") {
		rc.Seed = &opts.Seed
	}
	if opts.set(prev, "thinking") {
		rc.Thinking = opts.Thinking
	}
	if opts.set(prev, "no-cache-prompt") {
		rc.CachePrompt = !opts.NoCachePrompt
	}
}

// applyBudgets sets the run's limits and compaction.
func applyBudgets(opts *Options, prev *session.Session, rc *transcript.Config) {
	if opts.set(prev, "max-turns") {
		rc.MaxTurns = opts.MaxTurns
	}
	if opts.set(prev, "max-tokens") {
		rc.MaxTokens = opts.MaxTokens
	}
	if opts.given("max-output-tokens") {
		rc.MaxOutputTokens = &opts.MaxOutputTokens
	}
	if opts.given("max-cost-usd") {
		rc.MaxCostUSD = &opts.MaxCostUSD
	}
	if opts.given("compact-at-tokens") {
		rc.CompactAtTokens = &opts.CompactAtTokens
	}
	if opts.set(prev, "compact-keep-recent") {
		rc.CompactKeepRecent = opts.CompactKeepRecent
	}
}

// systemPrompt resolves the system prompt's text.
func systemPrompt(opts *Options, workspace string) (string, error) {
	text := fmt.Sprintf(defaultSystemPrompt, workspace)
	if opts.SystemPromptFile != "" {
		b, err := safeopen.ReadFile(opts.SystemPromptFile, maxPromptFile)
		if err != nil {
			return "", fmt.Errorf("--system-prompt-file: %w", err)
		}
		text = string(b)
	}
	if !opts.NoProjectInstructions {
		name, instr, err := projectInstructions(workspace)
		if err != nil {
			return "", err
		}
		if instr != "" {
			text += fmt.Sprintf(projectHeading, name) + instr
		}
	}
	if opts.NoLearnedRules {
		return text, nil
	}
	home, err := opts.Env.Home()
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
