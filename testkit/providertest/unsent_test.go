package providertest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/record/transcript"
)

// unsent is the client's own account of the settings it does not send.
func (f flavour) unsent(req *provider.Request) []string {
	if f.provider == anthropic.Name {
		return anthropic.Unsent(req)
	}
	return openai.Unsent(f.provider, req)
}

// TestUnsentIsWhatIsNotSent holds each client's Unsent to what it puts on
// the wire: a setting changes the request the server receives exactly
// when Unsent does not name it (the config record holds null for those
// it names).
func TestUnsentIsWhatIsNotSent(t *testing.T) {
	t.Parallel()
	one, seed := 1.0, uint64(42)
	set := map[string]func(r *provider.Request){
		provider.SettingTemperature: func(r *provider.Request) { r.Temperature = &one },
		provider.SettingSeed:        func(r *provider.Request) { r.Seed = &seed },
		provider.SettingEffort:      func(r *provider.Request) { r.Effort = "low" },
		provider.SettingThinking:    func(r *provider.Request) { r.Thinking = true },
		provider.SettingCachePrompt: func(r *provider.Request) { r.CachePrompt = true },
	}
	type pair struct {
		setting  string
		thinking bool // the base request's
	}
	var pairs []pair
	for _, thinking := range []bool{false, true} {
		for name := range set {
			if name != provider.SettingThinking || !thinking {
				pairs = append(pairs, pair{name, thinking})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.setting, b.setting) })
	forEach(t, func(t *testing.T, f flavour) {
		p, srv := f.start(t, `{"turns":[`+strings.Repeat(`{"text":"ok"},`, 2*len(pairs)-1)+`{"text":"ok"}]}`)
		base := func(thinking bool) *provider.Request {
			return &provider.Request{Model: "test-model", System: "s", MaxTokens: 30000, Thinking: thinking,
				Messages: []transcript.Message{{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("q")}}}}
		}
		for i, pr := range pairs {
			without, with := base(pr.thinking), base(pr.thinking)
			set[pr.setting](with)
			for _, r := range []*provider.Request{without, with} {
				if _, _, err := ask(p, r); err != nil {
					t.Fatal(err)
				}
			}
			sent := !reflect.DeepEqual(body(t, srv, 2*i), body(t, srv, 2*i+1))
			if unsent := slices.Contains(f.unsent(with), pr.setting); sent == unsent {
				t.Errorf("%s (thinking %v): sent %v, and Unsent names it %v: want one or the other", pr.setting, pr.thinking, sent, unsent)
			}
		}
	})
}
