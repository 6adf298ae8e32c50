package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// CompactionInstruction is sent after the messages being compacted.
const CompactionInstruction = `Stop the task for a moment. The conversation so far is about to be replaced by a summary you write now. Write that summary: the task as the user gave it, what has been done, what was found (file names, facts, decisions, results of commands), what remains to do, and anything the user asked for that must not be lost. Do not call any tool; answer with the summary only.`

// maybeCompact replaces older messages with a model-written summary once
// the context has grown past compact_at_tokens, keeping at least the last
// compact_keep_recent messages. The compaction is recorded, so a resume or a
// replay rebuilds exactly the conversation the model saw.
func (r *run) maybeCompact(ctx context.Context) error {
	limit := r.cfg.CompactAtTokens
	if limit == nil || r.lastCtx < *limit {
		return nil
	}
	// The kept part must start with an assistant message, so that the
	// summary (a user message) followed by it alternates, and no tool
	// result is separated from its call.
	cut := len(r.ctx) - max(r.cfg.CompactKeepRecent, 1)
	for cut > 0 && r.ctx[cut].Role != transcript.RoleAssistant {
		cut--
	}
	if cut <= 0 || r.origin[cut] < 0 {
		return nil // nothing old enough to compact
	}
	return r.compact(ctx, cut, "")
}

// ErrNothingToCompact is what a compaction asked for (Options.CompactOnly)
// says of a conversation with nothing before its last answer.
var ErrNothingToCompact = errors.New("nothing to compact yet: the conversation has no earlier messages than its last answer")

// compactNow is a compaction asked for (the chat's /compact): every
// message before the last answer is summarised, whatever the context's
// size, with the person's instructions for the summary. The last answer
// and what follows it are kept, so that the summary and the next prompt
// alternate with them as maybeCompact's do.
func (r *run) compactNow(ctx context.Context) error {
	cut := r.lastAnswer()
	if cut <= 0 {
		return ErrNothingToCompact
	}
	if err := r.compact(ctx, cut, r.opts.CompactInstructions); err != nil {
		return r.failed(ctx, err)
	}
	r.res.StopReason = StopCompacted
	return nil
}

// lastAnswer is the index in the context of the last answer, when a
// compaction asked for may cut there (0 when there is nothing before it,
// or only a summary).
func (r *run) lastAnswer() int {
	cut := len(r.ctx) - 1
	for cut > 0 && r.ctx[cut].Role != transcript.RoleAssistant {
		cut--
	}
	if cut <= 0 || r.origin[cut] < 0 {
		return 0
	}
	return cut
}

// compact replaces the messages of the context before cut with a summary
// the model writes, following instructions when there are some, and
// records the compaction.
func (r *run) compact(ctx context.Context, cut int, instructions string) error {
	old := append([]transcript.Message(nil), r.ctx[:cut]...)
	last := old[len(old)-1]
	ask := CompactionInstruction
	if instructions != "" {
		ask += "\n\nThe user asked for this summary: " + instructions
	}
	last.Content = append(append([]transcript.Block(nil), last.Content...), transcript.TextBlock(ask))
	old[len(old)-1] = last
	req := r.request(old, r.opts.Tools.Specs())
	// The summary is not the conversation: a watcher sees the summary's
	// compaction, not its text streaming as if it were an answer.
	req.OnDelta = nil
	resp, err := r.opts.Provider.Complete(ctx, req)
	if err != nil {
		return fmt.Errorf("agent: compaction: %w", err)
	}
	r.res.Usage = r.res.Usage.Add(resp.Usage)
	if r.opts.Ledger != nil {
		r.opts.Ledger.add(0, resp.Usage)
	}
	summary := transcript.TextOf(resp.Content)
	if summary == "" {
		return errors.New("agent: compaction: the model returned no summary")
	}
	rec := &transcript.Compaction{Replaces: r.origin[cut], Summary: summary, Usage: resp.Usage, At: r.now()}
	if err := r.record(rec); err != nil {
		return err
	}
	r.logf("· compacted %d messages into a summary of %d bytes\n", cut, len(summary))
	r.emit(Event{Kind: EventCompaction, Compaction: rec, Replaced: cut, Usage: r.res.Usage})
	head := transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock(session.CompactedPrefix + summary)}}
	r.ctx = append([]transcript.Message{head}, r.ctx[cut:]...)
	r.origin = append([]int{-1}, r.origin[cut:]...)
	r.lastCtx = 0
	return nil
}
