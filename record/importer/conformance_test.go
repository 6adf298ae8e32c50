package importer

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mecha-agent/mecha/record/transcript"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/shapes/*.txtar")

// shapes are the shapes of real transcripts the importers must get
// right, one fixture each (testdata/shapes/NAME.txtar: a comment saying
// which public format it follows, the source file, and the conversation
// and skipped entries wanted).
var shapes = []struct {
	fixture, harness, shape string
}{
	{"cc-parallel", ClaudeCode, "the results of parallel calls hang off their own call's entry, off the chain that ends at the last entry"},
	{"cc-parallel-progress", ClaudeCode, "parallel calls threaded through progress lines (2.1.32+), their results off the chain"},
	{"cc-split-response", ClaudeCode, "one API response split by a tool result written between two of its entries"},
	{"cc-compact-orphan", ClaudeCode, "a compact_boundary with parentUuid null whose logicalParentUuid is not in the file"},
	{"cc-compact-summary", ClaudeCode, "the compaction summary, the /compact wrapper and its output are no prompts"},
	{"cc-meta", ClaudeCode, "isMeta entries (a caveat, a skill's body) and command wrappers are no prompts"},
	{"cc-bookkeeping", ClaudeCode, "progress lines, snapshots, queue operations and titles are bookkeeping, not 'not understood'"},
	{"cc-sidechain", ClaudeCode, "sub-agents' sidechain entries in the file become children of the Task calls that started them"},
	{"cc-rewind", ClaudeCode, "a rewind leaves the abandoned branch in the file: counted, not imported"},
	{"cx-injected", Codex, "user-role context Codex injects (environment, AGENTS.md, a user shell command) and developer messages are no prompts"},
	{"cx-compacted", Codex, "a compacted item (a summary, or a replacement history) is a compaction, not a user message"},
}

func TestShapes(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.fixture, func(t *testing.T) {
			path := filepath.Join("testdata", "shapes", s.fixture+".txtar")
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			src, want := section(t, a, "source.jsonl"), section(t, a, "want")
			c, err := Parse(s.harness, src)
			if err != nil {
				t.Fatal(err)
			}
			got := shape(c) + accounts(c)
			if *update {
				setSection(a, "want", got)
				if err := os.WriteFile(path, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(want) {
				t.Errorf("%s:\n%s\nwant:\n%s", s.shape, got, want)
			}
			fidelity(t, s.harness, src, c)
		})
	}
}

func section(t *testing.T, a *txtar.Archive, name string) []byte {
	t.Helper()
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no %s section", name)
	return nil
}

func setSection(a *txtar.Archive, name, data string) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = []byte(data)
			return
		}
	}
	a.Files = append(a.Files, txtar.File{Name: name, Data: []byte(data)})
}

// accounts says what was skipped, by reason, and what the entries held.
func accounts(c *Conversation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %d entries, %d skipped\n", c.Entries, c.SkippedTotal())
	keys := make([]string, 0, len(c.Skipped))
	for k := range c.Skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "skipped %s: %d", k, c.Skipped[k])
		if u := c.Lost[k]; u != (Units{}) {
			fmt.Fprintf(&b, " (%d prompts, %d responses, %d calls, %d results)", u.Prompts, u.Responses, u.Calls, u.Results)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// fidelity checks that what the source holds, counted here apart from
// the importer, is what the conversation holds plus what was counted as
// skipped with a reason.
func fidelity(t *testing.T, harness string, src []byte, c *Conversation) {
	t.Helper()
	var source Units
	switch harness {
	case ClaudeCode:
		source = countClaudeCode(t, src)
	case Codex:
		source = countCodex(t, src)
	}
	got := c.Held()
	for _, k := range c.Children {
		if k.inFile {
			got = got.add(k.Held())
		}
	}
	for _, u := range c.Lost {
		got = got.add(u)
	}
	if got != source {
		t.Errorf("fidelity: the source holds %+v; imported %+v plus skipped %+v", source, c.Held(), c.Lost)
	}
}

// countClaudeCode counts a Claude Code file's prompts (user entries of
// anything but tool results, and queued commands), responses (distinct
// message ids), calls and results.
func countClaudeCode(t *testing.T, src []byte) Units {
	var u Units
	ids := map[string]bool{}
	for _, line := range bytes.Split(src, []byte("\n")) {
		var e struct {
			Type       string `json:"type"`
			UUID       string `json:"uuid"`
			Attachment *struct {
				Type string `json:"type"`
			} `json:"attachment"`
			Message *struct {
				ID      string          `json:"id"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if e.Type == "attachment" && e.Attachment != nil && e.Attachment.Type == "queued_command" {
			u.Prompts++
		}
		if e.Message == nil || (e.Type != "user" && e.Type != "assistant") {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		var s string
		if json.Unmarshal(e.Message.Content, &s) == nil {
			blocks = append(blocks, struct {
				Type string `json:"type"`
			}{"text"})
		} else {
			json.Unmarshal(e.Message.Content, &blocks)
		}
		results := 0
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				u.Calls++
			case "tool_result":
				results++
			}
		}
		u.Results += results
		switch {
		case e.Type == "assistant":
			id := e.Message.ID
			if id == "" {
				id = e.UUID
			}
			if !ids[id] {
				ids[id] = true
				u.Responses++
			}
		case results == 0 && len(blocks) > 0:
			u.Prompts++
		}
	}
	return u
}

// countCodex counts a Codex rollout's prompts (user-role messages),
// responses (runs of assistant messages and calls, which outputs and
// user messages end), calls and outputs.
func countCodex(t *testing.T, src []byte) Units {
	var u Units
	run := false
	for _, line := range bytes.Split(src, []byte("\n")) {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Role string `json:"role"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil || l.Type != "response_item" {
			continue
		}
		model := false
		switch p := l.Payload; {
		case p.Type == "message" && p.Role == "user":
			u.Prompts++
		case p.Type == "message" && p.Role == "assistant":
			model = true
		case p.Type == "function_call" || p.Type == "custom_tool_call" || p.Type == "local_shell_call":
			u.Calls++
			model = true
		case p.Type == "function_call_output" || p.Type == "custom_tool_call_output":
			u.Results++
		default:
			continue // reasoning and the rest neither start nor end a response
		}
		if model && !run {
			u.Responses++
		}
		run = model
	}
	return u
}

// calls lists "name input" of every tool_use, and "result ID: content" of
// every result, in order, with the role changes as "--- role" and the
// compactions as "--- compaction".
func shape(c *Conversation) string {
	var b strings.Builder
	next := 0
	compaction := func(i int) {
		for ; next < len(c.Compactions) && c.Compactions[next].Before <= i; next++ {
			s, _, _ := strings.Cut(c.Compactions[next].Summary, "\n")
			fmt.Fprintf(&b, "--- compaction of %d: %s\n", c.Compactions[next].Before, s)
		}
	}
	for i, m := range c.Messages {
		compaction(i)
		b.WriteString("--- " + m.Role + "\n")
		for _, bl := range m.Content {
			switch bl.Type {
			case transcript.BlockText:
				b.WriteString("text " + bl.Text + "\n")
			case transcript.BlockToolUse:
				b.WriteString("use " + bl.ID + " " + bl.Name + " " + string(bl.Input) + "\n")
			case transcript.BlockToolResult:
				e := ""
				if bl.IsError {
					e = " (error)"
				}
				b.WriteString("result " + bl.ToolUseID + e + ": " + strings.TrimSpace(bl.Content) + "\n")
			default:
				b.WriteString(bl.Type + "\n")
			}
		}
	}
	compaction(len(c.Messages))
	for _, k := range c.Children {
		fmt.Fprintf(&b, "=== child of %s (agent %s)\n%s", k.CallID, k.AgentID, shape(k))
	}
	return b.String()
}

// The fixtures of the other tests hold what nothing may lose either.
func TestFidelity(t *testing.T) {
	for name, harness := range map[string]string{"claude-code": ClaudeCode, "codex": Codex} {
		src := fixture(t, name)
		c, err := Parse(harness, src)
		if err != nil {
			t.Fatal(err)
		}
		fidelity(t, harness, src, c)
		if got := c.Entries - c.SkippedTotal(); got <= 0 {
			t.Errorf("%s: %d entries, %d skipped", name, c.Entries, c.SkippedTotal())
		}
	}
	a, err := txtar.ParseFile(filepath.Join("testdata", "subagents.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		c, err := Parse(ClaudeCode, f.Data)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(f.Name, func(t *testing.T) { fidelity(t, ClaudeCode, f.Data, c) })
	}
}
