package cli

import "github.com/spf13/cobra"

const rootLong = `mecha runs a model through a loop of tool calls in a workspace and records
every run as an append-only JSONL transcript, which it can list, show, price,
resume and replay.

Sessions are stored in $MECHA_SESSION_DIR, else $MECHA_HOME/sessions, else
~/.mecha/sessions. Settings and prices are read from $MECHA_HOME/config.toml
(default ~/.mecha/config.toml).

Exit status:
  0    success
  1    failure (a command that could not do its job; the message says why),
       and for replay --on-divergence=error and regress, any divergence
  2    bad usage: unknown command or flag, wrong arguments, an invalid session id
  3    a run stopped by a budget (--max-turns, --max-output-tokens, --max-cost-usd)
  130  interrupted`

// NewCmdRoot builds the mecha command tree.
func NewCmdRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "mecha",
		Short:         "An agent harness whose every run is a reproducible record",
		Long:          rootLong,
		Version:       Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.CompletionOptions.HiddenDefaultCmd = true
	root.AddCommand(NewCmdRun(env), NewCmdReplay(env), NewCmdRegress(env), NewCmdSessions(env))
	return root
}

// noArgs refuses arguments, naming an unknown subcommand when it looks like one.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return usagef("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
}

// exactArgs is cobra.ExactArgs with a usage error and a message naming what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}
