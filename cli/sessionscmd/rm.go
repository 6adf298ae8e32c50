package sessionscmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/spf13/cobra"
)

// RmOptions are the options of "sessions rm".
type RmOptions struct {
	Env *cmdkit.Env
	IDs []string
	Yes bool
	// Remote removes the sessions from this remote instead of the store.
	Remote string
}

// NewCmdRm builds "mecha sessions rm".
func NewCmdRm(env *cmdkit.Env, runF func(*RmOptions) error) *cobra.Command {
	opts := &RmOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove sessions",
		Long: `Remove sessions from the store: each transcript and its lock file. It asks
first on a terminal; without one it refuses unless --yes is given. A session in
use (its lock held by a run) is never removed.

--remote NAME removes the sessions (ids or unique prefixes, as the remote's
index knows them) from a remote instead: their objects, then their index
entries. Nothing else ever deletes a session on a remote.`,
		Args: cmdkit.RangeArgs(1, math.MaxInt, "at least one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if runF != nil {
				return runF(opts)
			}
			if cmd.Flags().Changed("remote") {
				return rmRemote(cmd.Context(), opts)
			}
			return rmRun(opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove without asking")
	cmd.Flags().StringVar(&opts.Remote, "remote", "", "remove the sessions from remote `NAME` instead of the store")
	return cmd
}

func rmRun(opts *RmOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	var refs []session.Ref
	seen := map[session.Ref]bool{}
	for _, id := range opts.IDs {
		r, err := store.Resolve(id)
		if err != nil {
			return err
		}
		if !store.Holds(r) {
			return fmt.Errorf("sessions rm: %s is not in the session store %s", r.Path(), store.Dir)
		}
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
	}
	if ok, err := confirm(opts.Env, opts.Yes, fmt.Sprintf("Remove %s?", sessionWords(refs))); !ok || err != nil {
		return err
	}
	return remove(opts.Env, store, refs)
}

func sessionCount(n int) string {
	if n == 1 {
		return "1 session"
	}
	return strconv.Itoa(n) + " sessions"
}

func sessionWords(refs []session.Ref) string {
	if len(refs) == 1 {
		return refs[0].ID
	}
	return strconv.Itoa(len(refs)) + " sessions"
}

// errNotConfirmed is a removal nobody could be asked about.
var errNotConfirmed = errors.New("not removing without confirmation: there is no terminal to ask on (pass --yes)")

// confirm asks on a terminal; without one, only --yes goes ahead.
func confirm(env *cmdkit.Env, yes bool, question string) (bool, error) {
	if yes {
		return true, nil
	}
	if !env.InTTY {
		return false, errNotConfirmed
	}
	fmt.Fprintf(env.Err, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(env.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	fmt.Fprintln(env.Err, "nothing removed")
	return false, nil
}

// remove removes each session (Store.Remove: under its lock, so that
// none in use is removed and none can be attached to while it goes).
// Sessions in use are named and passed over, and make the command fail.
func remove(env *cmdkit.Env, store *session.Store, refs []session.Ref) error {
	busy := 0
	for _, r := range refs {
		err := store.Remove(r)
		var be *session.BusyError
		if errors.As(err, &be) {
			fmt.Fprintf(env.Err, "mecha: not removing %s: %v\n", r.ID, err)
			busy++
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "removed %s\n", r.ID)
	}
	if busy > 0 {
		return fmt.Errorf("sessions: %s in use, not removed", sessionCount(busy))
	}
	return nil
}

// PruneOptions are the options of "sessions prune".
type PruneOptions struct {
	Env       *cmdkit.Env
	OlderThan time.Duration
	DryRun    bool
	Yes       bool
	Pins      string
}

// NewCmdPrune builds "mecha sessions prune".
func NewCmdPrune(env *cmdkit.Env, runF func(*PruneOptions) error) *cobra.Command {
	opts := &PruneOptions{Env: env}
	var older string
	cmd := &cobra.Command{
		Use:   "prune --older-than AGE",
		Short: "Remove sessions older than an age, except pinned ones",
		Long: `Remove the sessions created more than AGE ago and not written to since (90d,
12h, 30m). A session pinned in $MECHA_HOME/regression-sessions.txt is never
removed, and is named as kept; nor is a session in use. --dry-run lists what
would go. It asks first on a terminal; without one it refuses unless --yes.`,
		Args: cmdkit.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if older == "" {
				return cmdkit.Usagef("--older-than is required (such as 90d)")
			}
			d, err := parseAge(older)
			if err != nil {
				return err
			}
			opts.OlderThan = d
			if runF != nil {
				return runF(opts)
			}
			return pruneRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&older, "older-than", "", "remove sessions older than `AGE` (90d, 12h, 30m)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	f.BoolVarP(&opts.Yes, "yes", "y", false, "remove without asking")
	return cmd
}

// parseAge reads an age: a number of days (90d) or a Go duration (12h).
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		days, err = strconv.Atoi(n)
		if err == nil && days > 1<<20 {
			err = errors.New("too many days")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, cmdkit.Usagef("--older-than must be a positive age such as 90d or 12h, not %q", s)
	}
	return d, nil
}

func pruneRun(opts *PruneOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	pins, err := readPins(opts.Env, opts.Pins)
	if err != nil {
		return err
	}
	l, err := store.List()
	if err != nil {
		return err
	}
	opts.Env.NoteSkipped(l.NotSessions)
	cutoff := opts.Env.Clock.Now().Add(-opts.OlderThan)
	var old []session.Ref
	for _, s := range l.Sessions {
		if !s.Meta.CreatedAt.Before(cutoff) {
			continue
		}
		if st, err := os.Stat(s.Ref.Path()); err != nil || !st.ModTime().Before(cutoff) {
			continue // written to since
		}
		if pinned(pins, s) {
			fmt.Fprintf(opts.Env.Err, "keeping %s: pinned in regression-sessions.txt\n", s.Meta.ID)
			continue
		}
		old = append(old, s.Ref)
	}
	if len(old) == 0 {
		fmt.Fprintln(opts.Env.Err, "no sessions to prune")
		return nil
	}
	if opts.DryRun {
		for _, r := range old {
			fmt.Fprintf(opts.Env.Out, "would remove %s\n", r.ID)
		}
		return nil
	}
	if ok, err := confirm(opts.Env, opts.Yes, fmt.Sprintf("Remove %s?", sessionWords(old))); !ok || err != nil {
		return err
	}
	return remove(opts.Env, store, old)
}

// pinned reports whether a pin names the session: its id, a prefix of it,
// or its path.
func pinned(pins []string, s session.Info) bool {
	for _, p := range pins {
		if strings.HasPrefix(s.Meta.ID, p) || p == s.Ref.Path() {
			return true
		}
	}
	return false
}

// readPins reads the pins of "mecha regress"; no file, no pins. A pin
// file that cannot be read stops the prune.
func readPins(env *cmdkit.Env, path string) ([]string, error) {
	path, err := env.PinsPath(path)
	if err != nil {
		return nil, err
	}
	pins, err := cmdkit.ReadPins(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions prune: cannot read the pins, so nothing is pruned: %w", err)
	}
	return pins, nil
}

// rmRemote removes sessions from a remote, after asking.
func rmRemote(ctx context.Context, opts *RmOptions) error {
	r, err := openRemote(opts.Env, opts.Remote)
	if err != nil {
		return err
	}
	ix, _, err := r.ReadIndex(ctx)
	if err != nil {
		return err
	}
	ids, err := ix.Select(opts.IDs, false, 0, opts.Env.Clock.Now())
	if err != nil {
		return fmt.Errorf("sessions rm: %s: %w", r.Name, err)
	}
	what := ids[0]
	if len(ids) > 1 {
		what = sessionCount(len(ids))
	}
	if ok, err := confirm(opts.Env, opts.Yes, fmt.Sprintf("Remove %s from %s?", what, r.Name)); !ok || err != nil {
		return err
	}
	if err := r.Remove(ctx, ids); err != nil {
		return err
	}
	for _, id := range ids {
		fmt.Fprintf(opts.Env.Out, "removed %s from %s\n", id, r.Name)
	}
	return nil
}
