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
		Short: "List, show, search, view, export, price, remove, push, pull and share recorded sessions",
		Long: `Read the session store. A session is named by its full id
(20260805T091500-3f2a1b7c), a unique prefix of it (such as 20260805T091500),
the path of a .jsonl transcript, or "last" for the newest session of any
kind (a replay, a rerun or an MCP proxy's session included; "mecha run -c"
picks the newest run of the workspace instead). A prefix that matches
several sessions is refused with a list of them.

The store is $MECHA_SESSION_DIR, else $MECHA_HOME/sessions, else
~/.mecha/sessions: a directory created owner-only, one file per session
named by its id, each mode 0600. A transcript is a header line and then
one JSON record per line, each appended in one write under a lock; a
process killed mid-write leaves at worst a torn last line, which readers
skip and report. A header is at most 64 KiB and any other line at most 64
MiB (a longer one is skipped and reported); a file in the store that is
not a regular file is passed over with a note naming it. The format is
specified in record/transcript/doc.go of mecha's source.

Beside the transcripts the store keeps an index (.index/ in its directory):
a cache that listings, stats, search, -c and completion read, checked against
the files by each of them and brought in step with what changed. Deleting it
loses nothing; "mecha sessions reindex" rebuilds it.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(env, nil), NewCmdShow(env, nil), NewCmdPath(env, nil), NewCmdStats(env, nil),
		NewCmdSearch(env, nil), NewCmdRm(env, nil), NewCmdPrune(env, nil), NewCmdView(env, nil), NewCmdExport(env, nil),
		NewCmdReindex(env, nil), NewCmdPush(env, nil), NewCmdPull(env, nil), NewCmdShare(env, nil))
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
	ref, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, ref.Path())
	return nil
}
