package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

const benchCalls = 20

// benchScript is a run of benchCalls model turns that each read a file,
// then an answer.
func benchScript(b *testing.B) *fakellm.Script {
	var turns []map[string]any
	for i := range benchCalls {
		turns = append(turns, map[string]any{"tool_calls": []map[string]any{
			{"name": "fs_read", "input": map[string]any{"path": fmt.Sprintf("f%d.txt", i%4)}}}})
	}
	turns = append(turns, map[string]any{"text": "done"})
	raw, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		b.Fatal(err)
	}
	s, err := fakellm.ParseScript(raw)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

type benchEnv struct {
	ws     string
	store  *session.Store
	script *fakellm.Script
}

func newBenchEnv(b *testing.B) *benchEnv {
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	for i := range 4 {
		os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	return &benchEnv{ws: ws, store: &session.Store{Dir: filepath.Join(dir, "sessions")}, script: benchScript(b)}
}

func (e *benchEnv) config() transcript.Config {
	prompt := "You are a benchmark."
	return transcript.Config{Provider: "local", Model: "local", Workspace: e.ws, SystemPrompt: &prompt,
		Tools: []string{"fs_read", "fs_list"}, MaxTokens: 1024, MaxTurns: 100, CachePrompt: true, PermissionMode: "ask"}
}

func (e *benchEnv) tools(rc transcript.Config) (*tool.Registry, *tool.Tracker, error) {
	ws, err := builtin.NewWorkspace(rc.Workspace)
	if err != nil {
		return nil, nil, err
	}
	tr := &tool.Tracker{}
	reg := &tool.Registry{}
	for _, t := range builtin.All(ws, builtin.Options{}) {
		reg.Register(tool.Gate(tr.Wrap(t), tool.ModeAsk, nil))
	}
	reg, err = reg.Restrict(rc.Tools)
	return reg, tr, err
}

// startFake starts a fake server, which stopFake stops and verifies: not
// fakellm.New, whose cleanups would pile up over a benchmark's iterations.
func startFake(b *testing.B, script *fakellm.Script) *fakellm.Server {
	srv, err := fakellm.Start(script, fakellm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

func stopFake(b *testing.B, srv *fakellm.Server) {
	srv.Close()
	if err := srv.Verify(); err != nil {
		b.Fatal(err)
	}
}

// live records one run the way mecha run does and returns its session.
func (e *benchEnv) live(b *testing.B, srv *fakellm.Server) session.Ref {
	prov, err := openai.New(openai.Options{Name: openai.NameLocal, BaseURL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	rc := e.config()
	reg, tr, err := e.tools(rc)
	if err != nil {
		b.Fatal(err)
	}
	w, err := e.store.Create(transcript.Meta{Provider: "local", Model: "local", Workspace: e.ws, Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(&rc); err != nil {
		b.Fatal(err)
	}
	res, err := agent.Run(context.Background(), agent.Options{Provider: prov, Tools: reg, Tracker: tr, Config: rc, Recorder: w}, "read the files")
	if err != nil || res.Turns != benchCalls+1 {
		b.Fatalf("%v, %+v", err, res)
	}
	return w.Ref()
}

// BenchmarkReplayPerTurn compares, in one run, a live recorded run of 21
// model turns against an instant fake server with the replay of that run
// (recorded as a session too), and reports the cost per model turn of each.
// The difference is replay's own overhead: loading and extracting the
// transcript, comparing each call, answering from the recording.
func BenchmarkReplayPerTurn(b *testing.B) {
	e := newBenchEnv(b)
	srv := startFake(b, e.script)
	recorded := e.live(b, srv)
	stopFake(b, srv)
	turns := float64(benchCalls + 1)

	b.Run("run", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			srv := startFake(b, e.script)
			b.StartTimer()
			e.live(b, srv)
			b.StopTimer()
			stopFake(b, srv)
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/turns, "ns/turn")
	})
	b.Run("replay", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			srv := startFake(b, e.script)
			prov, _ := openai.New(openai.Options{Name: openai.NameLocal, BaseURL: srv.URL()})
			b.StartTimer()
			s, err := e.store.Load(recorded)
			if err != nil {
				b.Fatal(err)
			}
			w, err := e.store.Create(transcript.Meta{Provider: "local", Model: "local", Title: "replay", ReplayOf: s.Meta.ID})
			if err != nil {
				b.Fatal(err)
			}
			rep, err := Replay(context.Background(), Options{Session: s, Providers: only(prov),
				Mode: ModeStop, Tools: e.tools, Recorder: w})
			w.Close()
			if err != nil || rep.Status != StatusClean || rep.CallsReplayed != benchCalls {
				b.Fatalf("%v, %+v", err, rep)
			}
			b.StopTimer()
			stopFake(b, srv)
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/turns, "ns/turn")
	})
}

// BenchmarkCompare is the comparison of one call with its recording.
func BenchmarkCompare(b *testing.B) {
	rec := Call{Name: "fs_edit", Input: json.RawMessage(`{"path":"src/main.go","old_string":"func main() {\n\tfmt.Println(1)\n}","new_string":"func main() {\n\tfmt.Println(2)\n}","replace_all":false}`)}
	in := json.RawMessage(`{"new_string":"func main() {\n\tfmt.Println(2)\n}","old_string":"func main() {\n\tfmt.Println(1)\n}","path":"src/main.go","replace_all":false}`)
	for b.Loop() {
		if d := Compare(rec, "fs_edit", in); d != nil {
			b.Fatal(d)
		}
	}
}
