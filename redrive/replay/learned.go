package replay

import (
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/learn"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// startHistory is what a replayed attach starts from: the replay's own
// record so far and, as the run did, private when the recorded system
// prompt holds a learned rule marked private, so that a live replay's
// interlock treats the prompt like the data it came from.
func startHistory(prior *session.Session, rc transcript.Config) agent.History {
	h := agent.HistoryOf(prior)
	h.Taint, h.TaintWhy = learn.PromptTaint(h.Taint, h.TaintWhy, rc.SystemPrompt)
	return h
}
