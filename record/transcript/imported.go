package transcript

import (
	"fmt"
	"sort"
	"strings"
)

// Reasons an entry of another harness's transcript was not imported: the
// keys of ImportedFrom.Skipped. Every entry (every non-empty line) of a
// source is either imported or counted under one of them.
const (
	// SkipBookkeeping: lines that carry no conversation (Claude Code's
	// progress lines, file snapshots, titles and queue operations; Codex's
	// events, which echo the items or report progress).
	SkipBookkeeping = "bookkeeping"
	// SkipNotUnderstood: not JSON (a torn last line), of a type not known,
	// or of a known type in a shape not understood.
	SkipNotUnderstood = "not_understood"
	// SkipOffBranch: on a branch the conversation left (a rewind edits an
	// earlier prompt and leaves the old branch in the file), or linked to
	// nothing in the conversation.
	SkipOffBranch = "off_branch"
	// SkipInjected: context the harness put in the user's turn rather
	// than the user typing it (Claude Code's isMeta entries; Codex's
	// environment context, instructions and developer messages).
	SkipInjected = "injected"
	// SkipCommand: slash-command wrappers (<command-name>) and the output
	// of local commands, which the harness ran itself.
	SkipCommand = "command"
	// SkipReasoning: Codex reasoning items, summaries of hidden (often
	// encrypted) reasoning that nothing can send back.
	SkipReasoning = "reasoning"
	// SkipServerTool: a call the model's server ran (Codex's web search),
	// which no mecha tool answers.
	SkipServerTool = "server_tool"
	// SkipSidechain: a sub-agent's entries that could not be joined to the
	// call that started it.
	SkipSidechain = "sidechain"
	// SkipDuplicate: a block written twice (a response replayed at a
	// compaction repeats its entries under new uuids).
	SkipDuplicate = "duplicate"
)

// skipOrder is the order reasons are described in: losses first.
var skipOrder = []string{SkipOffBranch, SkipSidechain, SkipNotUnderstood, SkipServerTool, SkipDuplicate,
	SkipInjected, SkipCommand, SkipReasoning, SkipBookkeeping}

// SkippedTotal counts the source entries not imported.
func (f *ImportedFrom) SkippedTotal() int {
	n := 0
	for _, k := range f.Skipped {
		n += k
	}
	return n
}

// DescribeSkipped says what was not imported, reason by reason, losses
// first ("3 off branch, 2 bookkeeping"); "" when nothing was skipped.
// Reasons this build does not know follow, by name.
func DescribeSkipped(skipped map[string]int) string {
	var parts, rest []string
	word := func(r string, n int) string { return fmt.Sprintf("%d %s", n, strings.ReplaceAll(r, "_", " ")) }
	known := map[string]bool{}
	for _, r := range skipOrder {
		known[r] = true
		if n := skipped[r]; n > 0 {
			parts = append(parts, word(r, n))
		}
	}
	for r, n := range skipped {
		if !known[r] && n > 0 {
			rest = append(rest, word(r, n))
		}
	}
	sort.Strings(rest)
	return strings.Join(append(parts, rest...), ", ")
}

// SkippedWords says how many of the source's entries were not imported,
// and why: "6 of the 19 source entries: 3 off branch, ...", "none of the
// 19 source entries"; "" for a session imported before the count was
// recorded.
func (f *ImportedFrom) SkippedWords() string {
	if f.Entries <= 0 {
		return ""
	}
	n := f.SkippedTotal()
	if n == 0 {
		return fmt.Sprintf("none of the %d source entries", f.Entries)
	}
	return fmt.Sprintf("%d of the %d source entries: %s", n, f.Entries, DescribeSkipped(f.Skipped))
}
