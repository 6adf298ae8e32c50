// Package rewindcmd is "mecha rewind": a session's files put back as they
// were before one of its turns, and its conversation forked from there.
package rewindcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// Options are the options of "mecha rewind".
type Options struct {
	Env       *cmdkit.Env
	ID        string
	To        int
	Workspace string
	JSON      bool
}

// NewCmdRewind builds "mecha rewind".
func NewCmdRewind(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "rewind ID [--to TURN]",
		Short: "Put back the files a session's tools changed since a turn, and continue from there",
		Long: `Go back to before turn TURN of a session (its TURN-th prompt; without
--to, list the turns): every file fs_write and fs_edit changed since is put
back to its content before the first of those changes, byte for byte, or
removed if they created it, and the conversation before that turn is
copied into a new session whose header names the session and turn it was
forked from (fork_of). Continue it with mecha chat --resume NEW or mecha
run --resume NEW. The session rewound is left as it was.

Before each write or edit, mecha keeps the file's content in
$MECHA_HOME/blobs, under its SHA-256, and names it on the call's result
in the transcript (file_changes); sessions recorded before that have
nothing to put back. A rewind checks every file before touching any: if
one is not what mecha last wrote to it (you or another program changed it
since), the rewind is refused, nothing is restored, and the files are
named. Commands the shell ran, MCP tools' calls and subagents cannot be
undone: they are listed ("not undone"), and what they changed stays.

The session must not be in use (a chat or a run holding it). -w puts the
files back in another directory than the recorded workspace.`,
		Example: `  mecha rewind last
  mecha rewind last --to 3
  mecha rewind 20261201T101500-1a2b3c4d --to 1 --json`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if cmd.Flags().Changed("to") && opts.To < 1 {
				return cmdkit.Usagef("--to must be a turn, 1 or more")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return rewindRun(opts)
		},
	}
	cmd.Flags().IntVar(&opts.To, "to", 0, "go back to before this `TURN` (1 is the first prompt; without it, list the turns)")
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "put the files back in this directory (default: the recorded workspace)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"session","forked_from","turn","restored","removed","not_undone"}`)
	return cmd
}

// result is the --json output.
type result struct {
	Session    string   `json:"session"`
	ForkedFrom string   `json:"forked_from"`
	Turn       int      `json:"turn"`
	Restored   []string `json:"restored"`
	Removed    []string `json:"removed"`
	NotUndone  []string `json:"not_undone"`
}

func rewindRun(opts *Options) error {
	env := opts.Env
	s, ref, err := env.LoadSession(opts.ID)
	if err != nil {
		return err
	}
	if opts.To == 0 {
		turns := harness.Turns(s)
		if len(turns) == 0 {
			fmt.Fprintf(env.Out, "session %s has no turn to go back to\n", ref.ID)
			return nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "turns of %s (mecha rewind %s --to TURN):\n", ref.ID, ref.ID)
		for _, t := range turns {
			fmt.Fprintf(&b, "%4d  %s\n", t.N, textfmt.Visible(textfmt.Clip(textfmt.OneLine(t.Text), 100)))
		}
		_, err := fmt.Fprint(env.Out, env.ForOut(b.String()))
		return err
	}
	r, err := harness.Rewind(attach.World(env), ref, opts.To, opts.Workspace)
	var conflict *harness.ConflictError
	if errors.As(err, &conflict) {
		return err
	}
	if err != nil {
		if r != nil && len(r.Restored)+len(r.Removed) > 0 {
			return fmt.Errorf("%w (already put back: %s)", err, strings.Join(append(r.Restored, r.Removed...), ", "))
		}
		return err
	}
	if opts.JSON {
		out := result{Session: r.Session.ID, ForkedFrom: ref.ID, Turn: opts.To, Restored: orEmpty(r.Restored),
			Removed: orEmpty(r.Removed), NotUndone: orEmpty(r.NotUndone)}
		enc := json.NewEncoder(env.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var b strings.Builder
	for _, p := range r.Restored {
		fmt.Fprintf(&b, "restored %s\n", textfmt.Visible(p))
	}
	for _, p := range r.Removed {
		fmt.Fprintf(&b, "removed %s (created since turn %d)\n", textfmt.Visible(p), opts.To)
	}
	if len(r.Restored)+len(r.Removed) == 0 {
		b.WriteString("no file to put back: the file tools changed none since that turn\n")
	}
	if len(r.NotUndone) > 0 {
		fmt.Fprintf(&b, "not undone (%d %s since turn %d whose effects stay):\n", len(r.NotUndone), textfmt.Plural(len(r.NotUndone), "call", "calls"), opts.To)
		for _, c := range r.NotUndone {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	fmt.Fprintf(&b, "session: %s, forked from %s before turn %d (mecha chat --resume %s)\n", r.Session.ID, ref.ID, opts.To, r.Session.ID)
	_, err = fmt.Fprint(env.Out, env.ForOut(b.String()))
	return err
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
