package root

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/internal/cmd/chat"
	"github.com/mecha-agent/mecha/internal/cmd/configcmd"
	"github.com/mecha-agent/mecha/internal/cmd/doctor"
	"github.com/mecha-agent/mecha/internal/cmd/importcmd"
	"github.com/mecha-agent/mecha/internal/cmd/learn"
	"github.com/mecha-agent/mecha/internal/cmd/mcp"
	"github.com/mecha-agent/mecha/internal/cmd/reflect"
	"github.com/mecha-agent/mecha/internal/cmd/regress"
	"github.com/mecha-agent/mecha/internal/cmd/replay"
	"github.com/mecha-agent/mecha/internal/cmd/rerun"
	"github.com/mecha-agent/mecha/internal/cmd/run"
	"github.com/mecha-agent/mecha/internal/cmd/script"
	"github.com/mecha-agent/mecha/internal/cmd/sessions"
	"github.com/mecha-agent/mecha/internal/cmd/tool"
	"github.com/mecha-agent/mecha/internal/cmdutil"
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
       tool call, an error result, and for rerun, any result that differs
  2    bad usage: unknown command or flag, wrong arguments, an invalid session id
  3    a run stopped by a budget (--max-turns, --max-output-tokens, --max-cost-usd)
  130  interrupted`

// NewCmdRoot builds the mecha command tree.
func NewCmdRoot(env *cmdutil.Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "mecha",
		Short:         "An agent harness whose every run is a reproducible record",
		Long:          rootLong,
		Version:       cmdutil.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cmdutil.NoArgs,
		// Alone on a terminal, mecha opens the interactive mode.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env.InTTY && env.OutTTY {
				return chat.Interactive(cmd.Context(), env)
			}
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(cmdutil.FlagError)
	root.AddCommand(chat.NewCmdChat(env, nil), run.NewCmdRun(env, nil), replay.NewCmdReplay(env, nil), regress.NewCmdRegress(env, nil), sessions.NewCmdSessions(env),
		tool.NewCmdTool(env), script.NewCmdScript(env, nil), rerun.NewCmdRerun(env, nil), mcp.NewCmdMCP(env),
		importcmd.NewCmdImport(env, nil), reflect.NewCmdReflect(env, nil),
		learn.NewCmdDistill(env, nil), learn.NewCmdLearn(env, nil), configcmd.NewCmdConfig(env), doctor.NewCmdDoctor(env, nil))
	addCompletion(root, env)
	return root
}
