// Package reflect is "mecha reflect": a model reads a recorded session and
// writes a reflection, recorded as a session of its own. Job is also what
// "mecha run --reflect" runs when the run closes.
package reflectcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
)

// Options are the options of "mecha reflect".
type Options struct {
	Env             *cmdkit.Env
	ID              string
	Provider, Model string
	MockScript      string
	RequestTimeout  time.Duration
}

// NewCmdReflect builds "mecha reflect". runF, when not nil, runs in place
// of the command once its flags are parsed and checked (tests use it).
func NewCmdReflect(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "reflect ID",
		Short: "Have a model reflect on a session and record the reflection",
		Long: `Show a model the session, rendered compactly (the task, each message under
its index with calls and their outcomes, errors, denials and refusals, the
final answer, each run's summary; long results cut, and messages left out
of the middle of a very long session), and ask it for a reflection in
Markdown: what worked, what went wrong and why, and at most a few candidate
rules, the lines beginning "- ", each citing the message indexes it rests
on. The reflection goes to stdout and is recorded as a session of its own
whose header names the session it reflects on (reflects_on).

A reflection inherits the provenance of what it read: its taint checkpoint,
recorded before the model answers, is the merge of the taint covering each
message it was shown, and a shown message no checkpoint covers makes it
private and untrusted both. "mecha distill" drops reflections that are
untrusted or of unknown provenance.

The provider and model are -p and -m, else the reflected session's (when
mecha can call it), else config.toml's default_provider, else mock.
"mecha run --reflect" (or reflect = true in config.toml) reflects on each
run when it closes, with the run's own provider and model. Reflections and
distillations are never reflected on automatically.`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if err := harness.CheckMockScript(opts.Provider, opts.MockScript); err != nil {
				return attach.Usage(err)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return reflectRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Provider, "provider", "p", "", "model provider: anthropic, openai, local or mock (default: the session's)")
	f.StringVarP(&opts.Model, "model", "m", "", "model (default: the session's with its provider, else the provider's default)")
	f.StringVar(&opts.MockScript, "mock-script", "", "with -p mock, play this JSON `FILE` of turns")
	attach.RequestTimeoutFlag(cmd, &opts.RequestTimeout)
	return cmd
}

func reflectRun(ctx context.Context, opts *Options) error {
	of, _, err := opts.Env.LoadSession(opts.ID)
	if err != nil {
		return err
	}
	if len(of.Messages()) == 0 {
		return fmt.Errorf("session %s holds no messages to reflect on", of.Meta.ID)
	}
	res, err := Job{Env: opts.Env, Settings: opts.settings(of), Of: of}.Run(ctx)
	if err != nil {
		return fmt.Errorf("reflect: %w", err)
	}
	Note(opts.Env, res)
	fmt.Fprintln(opts.Env.Out, opts.Env.ForOut(res.Text))
	return nil
}

// settings choose the provider and the model (see the command's help):
// -p, else the reflected session's when mecha can call it; -m, else the
// session's model when it is on that provider. What is not chosen here is
// the harness's choice: config.toml's default_provider (else mock), the
// provider's default model.
func (o *Options) settings(of *session.Session) harness.Settings {
	s := harness.DefaultSettings()
	s.MockScript, s.RequestTimeout = o.MockScript, o.RequestTimeout
	ofName, ofModel := of.Meta.Provider, of.Meta.Model
	if cs := of.Configs(); len(cs) > 0 {
		ofName, ofModel = cs[len(cs)-1].Provider, cs[len(cs)-1].Model
	}
	given := map[string]bool{}
	switch {
	case o.Provider != "":
		s.Provider, given["provider"] = o.Provider, true
	case harness.KnownProvider(ofName):
		s.Provider, given["provider"] = ofName, true
	}
	switch {
	case o.Model != "":
		s.Model, given["model"] = o.Model, true
	case given["provider"] && s.Provider == ofName && ofModel != "":
		s.Model, given["model"] = ofModel, true
	}
	s.Given = func(name string) bool { return given[name] }
	return s
}

// Note says on stderr what a reflection was recorded with: its candidate
// rules and its taint.
func Note(env *cmdkit.Env, res *Result) {
	taint := "clean"
	switch t := res.Taint; {
	case t.Private && t.Untrusted:
		taint = "private and untrusted: distill will drop it"
	case t.Untrusted:
		taint = "untrusted: distill will drop it"
	case t.Private:
		taint = "private"
	}
	if res.Unknown > 0 {
		taint = fmt.Sprintf("unknown: %d shown messages no taint checkpoint covers; distill will drop it", res.Unknown)
	}
	fmt.Fprintf(env.Err, "reflection: %s, %d candidate %s, taint %s\n", res.ID, res.Rules, textfmt.Plural(res.Rules, "rule", "rules"), taint)
}
