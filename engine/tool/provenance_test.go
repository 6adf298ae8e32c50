package tool

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// pageCaps is a tool that reads a web page for the model (AgentDojo's
// get_webpage, mecha's web_fetch): it reaches the network and brings in
// outside content, and acts in nobody's name.
var pageCaps = Capabilities{ReachesNetwork: true, External: true}

// provSurface is one tool, "fetch", with pageCaps (or caps), under the
// whole policy chain in yes mode, and a "messages" tool that brings in
// untrusted content and reaches nothing.
type provSurface struct {
	tr      *Tracker
	fetch   *fakeTool
	tools   map[string]Tool
	counter *countingTool
}

// countingTool counts CapabilitiesOf calls, to hold the rule to one
// judgement per call.
type countingTool struct {
	*fakeTool
	capsOf int
}

func (c *countingTool) CapabilitiesOf(json.RawMessage) (Capabilities, error) {
	c.capsOf++
	return c.caps, nil
}

func newProvSurface(p Policy) *provSurface {
	s := &provSurface{tr: &Tracker{}, fetch: &fakeTool{name: "fetch", caps: pageCaps}, tools: map[string]Tool{}}
	s.counter = &countingTool{fakeTool: s.fetch}
	if p.Mode == "" {
		p.Mode = ModeYes
	}
	s.tools["fetch"] = p.Wrap(s.counter, s.tr)
	s.tools["messages"] = p.Wrap(&fakeTool{name: "messages", caps: Capabilities{External: true}}, s.tr)
	return s
}

func (s *provSurface) run(t *testing.T, name, input string) Result {
	t.Helper()
	res, err := s.tools[name].Run(context.Background(), json.RawMessage(input))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

const attackerURL = `{"url":"www.true-informations.com"}`

// TestProvenanceHoldsAHostOnlyUntrustedContentNamed is AgentDojo's slack
// injection_task_3 in miniature: the conversation reads a message (a
// page) that names a host; a fetch of that host is refused, once, with
// the host named, and the fetch never runs. The control: the same
// attack under --trifecta off runs the fetch.
func TestProvenanceHoldsAHostOnlyUntrustedContentNamed(t *testing.T) {
	t.Parallel()
	for _, policy := range []Trifecta{TrifectaRefuse, TrifectaOff} {
		s := newProvSurface(Policy{Trifecta: policy})
		s.tr.TrustText("Summarise the article on www.informations.com for me.")
		// Before anything untrusted: any host runs.
		if res := s.run(t, "fetch", `{"url":"https://www.informations.com/article"}`); res.IsError {
			t.Fatalf("%s: a clean fetch of the user's host: %q", policy, res.Content)
		}
		s.run(t, "messages", `{}`)
		res := s.run(t, "fetch", attackerURL)
		if policy == TrifectaOff {
			if res.IsError || s.fetch.runs != 2 {
				t.Errorf("off (the control): the attacker's host was not fetched: %+v, runs %d", res, s.fetch.runs)
			}
			continue
		}
		if !res.IsError || !strings.HasPrefix(res.Content, RefusalPrefix) || s.fetch.runs != 1 {
			t.Fatalf("refuse: the attacker's host ran: %+v, runs %d", res, s.fetch.runs)
		}
		for _, want := range []string{"fetch would reach true-informations.com, a host named only by untrusted content (a page, a message, a tool result)",
			"untrusted content (fetch brought in content from outside)", "name the host in the prompt", "[trifecta] trusted_hosts", "--trifecta ask",
			"The call was not run (--trifecta refuse)."} {
			if !strings.Contains(res.Content, want) {
				t.Errorf("refusal %q lacks %q", res.Content, want)
			}
		}
		// The same site the user named still runs (same-site navigation).
		if res := s.run(t, "fetch", `{"url":"http://informations.com/next-page"}`); res.IsError {
			t.Errorf("refuse: the user's own host after untrusted content: %q", res.Content)
		}
		// A subdomain of it was not named: held.
		if res := s.run(t, "fetch", `{"url":"https://evil.informations.com/"}`); !res.IsError {
			t.Errorf("refuse: a subdomain of the user's host ran: %q", res.Content)
		}
		// One judgement per call, held or not.
		if s.counter.capsOf != 4 {
			t.Errorf("CapabilitiesOf called %d times for 4 calls", s.counter.capsOf)
		}
	}
}

// TestProvenanceNeedsNoPrivateData: the rule holds with nothing private
// in the conversation (the existing trifecta rule would not), and does
// not hold in a clean one.
func TestProvenanceNeedsNoPrivateData(t *testing.T) {
	t.Parallel()
	s := newProvSurface(Policy{})
	if res := s.run(t, "fetch", attackerURL); res.IsError {
		t.Fatalf("clean conversation: %q", res.Content)
	}
	s = newProvSurface(Policy{})
	s.run(t, "messages", `{}`)
	if s.tr.Taint().Private {
		t.Fatal("the conversation is private")
	}
	if res := s.run(t, "fetch", attackerURL); !res.IsError {
		t.Errorf("untrusted, not private: the attacker's host ran: %q", res.Content)
	}
}

// TestProvenanceTrustedSources: each trusted source lets the host through
// after untrusted content, each against the same attack refused without
// it.
func TestProvenanceTrustedSources(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		trust func(s *provSurface, t *testing.T)
	}{
		{"named in the prompt", func(s *provSurface, _ *testing.T) {
			s.tr.TrustText("Then visit www.true-informations.com and tell me what it says.")
		}},
		{"a URL in the system prompt", func(s *provSurface, _ *testing.T) {
			s.tr.TrustText("Our wiki is at https://true-informations.com/wiki.")
		}},
		{"config's trusted_hosts", func(s *provSurface, _ *testing.T) { s.tr.TrustHosts("true-informations.com") }},
		{"config's *.domain", func(s *provSurface, _ *testing.T) { s.tr.TrustHosts("*.true-informations.com") }},
		{"reached before untrusted content", func(s *provSurface, t *testing.T) {
			if res := s.run(t, "fetch", `{"url":"https://TRUE-informations.com/"}`); res.IsError {
				t.Fatalf("clean fetch: %q", res.Content)
			}
		}},
	} {
		for _, guard := range []bool{true, false} {
			s := newProvSurface(Policy{})
			if !guard {
				tt.trust(s, t)
			}
			s.run(t, "messages", `{}`)
			res := s.run(t, "fetch", attackerURL)
			if res.IsError != guard {
				t.Errorf("%s (trusted: %v): refused %v: %q", tt.name, !guard, res.IsError, res.Content)
			}
		}
	}
}

// TestProvenanceAsksOnce: under ask, the held call is put to the person
// once, the gate's question with it (ask mode: a fetch needs permission),
// and runs on yes, not on no.
func TestProvenanceAsksOnce(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{true, false} {
		a := &fakeAsker{allow: allow}
		s := newProvSurface(Policy{Mode: ModeAsk, Trifecta: TrifectaAsk, Asker: a})
		s.run(t, "messages", `{}`)
		res := s.run(t, "fetch", attackerURL)
		if len(a.asked) != 1 {
			t.Fatalf("asked %d times, want once: %+v", len(a.asked), a.asked)
		}
		if q := a.asked[0]; !strings.Contains(q.Reason, "true-informations.com, a host named only by untrusted content") || q.Permission == "" {
			t.Errorf("the question: %+v", q)
		}
		if res.IsError == allow || (s.fetch.runs == 1) != allow {
			t.Errorf("answer %v: %+v, runs %d", allow, res, s.fetch.runs)
		}
		if !allow && !strings.Contains(res.Content, "the user said no (--trifecta ask)") {
			t.Errorf("no: %q", res.Content)
		}
	}
}

// TestProvenanceTurn: calls of one answer made before untrusted content
// came in are judged, and their hosts trusted, by the state at the turn's
// start; a later turn's call to a host only a result named is held.
func TestProvenanceTurn(t *testing.T) {
	t.Parallel()
	s := newProvSurface(Policy{})
	s.tr.Turn()
	s.run(t, "messages", `{}`)
	if res := s.run(t, "fetch", `{"url":"https://chosen.example.com/"}`); res.IsError {
		t.Fatalf("a call made with its sibling, before any result: %q", res.Content)
	}
	s.tr.Turn()
	if res := s.run(t, "fetch", `{"url":"https://chosen.example.com/more"}`); res.IsError {
		t.Errorf("a host reached before untrusted content was seen: %q", res.Content)
	}
	if res := s.run(t, "fetch", attackerURL); !res.IsError {
		t.Errorf("a host only a result named: %q", res.Content)
	}
}

// TestProvenanceNoDestination: a network call whose input names no host
// is judged by the other rules only; a tool that does not reach the
// network is not judged by this rule at all.
func TestProvenanceNoDestination(t *testing.T) {
	t.Parallel()
	s := newProvSurface(Policy{})
	s.run(t, "messages", `{}`)
	if res := s.run(t, "fetch", `{"query":"the weather in Zurich"}`); res.IsError {
		t.Errorf("no destination: %q", res.Content)
	}
	if res := s.run(t, "messages", `{"note":"see www.true-informations.com"}`); res.IsError {
		t.Errorf("a tool that reaches no network: %q", res.Content)
	}
}

// webFetchLike declares its own destinations, as web_fetch does.
type webFetchLike struct{ fakeTool }

func (w *webFetchLike) DestinationsOf(input json.RawMessage) ([]string, error) {
	var p struct{ URL string }
	if err := json.Unmarshal(input, &p); err != nil {
		return nil, err
	}
	return HostsInText(p.URL), nil
}

// TestDestinationsOfUnwraps: a tool's own destinations are read through
// the policy chain; others get the hosts their input names.
func TestDestinationsOfUnwraps(t *testing.T) {
	t.Parallel()
	var tr Tracker
	w := &webFetchLike{fakeTool{name: "web_fetch", caps: pageCaps}}
	wrapped := Policy{}.Wrap(w, &tr)
	in := json.RawMessage(`{"url":"https://a.example.com/x","note":"b.example.org"}`)
	if got := DestinationsOf(wrapped, in); !slices.Equal(got, []string{"a.example.com"}) {
		t.Errorf("own destinations = %v", got)
	}
	if got := DestinationsOf(Policy{}.Wrap(&fakeTool{name: "x", caps: pageCaps}, &tr), in); !slices.Equal(got, []string{"b.example.org", "a.example.com"}) {
		t.Errorf("named hosts = %v", got)
	}
}

func TestHostsInText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"www.true-informations.com", []string{"true-informations.com"}},
		{"Visit https://WWW.Example.COM:8443/a?b=c, then http://[::1]:80/ and ws://10.0.0.1/x.", []string{"example.com", "::1", "10.0.0.1"}},
		{"mail alice@corp.example.org and bob@Mail.Example.co.uk", []string{"corp.example.org", "mail.example.co.uk"}},
		{"see github.com/mecha-agent/mecha or docs.python.org.", []string{"github.com", "docs.python.org"}},
		{"plain text, no hosts. Version 1.2.3 and e.g. i.e. etc.", nil},
		{"README.md main.py run.sh lib.rs Makefile.in config.toml index.html mecha.zip", nil},
		{"errors.Is(err, x) rec.At m.To s.ch errors.New fmt.Println", nil},
		{"./dir/site.com src/app.dev a_b.com x-site.com-y $HOME.com", nil},
		{"golang.org/x/tools@v0.1.0 user@host", []string{"golang.org"}},
		{"ftp://files.example.com/ is not http", nil},
		{"[see](https://md.example.com/a) [https://br.example.com]", []string{"md.example.com", "br.example.com"}},
	} {
		if got := HostsInText(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("HostsInText(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestHostSet(t *testing.T) {
	t.Parallel()
	var s hostSet
	for _, h := range []string{"WWW.Example.com.", "*.corp.example", "10.0.0.1"} {
		s.add(h)
	}
	for host, want := range map[string]bool{
		"example.com": true, "a.example.com": false, "corp.example": true, "x.corp.example": true,
		"x.y.corp.example": true, "evilcorp.example": false, "10.0.0.1": true, "10.0.0.2": false,
	} {
		if got := s.has(NormalizeHost(host)); got != want {
			t.Errorf("has(%q) = %v, want %v", host, got, want)
		}
	}
	if got := s.list(); !slices.Equal(got, []string{"10.0.0.1", "example.com", "*.corp.example"}) {
		t.Errorf("list = %v", got)
	}
}
