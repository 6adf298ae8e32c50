package sessions

import (
	"path/filepath"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/sessionview"

	"github.com/spf13/cobra"
)

// ShowOptions are the options of "sessions show".
type ShowOptions struct {
	Env  *cmdutil.Env
	ID   string
	JSON bool
	Full bool
}

// NewCmdShow builds "mecha sessions show".
func NewCmdShow(env *cmdutil.Env, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session for a person: configuration, turns, tool calls, taint, usage and cost",
		Long: `Show a session: the run configuration of each attach (and what changed between
them), each user turn, each tool call with its arguments and the start of its
result, the assistant's text, the taint state, token usage and its cost at
today's configured prices.`,
		Args: cmdutil.ExactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the session as JSON: every record, plus taint, usage and cost")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "show tool results, thinking and the system prompt whole")
	return cmd
}

// showRun streams the session through sessionview's renderers, which
// write as they read the file.
func showRun(opts *ShowOptions) error {
	path, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	kids, err := children(path)
	if err != nil {
		return err
	}
	if opts.JSON {
		return sessionview.WriteJSON(opts.Env.Out, path, cfg.Prices, kids...)
	}
	return sessionview.WriteText(opts.Env.Out, path, cfg.Prices, sessionview.TextOptions{Color: opts.Env.Color(), Full: opts.Full,
		Children: kids})
}

// children are the sessions beside path whose header names it as their
// parent (subagents' child runs), oldest first.
func children(path string) ([]sessionview.Child, error) {
	infos, err := session.Children(filepath.Dir(path), session.FileID(path))
	if err != nil {
		return nil, err
	}
	var kids []sessionview.Child
	for _, in := range infos {
		kids = append(kids, sessionview.Child{Session: in.Meta.ID, CallID: in.Meta.Parent.CallID})
	}
	return kids, nil
}
