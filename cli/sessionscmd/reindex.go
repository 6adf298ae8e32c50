package sessionscmd

import (
	"fmt"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/sessionindex"
	"github.com/spf13/cobra"
)

// ReindexOptions are the options of "sessions reindex".
type ReindexOptions struct {
	Env *cmdkit.Env
}

// NewCmdReindex builds "mecha sessions reindex".
func NewCmdReindex(env *cmdkit.Env, runF func(*ReindexOptions) error) *cobra.Command {
	opts := &ReindexOptions{Env: env}
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the index of the session store from the transcripts",
		Long: `Rebuild the store's index (.index/ in the store's directory) from the
transcripts. The index is a cache: listings, stats, search, -c and completion
read it, and every one of them first brings it in step with the files (a file
that grew is read from where indexing stopped). A missing, corrupt or
foreign-version index is rebuilt on its own; this command does it on demand.
Deleting the index loses nothing.`,
		Example: `  mecha sessions reindex
  MECHA_SESSION_DIR=/srv/team-sessions mecha sessions reindex`,
		Args: cmdkit.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return reindexRun(opts)
		},
	}
}

func reindexRun(opts *ReindexOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	n, err := sessionindex.For(store.Dir, nil).Reindex()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Env.Out, "indexed %s in %s\n", sessionCount(n), store.Dir)
	return nil
}
