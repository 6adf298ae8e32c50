package replay

import (
	"encoding/json"
	"errors"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ErrNoConfig means a session has no config record: without the settings
// it ran under, a replay would answer a different question.
var ErrNoConfig = errors.New("replay: the session has no config record, so the run it recorded cannot be rebuilt (it predates config records or was not written by mecha run)")

// Call is one recorded tool call with its recorded result.
type Call struct {
	ID    string          `json:"-"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Result is the recorded result; HasResult is false when the session
	// ended before the call's result was recorded, including when a resume
	// answered it with a made-up "outcome unknown" result (see isRecordedResult).
	Result    string `json:"-"`
	IsError   bool   `json:"-"`
	HasResult bool   `json:"-"`
	// Taint is the recording's taint once the call was answered: the
	// checkpoint covering the message that made it, merged with every
	// earlier one; private and untrusted both when none covers it
	// (unknown provenance is never clean). A replay that gives the
	// recorded result back brings that much into its conversation.
	Taint transcript.Taint `json:"-"`
}

// Turn is one thing the person said and what the run did about it.
type Turn struct {
	Prompt string
	// Images are the image blocks the prompt attached (their bytes are in
	// the blob store, loaded by the provider the replay is given), sent
	// after its text as they were.
	Images []transcript.Block
	// Config is the configuration of the attach the turn was sent in.
	Config *transcript.Config
	// Calls are the tool calls of the turn, in the order the model made them.
	Calls []Call
	// Text is the turn's last assistant text.
	Text string
}

// Trajectory is a transcript reduced to what a replay re-drives.
type Trajectory struct {
	Turns []Turn
	// Steered is true when the person added text beside tool results, which
	// a replay cannot re-inject at the same point.
	Steered bool
	// Text is the final assistant text of the session.
	Text string
}

// Calls returns every call of every turn, in order.
func (t *Trajectory) Calls() []Call {
	var out []Call
	for _, turn := range t.Turns {
		out = append(out, turn.Calls...)
	}
	return out
}

// Extract reduces a session to its trajectory. A user message that carries
// tool results is the harness feeding results back, not a turn; text in
// such a message is steering. Calls and their results are paired by
// sessionview (by id, because parallel calls are answered in no promised
// order), the one place that pairs them.
func Extract(s *session.Session) (*Trajectory, error) {
	t := &Trajectory{}
	var cfg *transcript.Config
	timeline := s.TaintTimeline()
	_, err := sessionview.Walk(s, nil, func(it sessionview.Item) error {
		switch it := it.(type) {
		case *sessionview.Attach:
			cfg = it.Config
		case *sessionview.User:
			text := it.Text()
			switch {
			case it.Results:
				t.Steered = t.Steered || text != ""
			case text == "":
			case cfg == nil:
				return ErrNoConfig
			default:
				var images []transcript.Block
				for _, b := range it.Message.Content {
					if b.Type == transcript.BlockImage {
						images = append(images, b)
					}
				}
				t.Turns = append(t.Turns, Turn{Prompt: text, Images: images, Config: cfg})
			}
		case *sessionview.Reply:
			if len(t.Turns) == 0 {
				return nil // an answer to nothing we can replay
			}
			cur := &t.Turns[len(t.Turns)-1]
			taint := transcript.Taint{Private: true, Untrusted: true}
			if it.Index < len(timeline) && timeline[it.Index].Known {
				taint = timeline[it.Index].Taint
			}
			for _, c := range it.Calls {
				call := Call{ID: c.ID, Name: c.Name, Input: c.Input, Taint: taint}
				if r := c.Result; r != nil && !r.OutcomeUnknown {
					call.Result, call.IsError, call.HasResult = r.Content, r.IsError, true
				}
				cur.Calls = append(cur.Calls, call)
			}
			if txt := transcript.TextOf(it.Message.Content); txt != "" {
				cur.Text = txt
				t.Text = txt
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, ErrNoConfig
	}
	return t, nil
}
