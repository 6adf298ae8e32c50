package cli

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/sessionview"
	"github.com/mecha-agent/mecha/transcript"
)

// ShowOptions are the options of "sessions show".
type ShowOptions struct {
	Env  *Env
	ID   string
	JSON bool
	Full bool
}

// NewCmdSessionsShow builds "mecha sessions show".
func NewCmdSessionsShow(env *Env) *cobra.Command {
	opts := &ShowOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session for a person: configuration, turns, tool calls, taint, usage and cost",
		Long: `Show a session: the run configuration of each attach (and what changed between
them), each user turn, each tool call with its arguments and the start of its
result, the assistant's text, the taint state, token usage and its cost at
today's configured prices.`,
		Args: exactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
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
	path, err := resolveSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	if opts.JSON {
		return sessionview.WriteJSON(opts.Env.Out, path, cfg.Prices)
	}
	return sessionview.WriteText(opts.Env.Out, path, cfg.Prices, sessionview.TextOptions{Color: opts.Env.color(), Full: opts.Full})
}

// attribute says whose tokens a summary counts (see sessionview.Attribute).
func attribute(m transcript.Meta, s *transcript.Summary) (string, string) {
	return sessionview.Attribute(m, s)
}

// compactJSON is a call's arguments on one line, at most 300 bytes.
func compactJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	s, _ := bounded(string(b), 1, 300)
	return s
}
