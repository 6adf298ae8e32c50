package inspectlog

import (
	"encoding/json"
	"io"
	"time"
)

// Version is the format version of the logs written: Inspect's current
// JSON eval log.
const Version = 2

// Log is an eval log: EvalLog in inspect_ai.log.
type Log struct {
	Version int      `json:"version"`
	Status  string   `json:"status"` // success
	Eval    Spec     `json:"eval"`
	Plan    Plan     `json:"plan"`
	Results *Results `json:"results"`
	Stats   Stats    `json:"stats"`
	Samples []Sample `json:"samples"`
}

// Spec is the eval's identity: EvalSpec.
type Spec struct {
	EvalID      string            `json:"eval_id"`
	RunID       string            `json:"run_id"`
	Created     string            `json:"created"`
	Task        string            `json:"task"`
	TaskID      string            `json:"task_id"`
	TaskVersion int               `json:"task_version"`
	Dataset     Dataset           `json:"dataset"`
	Model       string            `json:"model"`
	Config      Config            `json:"config"`
	Packages    map[string]string `json:"packages"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
}

// Dataset names the samples: EvalDataset.
type Dataset struct {
	Name      string   `json:"name"`
	Samples   int      `json:"samples"`
	SampleIDs []string `json:"sample_ids"`
}

// Config is the eval's configuration: EvalConfig (epochs only).
type Config struct {
	Epochs int `json:"epochs,omitempty"`
}

// Plan is what ran: EvalPlan, one step.
type Plan struct {
	Name   string     `json:"name"`
	Steps  []PlanStep `json:"steps"`
	Config struct{}   `json:"config"`
}

// PlanStep is a solver and its parameters.
type PlanStep struct {
	Solver string         `json:"solver"`
	Params map[string]any `json:"params"`
}

// Results are the eval's scores: EvalResults.
type Results struct {
	TotalSamples     int     `json:"total_samples"`
	CompletedSamples int     `json:"completed_samples"`
	Scores           []Score `json:"scores"`
}

// Score is a scorer's metrics over the samples: EvalScore.
type Score struct {
	Name     string            `json:"name"`
	Scorer   string            `json:"scorer"`
	Scored   int               `json:"scored_samples"`
	Metrics  map[string]Metric `json:"metrics"`
	Metadata map[string]any    `json:"metadata,omitempty"`
}

// Metric is one metric's value: EvalMetric.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Stats are the eval's times and usage: EvalStats.
type Stats struct {
	StartedAt   string           `json:"started_at"`
	CompletedAt string           `json:"completed_at"`
	ModelUsage  map[string]Usage `json:"model_usage"`
}

// Usage is a model's token counts: ModelUsage.
type Usage struct {
	InputTokens     uint64   `json:"input_tokens"`
	OutputTokens    uint64   `json:"output_tokens"`
	TotalTokens     uint64   `json:"total_tokens"`
	InputCacheWrite *uint64  `json:"input_tokens_cache_write,omitempty"`
	InputCacheRead  *uint64  `json:"input_tokens_cache_read,omitempty"`
	TotalCost       *float64 `json:"total_cost,omitempty"`
}

// add adds o's counts.
func (u Usage) add(o Usage) Usage {
	sum := func(a, b *uint64) *uint64 {
		if a == nil && b == nil {
			return nil
		}
		var n uint64
		if a != nil {
			n += *a
		}
		if b != nil {
			n += *b
		}
		return &n
	}
	var cost *float64
	if u.TotalCost != nil || o.TotalCost != nil {
		c := 0.0
		for _, p := range []*float64{u.TotalCost, o.TotalCost} {
			if p != nil {
				c += *p
			}
		}
		cost = &c
	}
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		TotalTokens: u.TotalTokens + o.TotalTokens, InputCacheWrite: sum(u.InputCacheWrite, o.InputCacheWrite),
		InputCacheRead: sum(u.InputCacheRead, o.InputCacheRead), TotalCost: cost}
}

// New is a log of the samples of one task, answered by model
// ("provider/model"): its stats from theirs, its dataset their ids (each
// once, in order; epochs are repeats of one id), its results their count
// and no score (the caller adds scores). Inspect's header reader refuses
// a log without results, so there always are some.
func New(task, model, version string, created time.Time, samples []Sample) *Log {
	l := &Log{Version: Version, Status: "success", Samples: samples, Plan: Plan{Name: "plan"}}
	l.Eval = Spec{Created: stamp(created), Task: task, Model: model, Packages: map[string]string{"mecha": version},
		Dataset: Dataset{Name: task, SampleIDs: []string{}}}
	l.Plan.Steps = []PlanStep{{Solver: "mecha", Params: map[string]any{}}}
	l.Stats.ModelUsage = map[string]Usage{}
	seen := map[string]bool{}
	var first, last time.Time
	for _, s := range samples {
		if !seen[s.ID] {
			seen[s.ID] = true
			l.Eval.Dataset.SampleIDs = append(l.Eval.Dataset.SampleIDs, s.ID)
		}
		l.Eval.Config.Epochs = max(l.Eval.Config.Epochs, s.Epoch)
		for m, u := range s.ModelUsage {
			l.Stats.ModelUsage[m] = l.Stats.ModelUsage[m].add(u)
		}
		if t := s.started; !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
		if t := s.completed; t.After(last) {
			last = t
		}
	}
	l.Eval.Dataset.Samples = len(l.Eval.Dataset.SampleIDs)
	l.Results = &Results{TotalSamples: len(samples), CompletedSamples: len(samples), Scores: []Score{}}
	if first.IsZero() {
		first = created
	}
	if last.IsZero() {
		last = created
	}
	l.Stats.StartedAt, l.Stats.CompletedAt = stamp(first), stamp(last)
	id := runID(task, model, created, l.Eval.Dataset.SampleIDs)
	l.Eval.EvalID, l.Eval.RunID, l.Eval.TaskID = id, id, task
	return l
}

// Write writes the log as one JSON document.
func Write(w io.Writer, l *Log) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(l)
}

// stamp is a time as Inspect writes one: RFC 3339 with its offset.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000-07:00") }
