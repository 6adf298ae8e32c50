package sessionscmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/remote"
)

// ShareOptions are the options of "sessions share".
type ShareOptions struct {
	Env            *cmdkit.Env
	ID             string
	Remote         string
	Expires        time.Duration
	IncludePrivate bool
	DryRun         bool
}

// NewCmdShare builds "mecha sessions share".
func NewCmdShare(env *cmdkit.Env, runF func(*ShareOptions) error) *cobra.Command {
	opts := &ShareOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "share ID [--remote NAME] [--expires DUR] [--include-private] [--dry-run]",
		Short: "Upload a copy of a session made for other eyes, and print a link to it",
		Long: `Upload a copy of a session made to be shown, with its HTML page beside it, and
print a presigned link to the page (and one to the copy) that works for
--expires (at most 7 days).

The copy withholds the text of every message, tool call, compaction summary
and system prompt (it holds the project's instructions) that the session's
taint record marks private: what came into the
conversation once private data had (the first taint checkpoint after it
says private), and what no checkpoint follows (its provenance is unknown).
Each withheld text is replaced by a notice saying how many bytes were left
out and why; --include-private keeps them. Then secrets are re-scanned and
redacted in the whole copy: the values of the credentials in this
environment (every encoded form "mecha run" redacts), and what has the
shape of a key (AKIA..., sk-..., ghp_..., xox..., a PEM private key). The
page is rendered from the copy alone, so nothing withheld is in it.
--dry-run uploads nothing and lists what would be withheld.

` + remoteHelp,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Expires <= 0 || opts.Expires > remote.MaxExpiry {
				return cmdkit.Usagef("--expires must be between 1s and 168h (7 days), not %s", opts.Expires)
			}
			if runF != nil {
				return runF(opts)
			}
			return shareRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Remote, "remote", "", "the remote `NAME` ([remotes.NAME] in config.toml)")
	f.DurationVar(&opts.Expires, "expires", 7*24*time.Hour, "how long the link works (`DUR`, at most 168h)")
	f.BoolVar(&opts.IncludePrivate, "include-private", false, "keep the text the taint record marks private")
	f.BoolVar(&opts.DryRun, "dry-run", false, "upload nothing: list what would be withheld and redacted")
	return cmd
}

func shareRun(ctx context.Context, opts *ShareOptions) error {
	env := opts.Env
	ref, err := env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	w := attach.World(env)
	sh, err := remote.Prepare(ref.Path(), opts.IncludePrivate, harness.ShareSecrets(w))
	if err != nil {
		return err
	}
	for _, wh := range sh.Withheld {
		fmt.Fprintf(env.Err, "withheld: line %d, %s, %s: %s\n", wh.Line, env.ForErr(wh.What), byteSize(int64(wh.Bytes)), wh.Why)
	}
	fmt.Fprintf(env.Err, "%s withheld, %d %s redacted\n", countOf(len(sh.Withheld), "text", "texts"), sh.Redacted, plural(sh.Redacted, "secret", "secrets"))
	if opts.DryRun {
		fmt.Fprintln(env.Err, "dry run: nothing uploaded")
		return nil
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	r, err := harness.OpenRemote(w, cfg, opts.Remote)
	if err != nil {
		return err
	}
	res, err := r.Share(ctx, sh, cfg.Prices(), env.Vars.Get("TMPDIR"), opts.Expires)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Err, "shared %s on %s as %s, until %s\n", sh.ID, r.Name, res.Key, res.Expires.In(env.Zone()).Format("2006-01-02 15:04 MST"))
	fmt.Fprintln(env.Out, res.Page)
	fmt.Fprintln(env.Err, "the copy (JSONL): "+res.Copy)
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func countOf(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }
