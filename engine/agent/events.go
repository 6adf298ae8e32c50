package agent

import (
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Kinds of Event.
const (
	// EventDelta is a piece of the model's text or thinking as it streams.
	// A retried request streams again from its start.
	EventDelta = "delta"
	// EventMessage is a message just recorded: the task, an answer, the
	// results of a turn's calls (with any steering beside them).
	EventMessage = "message"
	// EventToolStart is a call about to run; EventToolDone its result.
	EventToolStart = "tool_start"
	EventToolDone  = "tool_done"
	// EventTurn is a model answer received: Usage is the run's so far,
	// StopReason the answer's own.
	EventTurn = "turn"
	// EventCompaction is a compaction just recorded: Compaction is its
	// record, Replaced the messages of the context it replaced, Usage the
	// run's so far (the summary's included).
	EventCompaction = "compaction"
)

// Event is something a run did, for whoever watches it as it happens: the
// interactive mode, "mecha run --stream-json", the terminal's stream.
// Only the fields of its Kind are set.
type Event struct {
	Kind  string
	Delta provider.Delta
	// Message and Index (its position among the session's messages) for
	// EventMessage.
	Message *transcript.Message
	Index   int
	// Call for EventToolStart and EventToolDone; Result and Took for
	// EventToolDone.
	Call   *transcript.Block
	Result *tool.Result
	Took   time.Duration
	// Usage and StopReason for EventTurn.
	Usage      transcript.Usage
	StopReason string
	// Compaction and Replaced for EventCompaction.
	Compaction *transcript.Compaction
	Replaced   int
}

// emit hands e to Options.OnEvent, one event at a time: tool events come
// from the goroutines that run calls, and a watcher need not lock.
func (r *run) emit(e Event) {
	if r.opts.OnEvent == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.opts.OnEvent(e)
}

// steering returns the text blocks a person sent while the calls of this
// turn ran (Options.Steer), to ride beside their results.
func (r *run) steering() []transcript.Block {
	if r.opts.Steer == nil {
		return nil
	}
	var blocks []transcript.Block
	for _, s := range r.opts.Steer() {
		if s != "" {
			blocks = append(blocks, transcript.TextBlock(s))
		}
	}
	return blocks
}
