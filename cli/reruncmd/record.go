package reruncmd

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/toolreplay"
)

// Provider is the provider a rerun session names: no model ran.
const Provider = "rerun"

// recorder writes a rerun as a session: created with its first call (a
// rerun that runs nothing leaves nothing behind), a config record, then one
// tool_call record per call run (a call refused now included: it was
// tried; a call not redone at all never ran and is not recorded).
type recorder struct {
	env *cmdkit.Env
	of  transcript.Meta
	rc  transcript.Config
	w   *session.Writer
	// closed is the id of the session once closed.
	closed string
}

func (r *recorder) open() error {
	store, err := r.env.Store()
	if err != nil {
		return err
	}
	w, err := store.Create(transcript.Meta{Provider: Provider, Workspace: r.rc.Workspace, RerunOf: r.of.ID,
		Title: textfmt.Clip("rerun of "+r.of.ID+": "+textfmt.OneLine(r.of.Title), 100)})
	if err != nil {
		return err
	}
	rc := r.rc
	rc.At = r.env.Clock.Now().UTC()
	if err := w.Append(&rc); err != nil {
		w.Close()
		return err
	}
	r.w = w
	fmt.Fprintf(r.env.Err, "session: %s reruns %s\n", w.ID(), r.of.ID)
	return nil
}

func (r *recorder) record(res toolreplay.Result) error {
	if res.Started.IsZero() { // not run
		return nil
	}
	if r.w == nil {
		if err := r.open(); err != nil {
			return err
		}
	}
	content, err := json.Marshal([]map[string]string{{"type": "text", "text": res.Now.Content}})
	if err != nil {
		return err
	}
	args := res.Input
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return r.w.Append(&transcript.ToolCall{
		ID: json.RawMessage(strconv.Itoa(res.Index)), Tool: res.Name, Arguments: args,
		Content: content, IsError: res.Now.IsError,
		StartedAt: res.Started.UTC(), DurationMS: float64(res.Took.Microseconds()) / 1000,
		At: r.env.Clock.Now().UTC(),
	})
}

func (r *recorder) id() string {
	if r.w == nil {
		return r.closed
	}
	return r.w.ID()
}

func (r *recorder) close() error {
	if r.w == nil {
		return nil
	}
	w := r.w
	r.w = nil
	r.closed = w.ID()
	return w.Close()
}
