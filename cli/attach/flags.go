package attach

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness"
)

// Flags adds every flag that shapes an attach to cmd, bound to s (which
// should hold harness.DefaultSettings). run and chat both call it, so the
// two take the same flags with the same meaning and help.
func Flags(cmd *cobra.Command, s *harness.Settings) {
	ModelFlags(cmd, s)
	f := cmd.Flags()
	f.StringVarP(&s.Workspace, "workspace", "w", s.Workspace, "the directory the tools work in (default: the current directory)")
	f.StringArrayVar(&s.Tools, "tool", nil, "offer only this tool (repeatable; mcp__SERVER for all of a server's tools; agent for subagents; default: every built-in and MCP tool)")
	MCPFlags(cmd, &s.MCP)
	f.StringVar(&s.SystemPromptFile, "system-prompt-file", "", "use the text of `FILE` as the system prompt")
	f.BoolVar(&s.NoLearnedRules, "no-learned-rules", false, "do not append $MECHA_HOME/learned_rules.md to the system prompt")
	f.BoolVar(&s.NoProjectInstructions, "no-project-instructions", false, "do not add the workspace's AGENTS.md (or CLAUDE.md) to the system prompt")
	PermissionFlags(cmd, &s.Yes, &s.ReadOnly)
	TrifectaFlag(cmd, &s.Trifecta)
	f.IntVar(&s.MaxTurns, "max-turns", harness.DefaultMaxTurns, "stop after this many model calls")
	f.IntVar(&s.MaxTokens, "max-tokens", harness.DefaultMaxTokens, "the most tokens one response may have")
	f.Uint64Var(&s.MaxOutputTokens, "max-output-tokens", 0, "stop once the run has produced this many output tokens")
	f.Float64Var(&s.MaxCostUSD, "max-cost-usd", 0, "stop once the run has cost this much (needs a price: mecha's table or config.toml)")
	f.Uint64Var(&s.CompactAtTokens, "compact-at-tokens", 0, "summarise older messages once the context passes this many tokens")
	f.IntVar(&s.CompactKeepRecent, "compact-keep-recent", harness.DefaultCompactKeepRecent, "messages compaction keeps as they are")
	f.StringVar(&s.Effort, "effort", "", "reasoning effort: low, medium or high")
	f.BoolVar(&s.Thinking, "thinking", false, "ask for extended thinking (anthropic)")
	f.BoolVar(&s.NoCachePrompt, "no-cache-prompt", false, "do not ask the server to cache the prompt prefix")
	f.Float64Var(&s.Temperature, "temperature", 0, "sampling temperature (default: the server's)")
	f.Uint64Var(&s.Seed, "seed", 0, "sampling seed (default: none)")
	SandboxFlags(cmd, &s.Sandbox)
	RequestTimeoutFlag(cmd, &s.RequestTimeout)
}

// ModelFlags adds -p, -m and --mock-script: which model an attach runs on.
func ModelFlags(cmd *cobra.Command, s *harness.Settings) {
	modelFlags(cmd, s, "mock", "model provider: anthropic, openai, local or mock (default: config.toml's default_provider, else mock)",
		"model (default: config.toml's [providers.NAME] model, else the provider's own)")
}

// ReplayModelFlags adds the same flags to a command that re-drives
// recorded attaches (replay, regress), where they replace the recorded
// provider and model: unset, each turn goes to the provider and model of
// the attach that recorded it.
func ReplayModelFlags(cmd *cobra.Command, s *harness.Settings) {
	modelFlags(cmd, s, "", "replay against this provider (default: the recorded one)",
		"replay against this model (default: the recorded one, or -p's default)")
}

// ReplayPromptFlag adds --system-prompt-file to a command that re-drives
// recorded attaches: a prompt tried against the recording.
func ReplayPromptFlag(cmd *cobra.Command, s *harness.Settings) {
	cmd.Flags().StringVar(&s.SystemPromptFile, "system-prompt-file", "", "replay with the text of `FILE` as every attach's system prompt instead of the recorded one")
}

// CompareModelFlags adds regress's -p and --mock-script, and its -m,
// which may be repeated, with --models A,B beside it: the models a suite
// is compared across (none: the recorded ones; one: as replay's -m).
func CompareModelFlags(cmd *cobra.Command, s *harness.Settings, models, list *[]string) {
	f := cmd.Flags()
	f.StringVarP(&s.Provider, "provider", "p", "", "replay against this provider (default: the recorded one)")
	f.StringArrayVarP(models, "model", "m", nil, "replay against this model (default: the recorded one, or -p's default); repeat it to compare models side by side")
	f.StringSliceVar(list, "models", nil, "replay against each of these comma-separated `MODELS` and compare them side by side")
	f.StringVar(&s.MockScript, "mock-script", "", "with -p mock, play this JSON `FILE` of turns")
}

func modelFlags(cmd *cobra.Command, s *harness.Settings, provider, providerHelp, modelHelp string) {
	f := cmd.Flags()
	f.StringVarP(&s.Provider, "provider", "p", provider, providerHelp)
	f.StringVarP(&s.Model, "model", "m", "", modelHelp)
	f.StringVar(&s.MockScript, "mock-script", "", "with -p mock, play this JSON `FILE` of turns")
}

// MCPFlags adds --mcp-config and --no-mcp.
func MCPFlags(cmd *cobra.Command, m *harness.MCP) {
	cmd.Flags().StringArrayVar(&m.Files, "mcp-config", nil, "also use the MCP servers of this .mcp.json `FILE` (repeatable)")
	cmd.Flags().BoolVar(&m.Off, "no-mcp", false, "offer no tools from MCP servers (start none)")
}

// PermissionFlags adds --yes and --read-only: the permission mode of the
// tools a command runs (neither: ask), in a run and in the commands that
// run tools outside one (tool call, rerun, mcp serve).
func PermissionFlags(cmd *cobra.Command, yes, readOnly *bool) {
	cmd.Flags().BoolVar(yes, "yes", false, "allow every tool call without asking")
	cmd.Flags().BoolVar(readOnly, "read-only", false, "refuse every call that modifies the workspace or runs a command")
}

// TrifectaFlag adds --trifecta: what the interlock does with a call that
// could send data out of a conversation holding private data and
// untrusted content, and with a call that acts outward in a conversation
// holding untrusted content (run, chat, rerun).
func TrifectaFlag(cmd *cobra.Command, policy *string) {
	cmd.Flags().StringVar(policy, "trifecta", string(tool.TrifectaRefuse), "once private data and untrusted content are both in the conversation, calls that could send data out (and, once untrusted content is, calls that act outward: pay, post, invite) are: refuse, ask or off")
}

// SandboxFlags adds --sandbox and --sandbox-network: what confines the
// shell, in a run and in the commands that run tools outside one (tool
// call, rerun, mcp serve), confined there by default as in a run.
func SandboxFlags(cmd *cobra.Command, s *harness.Sandbox) {
	cmd.Flags().StringVar(&s.Mode, "sandbox", sandbox.ModeLandlock, "confine the shell tool: landlock (write only in the workspace and a private TMPDIR; where the kernel has it) or none")
	cmd.Flags().BoolVar(&s.Network, "sandbox-network", false, "let the sandboxed shell reach the network (it is cut by default)")
	cmd.Flags().StringArrayVar(&s.AllowDomains, "allow-domain", nil, "let the sandboxed shell reach HOST (repeatable; *.HOST: its subdomains) through mecha's HTTP proxy (HTTP_PROXY, HTTPS_PROXY), the network otherwise cut; with [sandbox] allow_domains")
}
