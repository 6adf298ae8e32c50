package agent

// Benchmarks of the harness's own cost per turn, against a fake model
// server that answers at once: the cost of the loop, the provider client,
// the HTTP round trip over loopback, a real tool call and, depending on the
// sub-benchmark, recording. They back the requirement in
// docs/PERFORMANCE.md that recording adds no more than 5% to a run's wall
// time.
//
//	go test -run='^$' -bench=. -count=6 ./agent | tee /tmp/agent-bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest /tmp/agent-bench.txt
//
// BenchmarkTurn runs a whole agent.Run of benchTurns model calls per
// iteration, each against a fresh fakellm server started outside the timer
// (a script is consumed turn by turn and the server keeps every request it
// got, so one server for all iterations would grow without bound), through
// the real anthropic client and the openai client's local flavour. Every
// answer but the last calls the real fs_read on a 4 KB file; the last
// answers with text. fakellm is instant but not free: it parses and checks
// every request, and shares the CPUs with the client, so provider=inproc
// runs the same answers from memory, without HTTP, to show the harness's
// own cost alone: the worst case for the recording overhead. The record=
// sub-benchmarks are:
//
//	none            Recorder nil
//	session         a real *session.Writer recording as the CLI does:
//	                Store.Create with BackgroundSync (the new file and its
//	                directory are fsynced in the background), the config
//	                record, the run (which syncs at each turn boundary, in
//	                the background) and Close (which waits for a final
//	                fsync), all inside the timer
//	session-block   the same with every turn-boundary fsync blocking the
//	                loop, as before background syncing
//	session-nosync  the same, with the agent's Sync calls made no-ops (the
//	                fsyncs inside Store.Create and Writer.Close remain)
//
// and the recording overhead is the ratio of the medians of session and
// none. BenchmarkTurnPaired runs the three in turn inside each iteration,
// so that drift on a noisy machine hits them alike, and reports the ratio
// directly. BenchmarkRecord isolates the recording: the records of one turn,
// with and without fsync, and the fixed cost of opening and closing a
// session.
//
// Nothing here asserts on time: benchmarks report, they never fail on a
// measurement.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

const (
	// benchTurns is the number of model calls of one benchmarked run: all
	// but the last call fs_read.
	benchTurns = 20
	// benchFileBytes is the size of the file fs_read returns, so each tool
	// result is about 4 KB.
	benchFileBytes = 4 << 10
	benchFile      = "notes.txt"
)

// benchInProc is a provider that answers from memory, without HTTP or a
// server: against it a run costs only the harness itself (the loop, the
// request building, the tool), the floor under the other two.
const benchInProc = "inproc"

var benchProviders = []string{anthropic.Name, openai.NameLocal, benchInProc}

const (
	recordNone    = "none"
	recordSession = "session"
	recordNoSync  = "session-nosync"
	recordBlock   = "session-block"
)

var benchModes = []string{recordNone, recordSession, recordBlock, recordNoSync}

// benchScript is a run of benchTurns answers: benchTurns-1 that read the
// file, then a text answer.
func benchScript() *fakellm.Script {
	s := &fakellm.Script{}
	for i := 0; i < benchTurns-1; i++ {
		s.Turns = append(s.Turns, fakellm.Turn{
			Text:      fmt.Sprintf("Reading part %d.", i+1),
			ToolCalls: []fakellm.ToolCall{{Name: builtin.NameFSRead, Input: json.RawMessage(`{"path":"` + benchFile + `"}`)}},
		})
	}
	s.Turns = append(s.Turns, fakellm.Turn{Text: "The notes say the same thing twenty times."})
	return s
}

// benchWorkspace returns a workspace holding benchFile, benchFileBytes of
// text in lines.
func benchWorkspace(b *testing.B) builtin.Workspace {
	b.Helper()
	dir := b.TempDir()
	line := "the quick brown fox jumps over the lazy dog, 0123456789 abcdef\n"
	text := strings.Repeat(line, benchFileBytes/len(line)+1)[:benchFileBytes-1] + "\n"
	if err := os.WriteFile(filepath.Join(dir, benchFile), []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := builtin.NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}

// benchTools registers every built-in tool, tracked, as the CLI does by
// default, so the request carries the real tool list.
func benchTools(b *testing.B, ws builtin.Workspace) (*tool.Registry, *tool.Tracker) {
	b.Helper()
	tr := &tool.Tracker{}
	reg := &tool.Registry{}
	for _, t := range builtin.All(ws, builtin.Options{}) {
		if err := reg.Register(tr.Wrap(t)); err != nil {
			b.Fatal(err)
		}
	}
	return reg, tr
}

// inProcProvider plays benchScript's answers without a server.
type inProcProvider struct{ calls int }

func (*inProcProvider) Name() string         { return benchInProc }
func (*inProcProvider) DefaultModel() string { return benchInProc }
func (p *inProcProvider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	p.calls++
	if p.calls > benchTurns {
		return nil, fmt.Errorf("inproc: script exhausted at call %d", p.calls)
	}
	u := transcript.Usage{InputTokens: 1000, OutputTokens: 20}
	if p.calls == benchTurns {
		return &provider.Response{Content: []transcript.Block{transcript.TextBlock("The notes say the same thing twenty times.")},
			StopReason: provider.StopEndTurn, Usage: u, Model: req.Model}, nil
	}
	return &provider.Response{Content: []transcript.Block{
		transcript.TextBlock(fmt.Sprintf("Reading part %d.", p.calls)),
		transcript.ToolUseBlock(fmt.Sprintf("toolu_fake_%d", p.calls), builtin.NameFSRead, json.RawMessage(`{"path":"`+benchFile+`"}`)),
	}, StopReason: provider.StopToolUse, Usage: u, Model: req.Model}, nil
}

// benchProvider returns the real client of the named provider, talking to
// url through its own transport, or an inProcProvider.
func benchProvider(b *testing.B, name, url string, hc *http.Client) provider.Provider {
	b.Helper()
	switch name {
	case benchInProc:
		return &inProcProvider{}
	case anthropic.Name:
		return anthropic.New(anthropic.Options{BaseURL: url, APIKey: "sk-bench", HTTPClient: hc})
	case openai.NameLocal:
		c, err := openai.New(openai.Options{Name: openai.NameLocal, BaseURL: url, HTTPClient: hc})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Fatalf("unknown provider %q", name)
	return nil
}

// benchConfig is the run configuration, as the CLI builds it by default.
func benchConfig(prov string, ws builtin.Workspace, reg *tool.Registry) transcript.Config {
	model := anthropic.DefaultModel
	switch prov {
	case openai.NameLocal:
		model = openai.LocalDefaultModel
	case benchInProc:
		model = benchInProc
	}
	prompt := "You are mecha, an agent working in the directory " + ws.Dir() + " (the workspace) through the tools you are given. " +
		"Paths are relative to the workspace. Look before you change anything, keep changes small, and do not guess at file " +
		"contents you can read. When the task is done, stop calling tools and answer with the result in a few sentences."
	return transcript.Config{
		MechaVersion: "bench", Provider: prov, Model: model, Workspace: ws.Dir(), SystemPrompt: &prompt,
		Tools: reg.Names(), CachePrompt: true, MaxTokens: 8192, MaxTurns: 50, CompactKeepRecent: 6,
		PermissionMode: "yes", Trifecta: "refuse", Sandbox: "none",
	}
}

// noSyncRecorder records like its Writer but does not fsync.
type noSyncRecorder struct{ w *session.Writer }

func (n noSyncRecorder) Append(recs ...transcript.Record) error { return n.w.Append(recs...) }
func (noSyncRecorder) Sync() error                              { return nil }

// benchRig is what one benchmarked run needs, prepared outside the timer.
type benchRig struct {
	prov  string
	ws    builtin.Workspace
	store *session.Store
	srv   *fakellm.Server
	tr    *http.Transport
	opts  Options
}

func newBenchRig(b *testing.B, prov string) *benchRig {
	b.Helper()
	return &benchRig{prov: prov, ws: benchWorkspace(b), store: &session.Store{Dir: filepath.Join(b.TempDir(), "sessions")}}
}

// prepare starts a fresh server and builds the options of one run. It is
// not timed.
func (r *benchRig) prepare(b *testing.B, script *fakellm.Script) {
	b.Helper()
	url := ""
	r.srv, r.tr = nil, nil
	if r.prov != benchInProc {
		// Not fakellm.New, whose cleanups would pile up over the
		// iterations: finish verifies the script was played.
		var err error
		if r.srv, err = fakellm.Start(script, fakellm.Options{}); err != nil {
			b.Fatal(err)
		}
		r.tr = http.DefaultTransport.(*http.Transport).Clone()
		url = r.srv.URL()
	}
	reg, tracker := benchTools(b, r.ws)
	r.opts = Options{
		Provider: benchProvider(b, r.prov, url, &http.Client{Transport: r.tr}),
		Tools:    reg, Tracker: tracker, Config: benchConfig(r.prov, r.ws, reg),
	}
}

// run is the timed part: open the record as the CLI does (a new session,
// then the config record), run, close the record. It returns the session
// file's path, "" when nothing was recorded.
func (r *benchRig) run(b *testing.B, mode string) (*Result, string) {
	var w *session.Writer
	opts := r.opts
	if mode != recordNone {
		var err error
		store := *r.store
		store.BackgroundSync = mode == recordSession
		w, err = store.Create(transcript.Meta{Provider: opts.Config.Provider, Model: opts.Config.Model,
			Workspace: opts.Config.Workspace, Title: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		opts.Config.At = time.Now().UTC()
		if err := w.Append(&opts.Config); err != nil {
			b.Fatal(err)
		}
		opts.Recorder = w
		if mode == recordNoSync {
			opts.Recorder = noSyncRecorder{w}
		}
	}
	res, err := Run(context.Background(), opts, "Read "+benchFile+", part by part.")
	if err != nil {
		b.Fatal(err)
	}
	if w == nil {
		return res, ""
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return res, w.Path()
}

// finish checks a run and tears its server down. It is not timed.
func (r *benchRig) finish(b *testing.B, res *Result, path string, check bool) {
	b.Helper()
	if r.srv != nil {
		r.srv.Close()
		r.tr.CloseIdleConnections()
		if err := r.srv.Verify(); err != nil {
			b.Fatal(err)
		}
	}
	if res.Turns != benchTurns || res.StopReason != StopEndTurn {
		b.Fatalf("run: %d turns, stop %q; want %d, %q", res.Turns, res.StopReason, benchTurns, StopEndTurn)
	}
	if path == "" {
		return
	}
	if check {
		checkBenchSession(b, path, r.opts.Config.Provider)
	}
	// Keep the directory small and the disk use flat across iterations.
	if err := os.Remove(path); err != nil {
		b.Fatal(err)
	}
}

// checkBenchSession makes sure a recorded run holds what the agent wrote:
// the config, 1 prompt + benchTurns answers + benchTurns-1 tool results,
// a taint checkpoint and a summary.
func checkBenchSession(b *testing.B, path, prov string) {
	b.Helper()
	s, err := session.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	if got, want := len(s.Messages()), 2*benchTurns; got != want {
		b.Fatalf("%s: %d messages, want %d", path, got, want)
	}
	if n := len(s.Configs()); n != 1 {
		b.Fatalf("%s: %d configs, want 1", path, n)
	}
	sums := s.Summaries()
	if len(sums) != 1 || sums[0].Turns != benchTurns || sums[0].Provider != prov {
		b.Fatalf("%s: summaries %+v", path, sums)
	}
	msgs := s.Messages()
	res := msgs[2].Content // the first tool result
	if len(res) != 1 || res[0].Type != transcript.BlockToolResult || len(res[0].Content) < benchFileBytes-1 {
		b.Fatalf("%s: first tool result %+v", path, res)
	}
}

// BenchmarkTurn measures whole runs of benchTurns model calls; ns/turn is
// the wall time of a run divided by its turns.
func BenchmarkTurn(b *testing.B) {
	script := benchScript()
	for _, prov := range benchProviders {
		for _, mode := range benchModes {
			b.Run("provider="+prov+"/record="+mode, func(b *testing.B) {
				rig := newBenchRig(b, prov)
				b.ReportAllocs()
				b.ResetTimer()
				b.StopTimer()
				for i := 0; i < b.N; i++ {
					rig.prepare(b, script)
					b.StartTimer()
					res, path := rig.run(b, mode)
					b.StopTimer()
					rig.finish(b, res, path, i == 0)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTurns), "ns/turn")
			})
		}
	}
}

// BenchmarkTurnPaired runs one run of each record mode per iteration, in
// an order that rotates, timing each: slow drift of a shared machine then
// weighs on every mode alike. It reports ns/turn of each mode and the
// ratios of the totals; ns/op is the time of the runs of all modes.
func BenchmarkTurnPaired(b *testing.B) {
	script := benchScript()
	for _, prov := range benchProviders {
		b.Run("provider="+prov, func(b *testing.B) {
			rig := newBenchRig(b, prov)
			spent := make([]time.Duration, len(benchModes))
			b.ResetTimer()
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				for k := range benchModes {
					m := (i + k) % len(benchModes)
					rig.prepare(b, script)
					b.StartTimer()
					start := time.Now()
					res, path := rig.run(b, benchModes[m])
					spent[m] += time.Since(start)
					b.StopTimer()
					rig.finish(b, res, path, i == 0)
				}
			}
			turns := float64(b.N * benchTurns)
			for m, mode := range benchModes {
				b.ReportMetric(float64(spent[m].Nanoseconds())/turns, "ns/turn-"+mode)
				if m > 0 {
					b.ReportMetric(float64(spent[m])/float64(spent[0]), mode+"/none")
				}
			}
		})
	}
}

// benchTurnRecords returns the two messages of one turn as the agent
// records them: an answer calling a tool, and a user message with its
// result of about 4 KB.
func benchTurnRecords(i int) (*transcript.Message, *transcript.Message) {
	id := fmt.Sprintf("toolu_fake_%d", i+1)
	line := "the quick brown fox jumps over the lazy dog, 0123456789 abcdef\n"
	result := strings.Repeat(line, benchFileBytes/len(line)+1)[:benchFileBytes]
	now := time.Now().UTC()
	answer := &transcript.Message{Role: transcript.RoleAssistant, At: now, Content: []transcript.Block{
		transcript.TextBlock(fmt.Sprintf("Reading part %d.", i+1)),
		transcript.ToolUseBlock(id, builtin.NameFSRead, json.RawMessage(`{"path":"`+benchFile+`"}`)),
	}}
	results := &transcript.Message{Role: transcript.RoleUser, At: now, Content: []transcript.Block{
		transcript.ToolResultBlock(id, result, false),
	}}
	return answer, results
}

// benchTurnsPerFile is how many turns BenchmarkRecord appends to one
// session before it starts another (outside the timer), so the file stays
// a realistic size (about 4.5 MB) however large b.N grows.
const benchTurnsPerFile = 1000

// BenchmarkRecord isolates the cost of recording:
//
//	turn=append        the two records of one turn, no fsync
//	turn=append+sync   the same and one Sync
//	turn=agent         append, Sync, append, Sync: what the agent does per
//	                   turn (it syncs after the answer and after the results)
//	run=open+close     what a run costs beyond its turns: Store.Create, the
//	                   config record, the closing taint and summary, the
//	                   final Sync and Close
func BenchmarkRecord(b *testing.B) {
	ws := benchWorkspace(b)
	reg, _ := benchTools(b, ws)
	cfg := benchConfig(anthropic.Name, ws, reg)
	meta := transcript.Meta{Provider: cfg.Provider, Model: cfg.Model, Workspace: cfg.Workspace, Title: "bench"}
	for _, variant := range []string{"append", "append+sync", "agent"} {
		b.Run("turn="+variant, func(b *testing.B) {
			store := &session.Store{Dir: filepath.Join(b.TempDir(), "sessions")}
			var w *session.Writer
			open := func() {
				var err error
				if w, err = store.Create(meta); err != nil {
					b.Fatal(err)
				}
				if err := w.Append(&cfg); err != nil {
					b.Fatal(err)
				}
			}
			rotate := func() {
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				if err := os.Remove(w.Path()); err != nil {
					b.Fatal(err)
				}
			}
			// Build the records beforehand: encoding them is part of
			// Append, building them is the agent's business.
			answers := make([]*transcript.Message, benchTurnsPerFile)
			results := make([]*transcript.Message, benchTurnsPerFile)
			for i := range answers {
				answers[i], results[i] = benchTurnRecords(i)
			}
			open()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := i % benchTurnsPerFile
				if k == 0 && i > 0 {
					b.StopTimer()
					rotate()
					open()
					b.StartTimer()
				}
				if err := w.Append(answers[k]); err != nil {
					b.Fatal(err)
				}
				if variant == "agent" {
					if err := w.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Append(results[k]); err != nil {
					b.Fatal(err)
				}
				if variant != "append" {
					if err := w.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			rotate()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/turn")
		})
	}
	b.Run("run=open+close", func(b *testing.B) {
		store := &session.Store{Dir: filepath.Join(b.TempDir(), "sessions")}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w, err := store.Create(meta)
			if err != nil {
				b.Fatal(err)
			}
			c := cfg
			c.At = time.Now().UTC()
			if err := w.Append(&c); err != nil {
				b.Fatal(err)
			}
			if err := w.Append(&transcript.Taint{Private: true, At: c.At}, &transcript.Summary{Turns: benchTurns, Provider: cfg.Provider,
				Model: cfg.Model, StopReason: StopEndTurn, At: c.At}); err != nil {
				b.Fatal(err)
			}
			if err := w.Sync(); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := os.Remove(w.Path()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}
