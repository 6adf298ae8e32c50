package harness

import (
	"fmt"
	"os"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// record prepares what a prompt's run records into: the door's session or
// a new one, or nothing (nil) with NoSession. Nothing is created or
// appended until the run records its first record: the session is created
// (or the held one opened) and the attach's config record (rc, as it stands
// then) appended first, so a run refused before it starts leaves no empty
// session and no empty attach behind.
func (d *Door) record(rc *transcript.Config, text string) *session.Lazy {
	if d.attach.NoSession {
		d.note("session: none (--no-session)")
		return nil
	}
	return &session.Lazy{Open: func(transcript.Record) (*session.Writer, error) {
		return d.startRecord(rc, text, "")
	}}
}

func (d *Door) note(format string, args ...any) {
	if !d.attach.Quiet {
		fmt.Fprintf(d.world.errw(), format+"\n", args...)
	}
}

// startRecord opens the held session or creates a new one, and appends
// the attach's config record; says, when set, is what the note naming the
// session says it does ("reflects on ID").
func (d *Door) startRecord(rc *transcript.Config, text, says string) (*session.Writer, error) {
	var (
		w   *session.Writer
		err error
	)
	if d.prev != nil {
		w, err = d.openHeld()
	} else {
		w, err = d.create(rc, text)
	}
	if err != nil {
		return nil, err
	}
	// Turn boundaries fsync without holding up the next model call; Close
	// waits for the last one.
	w.SyncInBackground()
	if says != "" {
		says = " " + says
	}
	d.note("session: %s%s (%s/%s)", w.ID(), says, rc.Provider, rc.Model)
	rc.At = d.world.now().UTC()
	if err := w.Append(rc); err != nil {
		w.Close()
		if d.prev == nil { // nothing but its header: no session to keep
			os.Remove(w.Path())
		}
		return nil, err
	}
	return w, nil
}

// create creates the door's new session: the Attach's Meta with the
// attach's provider and model, and its workspace unless the Meta names
// one (a replay's names the replayed session's), titled from the prompt
// when no title is given.
func (d *Door) create(rc *transcript.Config, text string) (*session.Writer, error) {
	store, err := d.world.Store()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	m := d.attach.Meta
	d.mu.Unlock()
	m.Provider, m.Model = rc.Provider, rc.Model
	if m.Workspace == "" {
		m.Workspace = rc.Workspace
	}
	if m.Title == "" {
		m.Title = textfmt.Clip(textfmt.OneLine(text), 80)
	}
	return store.Create(m)
}

// openHeld opens the session the door holds to append to it.
func (d *Door) openHeld() (*session.Writer, error) {
	store, err := d.world.Store()
	if err != nil {
		return nil, err
	}
	return store.OpenWriter(d.ref)
}
