package replay

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/transcript"
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
}

// Turn is one thing the person said and what the run did about it.
type Turn struct {
	Prompt string
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
// such a message is steering. Results are matched to calls by id, because
// parallel calls are answered in no promised order.
func Extract(s *session.Session) (*Trajectory, error) {
	results := map[string]transcript.Block{}
	for _, m := range s.Messages() {
		for _, b := range m.Content {
			if b.Type == transcript.BlockToolResult {
				results[b.ToolUseID] = b
			}
		}
	}
	t := &Trajectory{}
	var cfg *transcript.Config
	var cur *Turn
	for _, r := range s.Records {
		switch r := r.(type) {
		case *transcript.Config:
			cfg = r
		case *transcript.Message:
			switch r.Role {
			case transcript.RoleUser:
				text, hasResults := userText(r)
				if hasResults {
					if text != "" {
						t.Steered = true
					}
					continue
				}
				if text == "" {
					continue
				}
				if cfg == nil {
					return nil, ErrNoConfig
				}
				t.Turns = append(t.Turns, Turn{Prompt: text, Config: cfg})
				cur = &t.Turns[len(t.Turns)-1]
			case transcript.RoleAssistant:
				if cur == nil {
					continue // an answer to nothing we can replay
				}
				for _, b := range r.Content {
					if b.Type != transcript.BlockToolUse {
						continue
					}
					c := Call{ID: b.ID, Name: b.Name, Input: b.Input}
					if res, ok := results[b.ID]; ok && isRecordedResult(res) {
						c.Result, c.IsError, c.HasResult = res.Content, res.IsError, true
					}
					cur.Calls = append(cur.Calls, c)
				}
				if txt := transcript.TextOf(r.Content); txt != "" {
					cur.Text = txt
					t.Text = txt
				}
			}
		}
	}
	if cfg == nil {
		return nil, ErrNoConfig
	}
	return t, nil
}

// legacyNotRun is what builds before transcript.Block.OutcomeUnknown wrote
// for a call a resume found without a result: the same made-up answer,
// which claimed the call had not run.
const legacyNotRun = "not run: the session ended before this call ran"

// isRecordedResult reports whether a tool_result is the call's real result, rather
// than one a resume made up because the result was never recorded.
func isRecordedResult(b transcript.Block) bool {
	return !b.OutcomeUnknown && !(b.IsError && b.Content == legacyNotRun)
}

// userText returns the text of a user message and whether it carries tool
// results.
func userText(m *transcript.Message) (string, bool) {
	var parts []string
	results := false
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		case transcript.BlockToolResult:
			results = true
		}
	}
	return strings.Join(parts, "\n"), results
}
