package root

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/chatcmd"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/configcmd"
	"github.com/mecha-agent/mecha/cli/doctorcmd"
	"github.com/mecha-agent/mecha/cli/importcmd"
	"github.com/mecha-agent/mecha/cli/learncmd"
	"github.com/mecha-agent/mecha/cli/mcpcmd"
	"github.com/mecha-agent/mecha/cli/reflectcmd"
	"github.com/mecha-agent/mecha/cli/regresscmd"
	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/cli/reruncmd"
	"github.com/mecha-agent/mecha/cli/rewindcmd"
	"github.com/mecha-agent/mecha/cli/runcmd"
	"github.com/mecha-agent/mecha/cli/scriptcmd"
	"github.com/mecha-agent/mecha/cli/sessionscmd"
	"github.com/mecha-agent/mecha/cli/toolcmd"
	"github.com/mecha-agent/mecha/cli/trustcmd"
	"github.com/mecha-agent/mecha/internal/buildinfo"
)

const rootLong = `mecha runs a model through a loop of tool calls in a workspace and records
every run as an append-only JSONL transcript, which it can list, show,
search, view as an HTML page, export (Markdown, HTML, JSON), price, resume,
replay against a model, and redo without one (tool call, script, rerun). It
also speaks MCP (its tools as a server, a recording proxy, servers' tools in
runs), imports Claude Code and Codex sessions, and learns rules from
reflections on its sessions (reflect, distill, learn), dropping every
reflection whose provenance is untrusted or unknown. "mecha doctor" says
what a setup lacks and how to fix it; "mecha config show" prints the
configuration in effect, secrets left out.

On a terminal, mecha alone opens the interactive mode (mecha chat); off
one, and with --help, it prints this.

Sessions are stored in $MECHA_SESSION_DIR, else $MECHA_HOME/sessions, else
~/.mecha/sessions. Settings and prices are read from $MECHA_HOME/config.toml
(default ~/.mecha/config.toml).

Exit status:
  0    success
  1    failure (a command that could not do its job; the message says why),
       for replay --on-divergence=error and regress, any divergence, for
       tool call, an error result, for rerun, any result that differs, and
       for run -c, no session to continue in the workspace
  2    bad usage: unknown command or flag, wrong arguments, an invalid session id
  3    a run stopped by a budget (--max-turns, --max-output-tokens, --max-cost-usd)
       or an answer cut at --max-tokens
  130  interrupted

A mistyped command, subcommand or flag is refused in one line naming the
nearest ones (exit status 2). "mecha completion bash|zsh|fish|powershell"
prints a shell completion script; it completes commands and flags, session
ids (newest first, with titles), providers, models, tool names and files.`

// NewCmdRoot builds the mecha command tree, with what each argument and
// flag completes with.
func NewCmdRoot(env *cmdkit.Env) *cobra.Command { return newCmdRoot(env, true) }

// newCmdRoot builds the tree; completions registers what its arguments and
// flags complete with, which only a completion request (cobra's hidden
// __complete command, see completing) reads: walking every flag of every
// command for it is about a tenth of a plain command's start.
func newCmdRoot(env *cmdkit.Env, completions bool) *cobra.Command {
	root := &cobra.Command{
		Use:           "mecha",
		Short:         "An agent harness whose every run is a reproducible record",
		Long:          rootLong,
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cmdkit.NoArgs,
		// Alone on a terminal, mecha opens the interactive mode.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env.InTTY && env.OutTTY {
				return chatcmd.Interactive(cmd.Context(), env)
			}
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(cmdkit.FlagError)
	root.AddCommand(chatcmd.NewCmdChat(env, nil), runcmd.NewCmdRun(env, nil), replaycmd.NewCmdReplay(env, nil), regresscmd.NewCmdRegress(env, nil), sessionscmd.NewCmdSessions(env),
		toolcmd.NewCmdTool(env), scriptcmd.NewCmdScript(env, nil), reruncmd.NewCmdRerun(env, nil), rewindcmd.NewCmdRewind(env, nil), mcpcmd.NewCmdMCP(env),
		importcmd.NewCmdImport(env, nil), reflectcmd.NewCmdReflect(env, nil),
		learncmd.NewCmdDistill(env, nil), learncmd.NewCmdLearn(env, nil), configcmd.NewCmdConfig(env), doctorcmd.NewCmdDoctor(env, nil), trustcmd.NewCmdTrust(env, nil))
	addCompletion(root, env, completions)
	return root
}
