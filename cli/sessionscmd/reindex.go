package sessionscmd

import (
	"errors"
	"fmt"

	"github.com/mecha-agent/mecha/cli/backfill"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/sessionindex"
	"github.com/spf13/cobra"
)

// ReindexOptions are the options of "sessions reindex".
type ReindexOptions struct {
	Env *cmdkit.Env
	// Background is the process a command starts when it finds a large
	// indexing to do (cmdkit's backfill): it brings the index in step,
	// keeping what is indexed, rather than rebuilding it.
	Background bool
}

// NewCmdReindex builds "mecha sessions reindex".
func NewCmdReindex(env *cmdkit.Env, runF func(*ReindexOptions) error) *cobra.Command {
	opts := &ReindexOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the index of the session store from the transcripts",
		Long: `Rebuild the store's index (.index/ in the store's directory) from the
transcripts. The index is a cache: listings, stats, search, -c and completion
read it, and every one of them first brings it in step with the files (a file
that grew is read from where indexing stopped). A missing, corrupt or
foreign-version index is rebuilt on its own; this command does it on demand.
Deleting the index loses nothing.

A command that finds a large indexing to do (a first indexing of thousands of
sessions or hundreds of megabytes: about a minute a gigabyte) starts it in the
background, at a low priority, and reads the transcripts until it ends; this
command does it here and now, and the first Ctrl-C stops it, keeping what was
indexed. After a background indexing failed (its output is in
.index/backfill.log), none is started for an hour: each command says why and
reads the transcripts, and this command, once it built the index, lifts the
delay. MECHA_INDEX_BACKGROUND=0 makes every command index in place, as this
one does (for a CI job that should leave no process behind).`,
		Example: `  mecha sessions reindex
  MECHA_SESSION_DIR=/srv/team-sessions mecha sessions reindex`,
		Args: cmdkit.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			if opts.Background {
				return backgroundRun(opts)
			}
			return reindexRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Background, "background", false, "bring the index in step as the background process a command starts (one at a time, at a low priority)")
	cmd.Flags().MarkHidden("background")
	return cmd
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
	if err := backfill.Forget(store.Dir); err != nil {
		fmt.Fprintf(opts.Env.Err, "mecha: %v\n", err)
	}
	fmt.Fprintf(opts.Env.Out, "indexed %s in %s\n", sessionCount(n), store.Dir)
	return nil
}

// backgroundRun is the process a command starts to index a large store
// in the background (see backfill).
func backgroundRun(opts *ReindexOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	n, ran, err := backfill.Run(store.Dir)
	if errors.Is(err, sessionindex.ErrInterrupted) {
		return err // stopped (a SIGTERM): tried again at the next command
	}
	if err != nil {
		return backfill.Failed(err)
	}
	if !ran {
		return nil
	}
	fmt.Fprintf(opts.Env.Out, "indexed %s in %s\n", sessionCount(n), store.Dir)
	return nil
}
