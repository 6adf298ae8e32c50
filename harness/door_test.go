package harness

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// testWorld is a World on a fresh home whose kernel enforces no sandbox
// (the shell runs unconfined, with a note), and a fixed clock.
func testWorld(t *testing.T) (*World, string) {
	t.Helper()
	home := t.TempDir()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	return &World{
		Getenv:         func(k string) string { return map[string]string{"MECHA_HOME": home}[k] },
		Now:            func() time.Time { return at },
		SandboxSupport: func() sandbox.Support { return sandbox.Support{} },
		Err:            io.Discard,
	}, filepath.Join(home, "sessions")
}

func testSettings(t *testing.T) Settings {
	s := DefaultSettings()
	s.Workspace = t.TempDir()
	s.Yes = true
	return s
}

// store is the store of sessions in dir.
func store(dir string) *session.Store { return &session.Store{Dir: dir} }

func sessions(t *testing.T, dir string) []session.Info {
	t.Helper()
	l, err := store(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	return l.Sessions
}

// TestDoorRecordsAndHolds: a prompt through a new door creates the session
// with the attach's meta and config record, and the door holds the
// session's lock from then until Close.
func TestDoorRecordsAndHolds(t *testing.T) {
	t.Parallel()
	w, dir := testWorld(t)
	d, err := Open(context.Background(), w, Attach{Settings: testSettings(t), Meta: transcript.Meta{Title: "a title"}})
	if err != nil {
		t.Fatal(err)
	}
	att, err := d.Run(context.Background(), Prompt{Text: "list the files"})
	if err != nil {
		t.Fatal(err)
	}
	got := sessions(t, dir)
	if len(got) != 1 || got[0].Meta.Title != "a title" || got[0].Meta.Provider != "mock" || att.Session != got[0].Ref {
		t.Fatalf("sessions %+v, attached %+v", got, att)
	}
	st := store(dir)
	if _, err := st.Acquire(got[0].Ref); err == nil {
		t.Error("a second writer took the session while the door held it")
	}
	s, err := st.Load(got[0].Ref)
	if err != nil || len(s.Configs()) != 1 || len(s.Messages()) < 2 {
		t.Fatalf("recorded %v: %d configs, %d messages", err, len(s.Configs()), len(s.Messages()))
	}
	// A second prompt appends a second attach to the same session.
	if _, err := d.Run(context.Background(), Prompt{Text: "again"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Load(got[0].Ref); len(s.Configs()) != 2 {
		t.Errorf("a second prompt recorded %d attaches", len(s.Configs()))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	lock, err := st.Acquire(got[0].Ref)
	if err != nil {
		t.Fatalf("the session stayed held after Close: %v", err)
	}
	lock.Release()
}

// TestDoorResumeIsHeldOnce: a door opened on a session holds it, so a
// second door on the same session is refused at Open.
func TestDoorResumeIsHeldOnce(t *testing.T) {
	t.Parallel()
	w, dir := testWorld(t)
	if _, err := Run(context.Background(), w, Attach{Settings: testSettings(t)}, Prompt{Text: "first"}); err != nil {
		t.Fatal(err)
	}
	ref := sessions(t, dir)[0].Ref
	a := Attach{Settings: DefaultSettings(), Resume: ref}
	d, err := Open(context.Background(), w, a)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Resumed() == nil || d.Resumed().Path != ref.Path() || d.Session() != ref {
		t.Fatalf("resumed %+v", d.Resumed())
	}
	if _, err := Open(context.Background(), w, a); err == nil {
		t.Error("a second door opened on a held session")
	}
}

// TestDoorRefusedLeavesNothing: a prompt refused before the loop starts
// (an unknown provider, a --no-session run) leaves no session behind.
func TestDoorRefusedLeavesNothing(t *testing.T) {
	t.Parallel()
	w, dir := testWorld(t)
	s := testSettings(t)
	s.Provider, s.Given = "nowhere", func(n string) bool { return n == "provider" }
	var usage *UsageError
	if _, err := Run(context.Background(), w, Attach{Settings: s}, Prompt{Text: "x"}); !errors.As(err, &usage) {
		t.Errorf("an unknown provider: %v, want a usage error", err)
	}
	if _, err := Run(context.Background(), w, Attach{Settings: testSettings(t), NoSession: true}, Prompt{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if got := sessions(t, dir); len(got) != 0 {
		t.Errorf("left %d sessions", len(got))
	}
}

// TestDoorSwitchAndUpdate: Switch to no session lets go of the session and the next
// prompt starts a new one; Update changes the next attach's settings.
func TestDoorSwitchAndUpdate(t *testing.T) {
	t.Parallel()
	w, dir := testWorld(t)
	d, err := Open(context.Background(), w, Attach{Settings: testSettings(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Run(context.Background(), Prompt{Text: "one"}); err != nil {
		t.Fatal(err)
	}
	first := d.Session()
	if err := d.Switch(session.Ref{}); err != nil {
		t.Fatal(err)
	}
	if !d.Session().IsZero() {
		t.Errorf("after Switch to none, the door names %+v", d.Session())
	}
	lock, err := store(dir).Acquire(first)
	if err != nil {
		t.Fatalf("the first session stayed held after Switch: %v", err)
	}
	lock.Release()
	if err := d.Update(func(s *Settings) { s.Model, s.Given = "mock-2", func(n string) bool { return n == "model" } }); err != nil {
		t.Fatal(err)
	}
	att, err := d.Run(context.Background(), Prompt{Text: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if second := d.Session(); second == first || att.Session != second || att.Config.Model != "mock-2" {
		t.Errorf("after Switch and Update: session %s (first %s), model %q", second.ID, first.ID, att.Config.Model)
	}
	if len(sessions(t, dir)) != 2 {
		t.Errorf("%d sessions, want 2", len(sessions(t, dir)))
	}
	if err := d.Update(func(s *Settings) { s.MaxTurns = 0 }); err == nil {
		t.Error("Update took settings that cannot be")
	}
}

// TestDoorOpensNoWorkspaceThatIsGone: a resumed session whose workspace is
// gone cannot be opened without another.
func TestDoorOpensNoWorkspaceThatIsGone(t *testing.T) {
	t.Parallel()
	w, dir := testWorld(t)
	s := testSettings(t)
	if _, err := Run(context.Background(), w, Attach{Settings: s}, Prompt{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(s.Workspace); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), w, Attach{Settings: DefaultSettings(), Resume: sessions(t, dir)[0].Ref}); err == nil {
		t.Error("opened a session whose workspace is gone")
	}
}

// Run opens an attach, runs one prompt through it and closes it, as mecha
// run does.
func Run(ctx context.Context, w *World, a Attach, p Prompt) (*Attached, error) {
	d, err := Open(ctx, w, a)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Run(ctx, p)
}
