package replay

import (
	"fmt"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Target is the provider and model a turn is sent to.
type Target struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func (t Target) String() string { return t.Provider + "/" + t.Model }

func recorded(c *transcript.Config) Target { return Target{c.Provider, c.Model} }

// ProviderFunc returns the client that answers for a provider and model.
// A replay asks once per distinct pair and sends every turn of that pair
// to the client it got.
type ProviderFunc func(name, model string) (provider.Provider, error)

// Override replaces the recorded provider and model of every turn (-p and
// -m). The zero Override replays each turn on the provider and model of
// the attach that recorded it.
type Override struct {
	// Provider, when set, answers every turn. A turn recorded on another
	// provider goes to this provider's default model, because the recorded
	// name would name a model this provider does not serve.
	Provider string
	// Model, when set, is the model of every turn.
	Model string
	// DefaultModel names a provider's default model. When it is nil or
	// answers "", the client's own DefaultModel is used.
	DefaultModel func(provider string) string
}

// Target returns who answers a turn that rec recorded. Its Model is empty
// when only the client can name its default.
func (o Override) Target(rec Target) Target {
	t := rec
	if o.Provider != "" && o.Provider != rec.Provider {
		t = Target{Provider: o.Provider}
		if o.DefaultModel != nil {
			t.Model = o.DefaultModel(o.Provider)
		}
	}
	if o.Model != "" {
		t.Model = o.Model
	}
	return t
}

// Targets returns who answers the turns of each attach of s (one per
// config record, in order), before any client is asked for its default
// model.
func Targets(s *session.Session, o Override) []Target {
	cs := s.Configs()
	out := make([]Target, len(cs))
	for i, c := range cs {
		out[i] = o.Target(recorded(c))
	}
	return out
}

// Attach is who answered the turns of one attach of the recording.
type Attach struct {
	// Attach is the attach's position among the session's config records,
	// from 1 (as mecha sessions show numbers them).
	Attach int `json:"attach"`
	// FirstTurn and LastTurn are the user turns it holds, from 1.
	FirstTurn int `json:"first_turn"`
	LastTurn  int `json:"last_turn"`
	// Provider and Model answered its turns in the replay.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// RecordedProvider and RecordedModel answered them in the recording.
	RecordedProvider string `json:"recorded_provider"`
	RecordedModel    string `json:"recorded_model"`
}

// route is who answers each turn of a trajectory.
type route struct {
	targets  []Target            // per turn
	clients  []provider.Provider // per turn
	attaches []Attach            // per attach with turns, in order
}

// newRoute resolves each turn's target and gets one client per distinct
// pair, before any turn is sent: a replay that cannot reach the provider of
// its last attach fails before it spends anything on the first.
func newRoute(s *session.Session, traj *Trajectory, o Override, get ProviderFunc) (*route, error) {
	index := map[*transcript.Config]int{}
	for i, c := range s.Configs() {
		index[c] = i + 1
	}
	type client struct {
		p     provider.Provider
		model string
	}
	clients := map[Target]client{}
	r := &route{}
	for i, turn := range traj.Turns {
		rec := recorded(turn.Config)
		want := o.Target(rec)
		c, ok := clients[want]
		if !ok {
			if get == nil {
				return nil, fmt.Errorf("replay: no way to reach provider %q", want.Provider)
			}
			p, err := get(want.Provider, want.Model)
			if err != nil {
				return nil, err
			}
			c = client{p, want.Model}
			if c.model == "" {
				c.model = p.DefaultModel()
			}
			clients[want] = c
		}
		t := Target{want.Provider, c.model}
		r.targets = append(r.targets, t)
		r.clients = append(r.clients, c.p)
		n := index[turn.Config]
		if k := len(r.attaches); k > 0 && r.attaches[k-1].Attach == n {
			r.attaches[k-1].LastTurn = i + 1
			continue
		}
		r.attaches = append(r.attaches, Attach{Attach: n, FirstTurn: i + 1, LastTurn: i + 1,
			Provider: t.Provider, Model: t.Model, RecordedProvider: rec.Provider, RecordedModel: rec.Model})
	}
	return r, nil
}

// mixed reports whether the turns go to more than one provider and model.
func (r *route) mixed() bool {
	for _, t := range r.targets {
		if t != r.targets[0] {
			return true
		}
	}
	return false
}
