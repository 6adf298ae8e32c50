package sessionscmd

import (
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionview"

	"github.com/spf13/cobra"
)

// ShowOptions are the options of "sessions show".
type ShowOptions struct {
	Env  *cmdkit.Env
	ID   string
	JSON bool
	Full bool
	// Turn shows that turn alone, Last the last that many turns.
	Turn, Last int
	NoPager    bool
}

// NewCmdShow builds "mecha sessions show".
func NewCmdShow(env *cmdkit.Env, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session for a person: totals, configuration, turns, tool calls, taint",
		Long: `Show a session: its header and totals (taint, token usage and its cost at
today's configured prices), then the run configuration of each attach (and
what changed between them), each turn numbered, each tool call with its
arguments and the start of its result, and the assistant's text.

A turn is one reply of the model and what led to it (the person's message,
or the results of the tool calls it answers). --turn N shows one turn,
--last N the last N.

On a terminal the output goes through $PAGER (default "less -R"; less gets
LESS=FRX unless $LESS is set, so a short session is simply printed);
--no-pager writes directly, as does output that is not a terminal.
Control characters and escape sequences in the transcript are shown as
escapes (\x1b, \u202e), never sent to the terminal; a pager that cannot
start is noted and skipped. --json prints the whole session (the document
"sessions export --format json" writes), with DEL, C1 controls and bidi
overrides as \u escapes and the settings an import did not know as null.`,
		Example: `  mecha sessions show last
  mecha sessions show --last 3 20261130T0915
  mecha sessions show --turn 2 --full last
  mecha sessions show --json last | jq .turns`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			switch {
			case opts.Turn < 0 || opts.Last < 0:
				return cmdkit.Usagef("--turn and --last must be positive")
			case opts.Turn > 0 && opts.Last > 0:
				return cmdkit.Usagef("--turn and --last cannot be used together")
			case opts.JSON && (opts.Turn > 0 || opts.Last > 0):
				return cmdkit.Usagef("--json prints the whole session: --turn and --last apply to the text view")
			}
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the session as JSON: every record, plus taint, usage and cost")
	f.BoolVar(&opts.Full, "full", false, "show tool results, thinking and the system prompt whole")
	f.IntVar(&opts.Turn, "turn", 0, "show only turn `N` (counted from 1)")
	f.IntVar(&opts.Last, "last", 0, "show only the last `N` turns")
	f.BoolVar(&opts.NoPager, "no-pager", false, "write directly, not through $PAGER")
	return cmd
}

// showRun streams the session through sessionview's renderers, which
// write as they read the file, to the pager on a terminal.
func showRun(opts *ShowOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	ref, err := store.Resolve(opts.ID)
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	kids, err := children(store, ref)
	if err != nil {
		return err
	}
	path := ref.Path() // the renderers read the file as they write
	if opts.JSON {
		return sessionview.WriteJSON(opts.Env.Out, path, cfg.Prices(), kids...)
	}
	pager := &cmdkit.Pager{Out: opts.Env.Out}
	if !opts.NoPager {
		pager = opts.Env.StartPager()
	}
	err = sessionview.WriteText(pager.Out, path, cfg.Prices(), sessionview.TextOptions{
		Color: opts.Env.Color(), Full: opts.Full, Turn: opts.Turn, Last: opts.Last, Children: kids})
	return pager.Close(err)
}

// children are the sessions beside ref whose header names it as their
// parent (subagents' child runs), oldest first.
func children(store *session.Store, ref session.Ref) ([]sessionview.Child, error) {
	infos, err := store.Children(ref)
	if err != nil {
		return nil, err
	}
	var kids []sessionview.Child
	for _, in := range infos {
		kids = append(kids, sessionview.Child{Session: in.Meta.ID, CallID: in.Meta.Parent.CallID})
	}
	return kids, nil
}
