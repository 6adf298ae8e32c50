package replay

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// resumed is a session recorded on provider a, resumed on b, then resumed
// on a again: three attaches of one turn each.
func resumed() *session.Session {
	a1 := &transcript.Config{Provider: "a", Model: "a-1", Tools: []string{"fs_read"}, MaxTurns: 10}
	b1 := &transcript.Config{Provider: "b", Model: "b-1", Tools: []string{"fs_read"}, MaxTurns: 10}
	a2 := &transcript.Config{Provider: "a", Model: "a-1", Tools: []string{"fs_read"}, MaxTurns: 10}
	return &session.Session{Meta: transcript.Meta{ID: "20260805T091500-3f2a1b7c"}, Records: []transcript.Record{
		a1,
		msg("user", text("first")),
		msg("assistant", use("a", "fs_read", `{"path":"x"}`)),
		msg("user", result("a", "recorded x")),
		msg("assistant", text("done")),
		b1,
		msg("user", text("second")),
		msg("assistant", text("nothing to do")),
		a2,
		msg("user", text("third")),
		msg("assistant", text("still nothing")),
	}}
}

// clients hands out one scripted client per provider name and counts what
// it was asked for.
type clients struct {
	byName map[string]*script
	asked  []Target
	fail   string // a provider name whose client cannot be built
}

func (c *clients) get(name, model string) (provider.Provider, error) {
	c.asked = append(c.asked, Target{name, model})
	if name == c.fail {
		return nil, errors.New(name + ": no key")
	}
	p, ok := c.byName[name]
	if !ok {
		return nil, errors.New("unknown provider " + name)
	}
	return p, nil
}

func firstText(req *provider.Request) string {
	for _, m := range req.Messages {
		if m.Role == transcript.RoleUser && transcript.TextOf(m.Content) != "" {
			return transcript.TextOf(m.Content)
		}
	}
	return ""
}

func lastText(req *provider.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == transcript.RoleUser && transcript.TextOf(m.Content) != "" {
			return transcript.TextOf(m.Content)
		}
	}
	return ""
}

func TestReplayFollowsEachAttach(t *testing.T) {
	t.Parallel()
	a := &script{answers: [][]transcript.Block{
		blocks(use("1", "fs_read", `{"path":"x"}`)), blocks(text("done")), blocks(text("still nothing")),
	}}
	b := &script{answers: [][]transcript.Block{blocks(text("nothing to do"))}}
	cs := &clients{byName: map[string]*script{"a": a, "b": b}}
	f := &fixture{runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{Session: resumed(), Providers: cs.get, Mode: ModeStop,
		Tools: f.tools("fs_read"), Recorder: f})
	if err != nil || rep.Status != StatusClean {
		t.Fatalf("%+v, %v", rep, err)
	}
	// One client per pair, asked for before anything is sent.
	if want := []Target{{"a", "a-1"}, {"b", "b-1"}}; !reflect.DeepEqual(cs.asked, want) {
		t.Errorf("clients asked for %v, want %v", cs.asked, want)
	}
	// Each server got exactly the turns of its own attaches, under their model.
	var gotA, gotB []string
	for _, r := range a.reqs {
		gotA = append(gotA, r.Model+":"+lastText(r))
	}
	for _, r := range b.reqs {
		gotB = append(gotB, r.Model+":"+lastText(r))
	}
	if want := []string{"a-1:first", "a-1:first", "a-1:third"}; !reflect.DeepEqual(gotA, want) {
		t.Errorf("a got %v, want %v", gotA, want)
	}
	if want := []string{"b-1:second"}; !reflect.DeepEqual(gotB, want) {
		t.Errorf("b got %v, want %v", gotB, want)
	}
	// The later turns carry the whole conversation, whoever answered it.
	if firstText(b.reqs[0]) != "first" {
		t.Errorf("b's request lacks the earlier turns: %+v", b.reqs[0].Messages)
	}
	// Each turn's config record names who actually answered it.
	var configs []string
	for _, r := range f.recs {
		if c, ok := r.(*transcript.Config); ok {
			configs = append(configs, c.Provider+"/"+c.Model)
		}
	}
	if want := []string{"a/a-1", "b/b-1", "a/a-1"}; !reflect.DeepEqual(configs, want) {
		t.Errorf("config records %v, want %v", configs, want)
	}
	// The report names each attach.
	want := []Attach{
		{Attach: 1, FirstTurn: 1, LastTurn: 1, Provider: "a", Model: "a-1", RecordedProvider: "a", RecordedModel: "a-1"},
		{Attach: 2, FirstTurn: 2, LastTurn: 2, Provider: "b", Model: "b-1", RecordedProvider: "b", RecordedModel: "b-1"},
		{Attach: 3, FirstTurn: 3, LastTurn: 3, Provider: "a", Model: "a-1", RecordedProvider: "a", RecordedModel: "a-1"},
	}
	if !reflect.DeepEqual(rep.Attaches, want) || rep.Provider != "a" || rep.Model != "a-1" {
		t.Errorf("report %s/%s attaches %+v", rep.Provider, rep.Model, rep.Attaches)
	}
}

func TestReplayOneTargetListsNoAttaches(t *testing.T) {
	t.Parallel()
	a := &script{answers: [][]transcript.Block{
		blocks(use("1", "fs_read", `{"path":"x"}`)), blocks(text("done")), blocks(text("ok")), blocks(text("ok")),
	}}
	cs := &clients{byName: map[string]*script{"a": a}}
	f := &fixture{runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{Session: resumed(), Providers: cs.get, Mode: ModeStop,
		Override: Override{Provider: "a", Model: "a-2"}, Tools: f.tools("fs_read"), Recorder: f})
	if err != nil || rep.Status != StatusClean {
		t.Fatalf("%+v, %v", rep, err)
	}
	if rep.Attaches != nil || rep.Provider != "a" || rep.Model != "a-2" || len(cs.asked) != 1 {
		t.Errorf("report %s/%s attaches %+v; clients asked %v", rep.Provider, rep.Model, rep.Attaches, cs.asked)
	}
	for _, r := range a.reqs {
		if r.Model != "a-2" {
			t.Errorf("request for model %q", r.Model)
		}
	}
}

func TestReplayUnreachableProviderSendsNothing(t *testing.T) {
	t.Parallel()
	a := &script{answers: [][]transcript.Block{blocks(text("x"))}}
	cs := &clients{byName: map[string]*script{"a": a}, fail: "b"}
	f := &fixture{runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{Session: resumed(), Providers: cs.get, Mode: ModeStop,
		Tools: f.tools("fs_read"), Recorder: f})
	if err == nil || err.Error() != "b: no key" || rep.Status == StatusRefused {
		t.Fatalf("%+v, %v", rep, err)
	}
	if len(a.reqs) != 0 || len(f.recs) != 0 {
		t.Errorf("a replay that cannot reach its second provider sent %d requests and recorded %d records", len(a.reqs), len(f.recs))
	}
}

func TestOverrideTarget(t *testing.T) {
	t.Parallel()
	defaults := func(p string) string { return p + "-default" }
	rec := Target{"local", "qwen3"}
	tests := []struct {
		name string
		o    Override
		want Target
	}{
		{"none keeps the recorded pair", Override{DefaultModel: defaults}, rec},
		{"the same provider keeps the recorded model", Override{Provider: "local", DefaultModel: defaults}, rec},
		{"another provider takes its default model", Override{Provider: "openai", DefaultModel: defaults}, Target{"openai", "openai-default"}},
		{"another provider without defaults leaves it to the client", Override{Provider: "openai"}, Target{"openai", ""}},
		{"a model alone", Override{Model: "llama"}, Target{"local", "llama"}},
		{"both", Override{Provider: "openai", Model: "gpt", DefaultModel: defaults}, Target{"openai", "gpt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.o.Target(rec); got != tt.want {
				t.Errorf("Target(%v) = %v, want %v", rec, got, tt.want)
			}
		})
	}
}

func TestReplayOverrideProviderPerAttach(t *testing.T) {
	t.Parallel()
	// -p b on a session recorded on a and b: the attach recorded on b keeps
	// its model, the others go to b's default, named by the client itself.
	b := &script{answers: [][]transcript.Block{
		blocks(use("1", "fs_read", `{"path":"x"}`)), blocks(text("done")), blocks(text("ok")), blocks(text("ok")),
	}}
	cs := &clients{byName: map[string]*script{"b": b}}
	f := &fixture{runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{Session: resumed(), Providers: cs.get, Mode: ModeStop,
		Override: Override{Provider: "b"}, Tools: f.tools("fs_read"), Recorder: f})
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, r := range b.reqs {
		models = append(models, r.Model)
	}
	if want := []string{"fake-1", "fake-1", "b-1", "fake-1"}; !reflect.DeepEqual(models, want) {
		t.Errorf("models %v, want %v", models, want)
	}
	if len(rep.Attaches) != 3 || rep.Attaches[0].Model != "fake-1" || rep.Attaches[0].RecordedProvider != "a" || rep.Attaches[1].Model != "b-1" {
		t.Errorf("attaches %+v", rep.Attaches)
	}
}
