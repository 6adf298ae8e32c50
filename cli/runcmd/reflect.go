package runcmd

import (
	"context"
	"fmt"

	"github.com/mecha-agent/mecha/cli/reflectcmd"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
)

// reflect reports whether the run reflects when it closes: --reflect when
// given, else config.toml's reflect; never for a session that is itself a
// reflection or a distillation (a reflection of a reflection is never
// automatic) and never without a record.
func (o *Options) reflect(cfg *config.Config, prev *session.Session) bool {
	on := cfg.Reflect
	if o.given("reflect") {
		on = o.Reflect
	}
	if !on || o.NoSession {
		return false
	}
	return prev == nil || (prev.Meta.ReflectsOn == "" && !prev.Meta.Distill)
}

// reflectOnClose reflects on the session the run recorded, with the
// run's own client, provider and model. A failure to reflect never fails
// the run: it is one line on stderr.
func reflectOnClose(ctx context.Context, opts *Options, att *harness.Attached) {
	if att.Session.IsZero() || ctx.Err() != nil {
		return
	}
	store, err := opts.Env.Store()
	var of *session.Session
	if err == nil {
		of, err = store.Load(att.Session)
	}
	var res *reflectcmd.Result
	if err == nil {
		res, err = reflectcmd.Job{Env: opts.Env, Settings: reflectcmd.On(att.Config.Provider, att.Config.Model), Provider: att.Provider, Of: of}.Run(ctx)
	}
	if err != nil {
		fmt.Fprintf(opts.Env.Err, "mecha: reflect: %s (the run itself is unaffected)\n", textfmt.OneLine(err.Error()))
		return
	}
	reflectcmd.Note(opts.Env, res)
}
