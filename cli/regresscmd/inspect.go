package regresscmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/buildinfo"
	"github.com/mecha-agent/mecha/record/inspectlog"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// scorer is the name of the score a pin's run gets in an Inspect log.
const scorer = "replay"

// writeInspect writes each suite as an Inspect eval log: at path, or with
// several models one file per model beside it, the model in its name.
func writeInspect(env *cmdkit.Env, path string, sums []regressSummary) error {
	store, err := env.Store()
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	for _, sum := range sums {
		l := suiteLog(store, cfg.Prices(), sum, env)
		out := path
		if len(sums) > 1 {
			ext := filepath.Ext(path)
			out = strings.TrimSuffix(path, ext) + "-" + fileSafe(modelName(sum)) + ext
		}
		err := atomicfile.Write(out, 0o600, func(w io.Writer) error { return inspectlog.Write(w, l) })
		if err != nil {
			return fmt.Errorf("regress: --inspect-log: %w", err)
		}
	}
	return nil
}

// suiteLog is one suite as an eval log: each pin's run a sample (its
// epoch the run), the replay's verdict its score, the divergences and the
// request changes in its metadata; its messages the replay's session's
// when it was recorded, else the recording's (as its metadata says).
func suiteLog(store *session.Store, prices pricing.Table, sum regressSummary, env *cmdkit.Env) *inspectlog.Log {
	var samples []inspectlog.Sample
	model := ""
	for _, p := range sum.Results {
		runs := p.Reports
		if runs == nil && p.Report != nil && p.Status != statusRefused {
			runs = []*replay.Report{p.Report}
		}
		for i, rep := range runs {
			s := runSample(store, prices, p, rep, i)
			if model == "" && rep.Provider != "" {
				model = rep.Provider + "/" + rep.Model
			}
			samples = append(samples, s)
		}
		if p.Status == statusRefused || p.Status == statusFailed {
			s := pinSample(store, prices, p)
			s.Epoch = len(runs) + 1
			s.Error = &inspectlog.SampleError{Message: p.Error, Traceback: p.Error}
			s.Scores = map[string]inspectlog.Grade{scorer: {Value: "I", Answer: p.Status, Explanation: p.Error}}
			samples = append(samples, s)
		}
	}
	if sum.Model != "" {
		model = modelName(sum)
	}
	if model == "" {
		model = "mecha/none"
	}
	l := inspectlog.New("mecha-regress", model, buildinfo.Version(), env.Clock.Now(), samples)
	l.Eval.Config.Epochs = sum.Repeat
	l.Eval.Metadata = map[string]any{"pins": sum.Pins, "repeat": sum.Repeat, "shard": sum.Shard}
	metrics := map[string]inspectlog.Metric{
		"accuracy":   {Name: "accuracy", Value: sum.PassAt1},
		"pass_at_k":  {Name: "pass_at_k", Value: sum.PassAtK},
		"pass_hat_k": {Name: "pass_hat_k", Value: sum.PassHatK},
	}
	l.Results.Scores = []inspectlog.Score{{Name: scorer, Scorer: "mecha_replay", Scored: len(samples), Metrics: metrics,
		Metadata: map[string]any{"k": sum.Repeat, "flaky": sum.Flaky}}}
	return l
}

// runSample is one run of a pin.
func runSample(store *session.Store, prices pricing.Table, p pinResult, rep *replay.Report, i int) inspectlog.Sample {
	var s inspectlog.Sample
	from := "replay"
	if rs, err := load(store, rep.Replay); rep.Replay != "" && err == nil {
		s = inspectlog.FromSession(rs, prices)
	} else {
		s, from = pinSample(store, prices, p), "recording"
		s.ModelUsage = map[string]inspectlog.Usage{}
	}
	s.ID, s.Epoch = p.ID, i+1
	clean := !p.failed[i]
	grade := inspectlog.Grade{Value: "I", Answer: rep.Status}
	if clean {
		grade.Value = "C"
	}
	if first := firstDivergence(rep); first != "" {
		grade.Explanation = "first divergence: " + first
	}
	s.Scores = map[string]inspectlog.Grade{scorer: grade}
	s.Metadata["pin"] = p.ID
	s.Metadata["messages_from"] = from
	s.Metadata["replay_session"] = rep.Replay
	s.Metadata["replay"] = map[string]any{"status": rep.Status, "calls_expected": rep.CallsExpected, "calls_replayed": rep.CallsReplayed,
		"divergences": rep.Divergences, "request_changes": rep.RequestChanges}
	return s
}

// pinSample is the recorded session of a pin as a sample (bare, named by
// the pin, when it cannot be read).
func pinSample(store *session.Store, prices pricing.Table, p pinResult) inspectlog.Sample {
	if s, err := load(store, p.ID); err == nil {
		sm := inspectlog.FromSession(s, prices)
		sm.ID = p.ID
		return sm
	}
	return inspectlog.Sample{ID: p.ID, Epoch: 1, Messages: []inspectlog.Message{}, Metadata: map[string]any{"title": p.Title},
		ModelUsage: map[string]inspectlog.Usage{}, Output: inspectlog.Output{Choices: []inspectlog.Choice{}}}
}

func load(store *session.Store, id string) (*session.Session, error) {
	if id == "" {
		return nil, fmt.Errorf("no session")
	}
	ref, err := store.Resolve(id)
	if err != nil {
		return nil, err
	}
	return store.Load(ref)
}

// fileSafe is a model name as part of a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
