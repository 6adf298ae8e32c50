package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// recordedGreeting is a recorded session of one tool-less turn, whose
// workspace is gone.
func recordedGreeting(t *testing.T) *session.Session {
	gone := filepath.Join(t.TempDir(), "gone")
	return &session.Session{Meta: transcript.Meta{ID: "20260101T000000-0000abcd", Title: "greet", Workspace: gone}, Records: []transcript.Record{
		&transcript.Config{Provider: "mock", Model: "mock-1", Workspace: gone, Tools: []string{}, PermissionMode: string(tool.ModeAsk),
			MaxTurns: 5, MaxTokens: 100, CompactKeepRecent: 6},
		&transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("hello")}},
		&transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{transcript.TextBlock("hi")}},
	}}
}

func replayWorld(t *testing.T) (*World, string) {
	home := t.TempDir()
	env := map[string]string{"MECHA_HOME": home}
	return &World{Getenv: func(k string) string { return env[k] }, Version: "test"}, filepath.Join(home, "sessions")
}

// TestReplayDoor: a replay door replays the recorded turns on a stand-in
// for a workspace that is gone (removed when the door closes), with the
// permission mode asked for, and records the replay as a session naming
// the one it replays, with the recorded workspace and the first turn's
// provider and model in its header.
func TestReplayDoor(t *testing.T) {
	t.Parallel()
	w, dir := replayWorld(t)
	of := recordedGreeting(t)
	s := DefaultSettings()
	s.Provider, s.Yes = "", true
	d, err := OpenReplay(context.Background(), w, Attach{Settings: s}, Replayed{Session: of, Mode: replay.ModeStop})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.Replay(context.Background(), nil)
	if err != nil || rep.Status != replay.StatusClean || rep.Replay == "" {
		t.Fatalf("%+v, %v", rep, err)
	}
	standIn := d.replay.standIn
	if _, err := os.Stat(standIn); standIn == "" || err != nil {
		t.Errorf("stand-in %q: %v", standIn, err)
	}
	d.Close()
	if _, err := os.Stat(standIn); !os.IsNotExist(err) {
		t.Errorf("the stand-in outlived the door: %v", err)
	}
	got, err := store(dir).Load(session.Ref{Dir: dir, ID: rep.Replay})
	if err != nil {
		t.Fatal(err)
	}
	m := got.Meta
	if m.ReplayOf != of.Meta.ID || m.Workspace != of.Meta.Workspace || m.Title != "replay of "+of.Meta.ID+": greet" ||
		m.Provider != "mock" || m.Model != "mock-1" {
		t.Errorf("header %+v", m)
	}
	if cs := got.Configs(); len(cs) != 1 || cs[0].PermissionMode != string(tool.ModeYes) || cs[0].MechaVersion != "test" {
		t.Errorf("configs %+v", cs)
	}
}

// TestLiveReplayNeedsTheWorkspace: a live replay runs calls for real, so
// a recorded workspace that is gone is an error (unless -w gives one).
func TestLiveReplayNeedsTheWorkspace(t *testing.T) {
	t.Parallel()
	w, _ := replayWorld(t)
	s := DefaultSettings()
	s.Provider = ""
	_, err := OpenReplay(context.Background(), w, Attach{Settings: s}, Replayed{Session: recordedGreeting(t), Mode: replay.ModeLive})
	if err == nil || !strings.Contains(err.Error(), "the recorded workspace is gone (give one with -w for a live replay)") {
		t.Fatalf("err %v", err)
	}
	s.Workspace = t.TempDir()
	d, err := OpenReplay(context.Background(), w, Attach{Settings: s, NoSession: true}, Replayed{Session: recordedGreeting(t), Mode: replay.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if rep, err := d.Replay(context.Background(), nil); err != nil || rep.Replay != "" {
		t.Errorf("%+v, %v: want a replay recorded nowhere", rep, err)
	}
}

// TestReplaySystemPromptFile: --system-prompt-file replaces the recorded
// prompt, is recorded in the replay's config and reported as a change; a
// file that cannot be read fails the door before anything starts.
func TestReplaySystemPromptFile(t *testing.T) {
	t.Parallel()
	w, dir := replayWorld(t)
	of := recordedGreeting(t)
	prompt := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(prompt, []byte("Be terse."), 0o600); err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings()
	s.Provider, s.SystemPromptFile = "", prompt
	d, err := OpenReplay(context.Background(), w, Attach{Settings: s}, Replayed{Session: of, Mode: replay.ModeStop})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rep, err := d.Replay(context.Background(), nil)
	if err != nil || len(rep.RequestChanges) != 1 || rep.RequestChanges[0].Field != replay.FieldSystemPrompt {
		t.Fatalf("%+v, %v", rep, err)
	}
	got, err := session.Load(filepath.Join(dir, rep.Replay+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if cs := got.Configs(); len(cs) != 1 || cs[0].SystemPrompt == nil || *cs[0].SystemPrompt != "Be terse." {
		t.Errorf("configs %+v", cs)
	}
	s.SystemPromptFile = filepath.Join(t.TempDir(), "none.txt")
	if _, err := OpenReplay(context.Background(), w, Attach{Settings: s}, Replayed{Session: of, Mode: replay.ModeStop}); err == nil ||
		!strings.HasPrefix(err.Error(), "--system-prompt-file: ") {
		t.Errorf("err %v", err)
	}
}
