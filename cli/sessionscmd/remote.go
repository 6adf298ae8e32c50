package sessionscmd

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/remote"
)

const remoteHelp = `A remote is a bucket and prefix on S3-compatible object storage, configured in
config.toml:

  [remotes.team]
  url = "s3://mecha-team/sessions"     # bucket and prefix
  endpoint = "http://127.0.0.1:7070"   # optional: any S3-compatible server
  region = "us-east-1"
  path_style = true                    # optional

Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and
AWS_SESSION_TOKEN), else the profile AWS_PROFILE of ~/.aws/credentials
(AWS_SHARED_CREDENTIALS_FILE): never from config.toml, never recorded or
printed. --remote may be left out when one remote is configured.`

// SyncOptions are the options of "sessions push" and "sessions pull".
type SyncOptions struct {
	Env    *cmdkit.Env
	Remote string
	IDs    []string
	All    bool
	Since  time.Duration
	JSON   bool
}

func syncFlags(cmd *cobra.Command, opts *SyncOptions, since *string) {
	f := cmd.Flags()
	f.StringVar(&opts.Remote, "remote", "", "the remote `NAME` ([remotes.NAME] in config.toml)")
	f.BoolVar(&opts.All, "all", false, "every session")
	f.StringVar(since, "since", "", "the sessions created within `DUR` (7d, 36h)")
	f.BoolVar(&opts.JSON, "json", false, "print what happened to each session as JSON")
}

func (o *SyncOptions) parse(args []string, since string) error {
	o.IDs = args
	if since != "" {
		d, ok := parseAgo(since)
		if !ok || d <= 0 {
			return cmdkit.Usagef("--since must be a positive duration (7d, 36h, 90m), not %q", since)
		}
		o.Since = d
	}
	n := 0
	for _, set := range []bool{len(args) > 0, o.All, o.Since > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return cmdkit.Usagef("name sessions by id, or pass --all or --since (one of them)")
	}
	return nil
}

// NewCmdPush builds "mecha sessions push".
func NewCmdPush(env *cmdkit.Env, runF func(*SyncOptions) error) *cobra.Command {
	return newSyncCmd(env, runF, pushRun, "push", "Upload sessions to a remote", `Upload sessions to a remote, each with its SHA-256. A session the remote
already holds byte for byte moves nothing (its checksum is in the remote's
index); one still being written goes up to its last complete line, and the
rest on a later push; one that grew since its last push (a resume) is
updated. A remote copy that is not a prefix of the local session is a
conflict: named in one line and never overwritten (the command then exits
1). A session larger than a part (16 MiB; MECHA_REMOTE_PART_SIZE bytes, at
least 5 MiB, when set) goes up in parts, and a push interrupted mid-way
resumes from the parts the server holds (each checked by its MD5; the
upload's id is kept in $MECHA_HOME/remote-uploads); nothing partial is ever
visible to a pull. The index the remote's "sessions list
--remote" reads is written once per push.`)
}

// newSyncCmd builds push or pull: the same selection (ids, --all,
// --since) and remote flags, run by run unless runF is given (tests).
func newSyncCmd(env *cmdkit.Env, runF func(*SyncOptions) error, run func(context.Context, *SyncOptions) error, verb, short, long string) *cobra.Command {
	opts := &SyncOptions{Env: env}
	var since string
	cmd := &cobra.Command{
		Use:   verb + " [ID...|--all|--since DUR] [--remote NAME]",
		Short: short,
		Long:  long + "\n\n" + remoteHelp,
		Args:  cmdkit.RangeArgs(0, math.MaxInt, "session ids"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.parse(args, since); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	syncFlags(cmd, opts, &since)
	return cmd
}

// openRemote opens the remote the options name, through the harness.
func openRemote(env *cmdkit.Env, name string) (*remote.Remote, error) {
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	return harness.OpenRemote(attach.World(env), cfg, name)
}

func pushRun(ctx context.Context, opts *SyncOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	refs, err := localRefs(opts, store)
	if err != nil {
		return err
	}
	r, err := openRemote(opts.Env, opts.Remote)
	if err != nil {
		return err
	}
	start := opts.Env.Clock.Now()
	out, err := r.Push(ctx, refs, progress(opts))
	return report(opts, r.Name, "push", out, start, err)
}

// localRefs are the store's sessions the options name.
func localRefs(opts *SyncOptions, store *session.Store) ([]session.Ref, error) {
	if len(opts.IDs) > 0 {
		var refs []session.Ref
		seen := map[session.Ref]bool{}
		for _, id := range opts.IDs {
			ref, err := store.Resolve(id)
			if err != nil {
				return nil, err
			}
			if !store.Holds(ref) {
				return nil, fmt.Errorf("sessions push: %s is not in the session store %s", ref.Path(), store.Dir)
			}
			if !seen[ref] {
				seen[ref] = true
				refs = append(refs, ref)
			}
		}
		return refs, nil
	}
	l, err := store.List()
	if err != nil {
		return nil, err
	}
	opts.Env.NoteSkipped(l.NotSessions)
	var refs []session.Ref
	cut := opts.Env.Clock.Now().Add(-opts.Since)
	for i := len(l.Sessions) - 1; i >= 0; i-- { // oldest first
		s := l.Sessions[i]
		if opts.Since > 0 && s.Meta.CreatedAt.Before(cut) {
			continue
		}
		refs = append(refs, s.Ref)
	}
	return refs, nil
}

// progress prints each session's outcome as it is done (not with --json).
func progress(opts *SyncOptions) func(remote.Outcome) {
	if opts.JSON {
		return nil
	}
	return func(o remote.Outcome) {
		if o.Action == remote.Unchanged {
			return
		}
		line := fmt.Sprintf("%-10s %s", o.Action, o.ID)
		if o.Bytes > 0 {
			line += fmt.Sprintf("  %s", byteSize(o.Bytes))
		}
		if o.Note != "" {
			line += "  " + o.Note
		}
		w := opts.Env.Out
		if o.Action == remote.Conflict {
			w = opts.Env.Err
			line = "mecha: conflict: " + o.ID + ": " + o.Note
		}
		fmt.Fprintln(w, line)
	}
}

// report prints the totals (or the JSON), and fails on a conflict.
func report(opts *SyncOptions, name, verb string, out []remote.Outcome, start time.Time, err error) error {
	if err != nil {
		return err
	}
	counts := map[string]int{}
	var bytes int64
	for _, o := range out {
		counts[o.Action]++
		bytes += o.Bytes
	}
	if opts.JSON {
		type row struct {
			ID     string `json:"id"`
			Action string `json:"action"`
			Bytes  int64  `json:"bytes"`
			Size   int64  `json:"size"`
			Note   string `json:"note,omitempty"`
		}
		rows := []row{}
		for _, o := range out {
			rows = append(rows, row{o.ID, o.Action, o.Bytes, o.Size, o.Note})
		}
		if err := cmdkit.WriteJSON(opts.Env.Out, rows); err != nil {
			return err
		}
	} else {
		var parts []string
		for _, a := range []string{remote.Sent, remote.Received, remote.Updated, remote.Unchanged, remote.Ahead, remote.Incomplete, remote.Busy, remote.Conflict} {
			if counts[a] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
			}
		}
		if len(parts) == 0 {
			parts = []string{"no sessions"}
		}
		secs := opts.Env.Clock.Now().Sub(start).Seconds()
		fmt.Fprintf(opts.Env.Err, "%s %s: %s; %s moved in %.1fs\n", verb, name, strings.Join(parts, ", "), byteSize(bytes), secs)
	}
	if n := counts[remote.Conflict]; n > 0 {
		return fmt.Errorf("sessions %s: %d %s in conflict with %s (named above); nothing of them was overwritten", verb, n, textfmt.Plural(n, "session", "sessions"), name)
	}
	return nil
}

// NewCmdPull builds "mecha sessions pull".
func NewCmdPull(env *cmdkit.Env, runF func(*SyncOptions) error) *cobra.Command {
	return newSyncCmd(env, runF, pullRun, "pull", "Download sessions from a remote into the store", `Download sessions from a remote into the local store, chosen from the
remote's index (one request) by id or unique prefix, --all, or --since (by
creation). A session the store lacks is written whole, byte for byte as
pushed and checked against its SHA-256; one the store holds a prefix of is
brought up to date (never one being written); one the store holds more of
is left (push it); one neither side holds a prefix of is a conflict, named
and left alone.`)
}

func pullRun(ctx context.Context, opts *SyncOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	r, err := openRemote(opts.Env, opts.Remote)
	if err != nil {
		return err
	}
	ix, _, err := r.ReadIndex(ctx)
	if err != nil {
		return err
	}
	ids, err := ix.Select(opts.IDs, opts.All, opts.Since, opts.Env.Clock.Now())
	if err != nil {
		return fmt.Errorf("sessions pull: %s: %w", r.Name, err)
	}
	start := opts.Env.Clock.Now()
	out, err := r.Pull(ctx, store, ix, ids, progress(opts))
	return report(opts, r.Name, "pull", out, start, err)
}

// byteSize is n bytes for a person: 812 B, 4.2 KiB, 17.0 MiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
