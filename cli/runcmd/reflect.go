package runcmd

import (
	"context"
	"fmt"

	"github.com/mecha-agent/mecha/cli/reflectcmd"
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/learn"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// learnedTaint makes a run whose system prompt holds a learned rule marked
// private start private, as if it had read the private data the rule was
// distilled from: the interlock then treats the prompt like that data.
func learnedTaint(h agent.History, rc transcript.Config) agent.History {
	h.Taint, h.TaintWhy = learn.PromptTaint(h.Taint, h.TaintWhy, rc.SystemPrompt)
	return h
}

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

// reflectOnClose reflects on the session the run recorded. A failure to
// reflect never fails the run: it is one line on stderr.
func reflectOnClose(ctx context.Context, opts *Options, prov provider.Provider, rc transcript.Config, prices pricing.Table, rec *session.Lazy) {
	if rec == nil || rec.Writer() == nil || ctx.Err() != nil {
		return
	}
	of, err := session.Load(rec.Writer().Path())
	var res *reflectcmd.Result
	if err == nil {
		res, err = reflectcmd.Job{Env: opts.Env, Provider: prov, Name: rc.Provider, Model: rc.Model, Prices: prices, Of: of}.Run(ctx)
	}
	if err != nil {
		fmt.Fprintf(opts.Env.Err, "mecha: reflect: %s (the run itself is unaffected)\n", textfmt.OneLine(err.Error()))
		return
	}
	reflectcmd.Note(opts.Env, res)
}
