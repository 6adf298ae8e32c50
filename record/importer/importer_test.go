package importer

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/toolreplay"
)

// fixture returns the one file of testdata/NAME.txtar.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != 1 {
		t.Fatalf("%s: %d files", name, len(a.Files))
	}
	return a.Files[0].Data
}

func TestClaudeCode(t *testing.T) {
	c, err := Parse(ClaudeCode, fixture(t, "claude-code"))
	if err != nil {
		t.Fatal(err)
	}
	want := `--- user
text list the go files and read main.go
--- assistant
text I'll look.
use toolu_01 shell {"command":"find '.' -path './*.go' -type f"}
use toolu_02 fs_read {"path":"main.go"}
--- user
result toolu_01: ./main.go
result toolu_02: package main

func main() { println("hello") }
--- assistant
text main.go prints hello.
--- user
text write NOTES.md saying hello
--- assistant
use toolu_04 fs_write {"content":"hello\n","path":"NOTES.md"}
--- user
result toolu_04: File created successfully at: NOTES.md
--- assistant
use toolu_05 shell {"command":"cat NOTES.md","timeout_seconds":5}
--- user
result toolu_05: hello
--- assistant
text Wrote NOTES.md.
`
	if got := shape(c); got != want {
		t.Errorf("conversation:\n%s\nwant (the last branch, parallel calls rejoined):\n%s", got, want)
	}
	if c.Model != "claude-sonnet-4-20250514" || c.Workspace != "/w" || c.Provider != "anthropic" {
		t.Errorf("model %q workspace %q provider %q", c.Model, c.Workspace, c.Provider)
	}
	if strings.Join(c.Tools, ",") != "shell,fs_read,fs_write" {
		t.Errorf("tools %v", c.Tools)
	}
	if strings.Join(c.Approximate, ",") != "toolu_01" {
		t.Errorf("approximate %v, want the Glob", c.Approximate)
	}
	// Usage once per response on the branch: msg_01 (counted once), 02, 04, 05, 06.
	want2 := transcript.Usage{InputTokens: 10 + 5 + 6 + 6 + 4, OutputTokens: 30 + 8 + 12 + 10 + 6,
		CacheReadTokens: 200 + 220 + 240 + 260, CacheWriteTokens: 200}
	if c.Usage != want2 || c.Turns != 5 {
		t.Errorf("usage %+v turns %d, want %+v and 5", c.Usage, c.Turns, want2)
	}
	// The abandoned branch, the summary line and the queue operation
	// (bookkeeping), the torn line.
	if want := map[string]int{"off_branch": 3, "bookkeeping": 2, "not_understood": 1}; !maps.Equal(c.Skipped, want) || c.Entries != 19 {
		t.Errorf("%d entries, skipped %v (lines %v), want 19 and %v", c.Entries, c.Skipped, c.SkippedLines, want)
	}
	if c.Title != "list the go files and read main.go" {
		t.Errorf("title %q", c.Title)
	}
}

func TestCodex(t *testing.T) {
	c, err := Parse(Codex, fixture(t, "codex"))
	if err != nil {
		t.Fatal(err)
	}
	want := `--- user
text fix the greeting in hello.txt
--- assistant
use call_1 shell {"command":"cat hello.txt"}
use call_2 shell {"command":"cd '/w/sub' \u0026\u0026 'ls' '-1'","timeout_seconds":10}
--- user
result call_1: helo
result call_2 (error): ls: cannot access: No such file
--- assistant
use call_3 apply_patch {"input":"*** Begin Patch\n*** Update File: hello.txt\n@@\n-helo\n+hello\n*** End Patch\n"}
--- user
result call_3: Success. Updated the following files:
M hello.txt
--- assistant
text Fixed the greeting.
--- compaction of 6: The user asked to fix hello.txt; it was fixed.
--- user
text thanks
`
	if got := shape(c); got != want {
		t.Errorf("conversation:\n%s\nwant:\n%s", got, want)
	}
	if c.Model != "gpt-5-codex" || c.Workspace != "/w" {
		t.Errorf("model %q workspace %q", c.Model, c.Workspace)
	}
	if strings.Join(c.Approximate, ",") != "call_2,call_3" {
		t.Errorf("approximate %v", c.Approximate)
	}
	if c.Usage != (transcript.Usage{InputTokens: 400, CacheReadTokens: 2200, OutputTokens: 140}) {
		t.Errorf("usage %+v", c.Usage)
	}
	// The environment context, the reasoning, two events echoing items,
	// the unknown type and the torn line.
	want2 := map[string]int{"injected": 1, "reasoning": 1, "bookkeeping": 2, "not_understood": 2}
	if !maps.Equal(c.Skipped, want2) || !slices.Equal(c.SkippedLines, []int{14, 20}) {
		t.Errorf("skipped %v (lines %v), want %v (lines 14, 20)", c.Skipped, c.SkippedLines, want2)
	}
}

func TestFileIsIdempotentAndArmed(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(src, fixture(t, "claude-code"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := &session.Store{Dir: filepath.Join(dir, "sessions")}
	dry, err := File(store, ClaudeCode, src, true)
	if err != nil || dry.Status != WouldImport {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if _, err := os.Stat(store.Dir); err == nil {
		if ents, _ := os.ReadDir(store.Dir); len(ents) > 0 {
			t.Fatalf("the dry run wrote %v", ents)
		}
	}
	first, err := File(store, ClaudeCode, src, false)
	if err != nil || first.Status != Imported || first.ID != dry.ID {
		t.Fatalf("first: %+v %v (dry %s)", first, err, dry.ID)
	}
	again, err := File(store, ClaudeCode, src, false)
	if err != nil || again.Status != AlreadyImported || again.ID != first.ID {
		t.Fatalf("again: %+v %v", again, err)
	}
	ents, _ := filepath.Glob(filepath.Join(store.Dir, "*.jsonl"))
	if len(ents) != 1 {
		t.Fatalf("sessions %v", ents)
	}
	s, err := session.Load(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Meta.ImportedFrom; f == nil || f.Harness != ClaudeCode || f.Path != src {
		t.Fatalf("imported_from %+v", s.Meta.ImportedFrom)
	}
	var cfg *transcript.Config
	var taint *transcript.Taint
	var sum *transcript.Summary
	for _, r := range s.Records {
		switch r := r.(type) {
		case *transcript.Config:
			cfg = r
		case *transcript.Taint:
			taint = r
		case *transcript.Summary:
			sum = r
		}
	}
	if cfg == nil || cfg.Model != "claude-sonnet-4-20250514" || cfg.SystemPrompt != nil || cfg.Temperature != nil || len(cfg.Tools) != 3 {
		t.Fatalf("config %+v", cfg)
	}
	if taint == nil || !taint.Private || !taint.Untrusted {
		t.Fatalf("taint %+v: imported content must be armed", taint)
	}
	if sum == nil || sum.Usage.OutputTokens != 66 || sum.SessionTurns == nil || *sum.SessionTurns != sum.Turns {
		t.Fatalf("summary %+v", sum)
	}
	raw, _ := os.ReadFile(ents[0])
	if !strings.Contains(string(raw), `"system_prompt":null`) || !strings.Contains(string(raw), `"max_tokens":null`) {
		t.Errorf("the config does not say null for what the source did not record:\n%s", raw)
	}
	// The Glob mapped onto a shell command makes the calls reconstructed.
	calls, err := toolreplay.Extract(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	if calls.Source != toolreplay.SourceReconstructed || len(calls.Gaps) != 1 || !strings.Contains(calls.Gaps[0].Reason, "approximately") {
		t.Fatalf("source %s gaps %+v", calls.Source, calls.Gaps)
	}
}

func TestTolerant(t *testing.T) {
	for _, h := range []string{ClaudeCode, Codex} {
		c, err := Parse(h, []byte("not json\n{}\n[1,2]\n{\"type\":\"user\"}\n\x00\x01\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Messages) != 0 || c.SkippedTotal() != 5 {
			t.Errorf("%s: %d messages, %v skipped (want 0, 5)", h, len(c.Messages), c.Skipped)
		}
	}
	if _, err := Parse("aider", nil); err == nil {
		t.Error("an unknown harness parsed")
	}
}

// A /compact leaves a system entry with no parentUuid whose
// logicalParentUuid points back: the branch goes on through it (the
// boundary with no summary after it is a compaction whose summary is not
// known). Sidechain (sub-agent) entries are never the last entry.
func TestClaudeCodeCompactBoundaryAndSidechain(t *testing.T) {
	data := `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"first"},"timestamp":"2025-07-10T10:00:00Z"}
{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","content":[{"type":"text","text":"one"}],"usage":{"input_tokens":1,"output_tokens":2}},"timestamp":"2025-07-10T10:00:01Z"}
{"type":"system","subtype":"compact_boundary","uuid":"s1","parentUuid":null,"logicalParentUuid":"a1","content":"Conversation compacted","timestamp":"2025-07-10T10:01:00Z"}
{"type":"user","uuid":"u2","parentUuid":"s1","message":{"role":"user","content":"second"},"timestamp":"2025-07-10T10:01:01Z"}
{"type":"assistant","uuid":"a2","parentUuid":"u2","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"usage":{"input_tokens":3,"output_tokens":4}},"timestamp":"2025-07-10T10:01:02Z"}
{"type":"assistant","uuid":"x1","parentUuid":"a2","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"sub-agent"}]},"timestamp":"2025-07-10T10:01:03Z"}
`
	c, err := Parse(ClaudeCode, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := "--- user\ntext first\n--- assistant\ntext one\n--- compaction of 2: \n--- user\ntext second\n--- assistant\ntext two\n"
	if got := shape(c); got != want {
		t.Errorf("conversation:\n%s\nwant:\n%s", got, want)
	}
	if c.Usage != (transcript.Usage{InputTokens: 4, OutputTokens: 6}) || !maps.Equal(c.Skipped, map[string]int{"sidechain": 1}) {
		t.Errorf("usage %+v skipped %v", c.Usage, c.Skipped)
	}
}
