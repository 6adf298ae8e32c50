package replay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// cleanAnswers replay recording() exactly.
func cleanAnswers() [][]transcript.Block {
	return [][]transcript.Block{
		blocks(use("1", "fs_read", `{"path":"x"}`), use("2", "fs_write", `{"path":"out","content":"1"}`)),
		blocks(text("done")), blocks(use("3", "fs_read", `{"path":"y"}`)), blocks(text("done again")),
	}
}

// TestReplayNotesMCPServerChanges: an MCP server recorded as one version
// and answering as another today is noted in the report, once.
func TestReplayNotesMCPServerChanges(t *testing.T) {
	t.Parallel()
	s := recording()
	for i, r := range s.Records {
		if c, ok := r.(*transcript.Config); ok {
			cp := *c
			cp.MCPServers = []transcript.MCPServer{{Name: "docs", Transport: "stdio", ServerName: "docs-server", ServerVersion: "1.0"}}
			s.Records[i] = &cp
		}
	}
	f := &fixture{runs: &atomic.Int64{}, prov: &script{answers: cleanAnswers()}}
	rep, err := Replay(context.Background(), Options{Session: s, Providers: only(f.prov), Mode: ModeStop, Recorder: f,
		Tools: f.tools("fs_read", "fs_write"),
		MCPServers: func([]string) []transcript.MCPServer {
			return []transcript.MCPServer{{Name: "docs", Transport: "stdio", ServerName: "docs-server", ServerVersion: "2.0"}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`MCP server "docs" was docs-server 1.0 when recorded and is docs-server 2.0 today; the recorded results are replayed as they were`}
	if !slices.Equal(rep.Notes, want) {
		t.Errorf("notes %q, want %q", rep.Notes, want)
	}
}

// TestReplayRefusalNamesTheTarget: a refused replay's report still says
// which provider and model it would have run.
func TestReplayRefusalNamesTheTarget(t *testing.T) {
	t.Parallel()
	f := &fixture{prov: &script{}, runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{Session: recording(), Providers: only(f.prov), Mode: ModeStop,
		Override: Override{Model: "new-model"}, Tools: f.tools("fs_read")})
	if err == nil || rep.Status != StatusRefused {
		t.Fatalf("%+v, %v", rep, err)
	}
	if rep.Provider != "fake" || rep.Model != "new-model" {
		t.Errorf("refused report's target: %q %q, want fake new-model", rep.Provider, rep.Model)
	}
}

// syncFails is a recorder whose fsync fails.
type syncFails struct{ *fixture }

var errSync = errors.New("sync failed (injected)")

func (syncFails) Sync() error { return errSync }

// TestReplayReportsAFailedSync: a replay whose recording cannot be synced
// fails, saying so, instead of reporting a recording that is not on disk.
func TestReplayReportsAFailedSync(t *testing.T) {
	t.Parallel()
	f := &fixture{runs: &atomic.Int64{}, prov: &script{answers: cleanAnswers()}}
	_, err := Replay(context.Background(), Options{Session: recording(), Providers: only(f.prov), Mode: ModeStop,
		Recorder: syncFails{f}, Tools: f.tools("fs_read", "fs_write")})
	if !errors.Is(err, errSync) || !strings.Contains(err.Error(), "recording failed") {
		t.Errorf("Replay = %v, want the failed sync", err)
	}
}

// TestReplayFailingMidwayReportsWhatRan: a replay whose model fails in the
// second attach still reports the calls of the first it replayed, beside
// the error.
func TestReplayFailingMidwayReportsWhatRan(t *testing.T) {
	t.Parallel()
	rep, _, err := run(t, ModeStop, cleanAnswers()[:2]...) // the second attach finds the script exhausted
	if err == nil || !strings.Contains(err.Error(), "script exhausted") {
		t.Fatalf("Replay = %v, want the model's failure", err)
	}
	if rep.CallsReplayed != 2 || len(rep.Replayed) == 0 {
		t.Errorf("report of a failed replay: replayed %d calls, %d steps; want 2 and the steps", rep.CallsReplayed, len(rep.Replayed))
	}
}
