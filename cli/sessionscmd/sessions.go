package sessionscmd

import (
	"fmt"

	"github.com/mecha-agent/mecha/cli/cmdkit"

	"github.com/spf13/cobra"
)

// NewCmdSessions builds "mecha sessions" and its subcommands.
func NewCmdSessions(env *cmdkit.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, search, view, export, price and remove recorded sessions",
		Long: `Read the session store. A session is named by its full id, a unique prefix of
it (such as 20260805T091500), the path of a .jsonl transcript, or "last" for
the newest session.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(env, nil), NewCmdShow(env, nil), NewCmdPath(env, nil), NewCmdStats(env, nil),
		NewCmdSearch(env, nil), NewCmdRm(env, nil), NewCmdPrune(env, nil), NewCmdView(env, nil), NewCmdExport(env, nil))
	return cmd
}

// PathOptions are the options of "sessions path".
type PathOptions struct {
	Env *cmdkit.Env
	ID  string
}

// NewCmdPath builds "mecha sessions path".
func NewCmdPath(env *cmdkit.Env, runF func(*PathOptions) error) *cobra.Command {
	opts := &PathOptions{Env: env}
	return &cobra.Command{
		Use:   "path ID",
		Short: "Print the path of a session's transcript",
		Args:  cmdkit.ExactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return pathRun(opts)
		},
	}
}

func pathRun(opts *PathOptions) error {
	p, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, p)
	return nil
}
