package regresscmd

import (
	"github.com/mecha-agent/mecha/redrive/replay"
)

// Pin statuses: clean in every run, flaky (clean in some), diverged (in
// none), refused (cannot be replayed), failed (the replay itself failed).
const (
	statusClean    = "clean"
	statusFlaky    = "flaky"
	statusDiverged = "diverged"
	statusRefused  = "refused"
	statusFailed   = "failed"
)

// pinResult is one pin's outcome over its runs (--repeat K).
type pinResult struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Runs are the replays that finished; Clean how many passed the check
	// (no divergence; in stop mode, no structural one).
	Runs  int `json:"runs"`
	Clean int `json:"clean"`
	// PassAt1 is Clean out of the K runs asked for; PassAtK whether at
	// least one was clean; PassHatK whether all K were; Flaky whether
	// some were and some were not.
	PassAt1  float64 `json:"pass_at_1"`
	PassAtK  bool    `json:"pass_at_k"`
	PassHatK bool    `json:"pass_hat_k"`
	Flaky    bool    `json:"flaky"`
	// Report is the first run that failed the check, else the first run.
	Report *replay.Report `json:"report,omitempty"`
	// Reports are every run's, in order, when K is above 1.
	Reports []*replay.Report `json:"reports,omitempty"`
	Time    float64          `json:"seconds"`

	failed []bool // per run: did it fail the check
}

// regressSummary is one suite run: every pin against one model.
type regressSummary struct {
	// Model is -m's model ("" when each pin went to its recorded one), and
	// Provider -p's.
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	Pins     int    `json:"pins"`
	// Repeat is K, the runs asked of each pin; Runs the runs finished.
	Repeat int `json:"repeat"`
	Runs   int `json:"runs"`
	// Clean, Flaky, Diverged, Refused and Failed count pins by status.
	Clean    int `json:"clean"`
	Flaky    int `json:"flaky"`
	Diverged int `json:"diverged"`
	Refused  int `json:"refused"`
	Failed   int `json:"failed"`
	// The rates over pins (0 when there is none): the mean of the pins'
	// pass@1, and the share of pins with pass@K and with pass^K.
	PassAt1  float64 `json:"pass_at_1"`
	PassAtK  float64 `json:"pass_at_k"`
	PassHatK float64 `json:"pass_hat_k"`
	Shard    string  `json:"shard,omitempty"`
	// Seconds is the suite's wall time.
	Seconds float64     `json:"seconds"`
	Results []pinResult `json:"results"`
	// Totals over every run, for comparing models.
	Divergences map[string]int `json:"divergences"`
	Tokens      tokens         `json:"tokens"`
	// CostUSD is the cost of every run at today's prices; null when a
	// model that answered has no price.
	CostUSD *float64 `json:"cost_usd"`
}

// tokens are a suite's token counts.
type tokens struct {
	Input      uint64 `json:"input"`
	Output     uint64 `json:"output"`
	CacheRead  uint64 `json:"cache_read"`
	CacheWrite uint64 `json:"cache_write"`
}

// add records one finished run: whether it failed the check, and its
// report.
func (p *pinResult) add(rep *replay.Report, failed bool) {
	p.Runs++
	if !failed {
		p.Clean++
	}
	p.failed = append(p.failed, failed)
	if p.Report == nil || failed && !p.failed[p.firstReport()] {
		p.Report = rep
	}
	p.Reports = append(p.Reports, rep)
}

// firstReport is the index of the run Report holds.
func (p *pinResult) firstReport() int {
	for i, r := range p.Reports {
		if r == p.Report {
			return i
		}
	}
	return 0
}

// settle sets the pin's status and rates once its k runs are done (or it
// stopped, refused or failed, before them).
func (p *pinResult) settle(k int) {
	if p.Status == "" {
		switch {
		case p.Clean == p.Runs:
			p.Status = statusClean
		case p.Clean == 0:
			p.Status = statusDiverged
		default:
			p.Status = statusFlaky
		}
	}
	ok := p.Status != statusRefused && p.Status != statusFailed
	p.PassAt1 = float64(p.Clean) / float64(k)
	p.PassAtK = ok && p.Clean > 0
	p.PassHatK = ok && p.Clean == k
	p.Flaky = p.Status == statusFlaky
	if k == 1 {
		p.Reports = nil
	}
}

// add counts a settled pin into the suite.
func (s *regressSummary) add(p pinResult) {
	s.Runs += p.Runs
	switch p.Status {
	case statusClean:
		s.Clean++
	case statusFlaky:
		s.Flaky++
	case statusDiverged:
		s.Diverged++
	case statusRefused:
		s.Refused++
	case statusFailed:
		s.Failed++
	}
	runs := p.Reports
	if runs == nil && p.Report != nil {
		runs = []*replay.Report{p.Report}
	}
	for _, r := range runs {
		for _, d := range r.Divergences {
			s.Divergences[d.Kind]++
		}
		s.Tokens.Input += r.Usage.InputTokens
		s.Tokens.Output += r.Usage.OutputTokens
		s.Tokens.CacheRead += r.Usage.CacheReadTokens
		s.Tokens.CacheWrite += r.Usage.CacheWriteTokens
		switch {
		case s.CostUSD == nil:
		case r.CostUSD == nil:
			s.CostUSD = nil
		default:
			*s.CostUSD += *r.CostUSD
		}
	}
	s.Results = append(s.Results, p)
}

// rates computes the suite's rates over its pins.
func (s *regressSummary) rates() {
	if len(s.Results) == 0 {
		return
	}
	var at1 float64
	var atK, hatK int
	for _, p := range s.Results {
		at1 += p.PassAt1
		if p.PassAtK {
			atK++
		}
		if p.PassHatK {
			hatK++
		}
	}
	n := float64(len(s.Results))
	s.PassAt1, s.PassAtK, s.PassHatK = at1/n, float64(atK)/n, float64(hatK)/n
}

// bad counts the pins that did not replay clean in every run.
func (s *regressSummary) bad() int { return s.Flaky + s.Diverged + s.Refused + s.Failed }

// flakyPins are the pins clean in some runs and not in others.
func (s *regressSummary) flakyPins() []pinResult {
	var out []pinResult
	for _, p := range s.Results {
		if p.Flaky {
			out = append(out, p)
		}
	}
	return out
}

// fails reports whether a finished replay fails the check: in error mode
// any divergence, in stop mode a structural one.
func fails(mode replay.Mode, rep *replay.Report) bool {
	if mode == replay.ModeError {
		return rep.Diverged()
	}
	return rep.Structural()
}
