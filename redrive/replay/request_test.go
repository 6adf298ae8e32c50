package replay

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

func strp(s string) *string { return &s }

func fp(f float64) *float64 { return &f }

// TestRequestChanges: every part that differs, in the report's order:
// the system prompt as a unified diff, the tools offered, each spec, the
// model, the provider, then the settings one by one.
func TestRequestChanges(t *testing.T) {
	t.Parallel()
	rec := &transcript.Config{Provider: "local", Model: "qwen", SystemPrompt: strp("You are mecha.\nBe brief."),
		Temperature: fp(0.2), MaxTokens: 100, ToolSpecs: []transcript.ToolSpec{
			spec("fs_read", "Read a file.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
			spec("fs_edit", "Edit a file.", `{"type":"object"}`),
		}}
	now := &transcript.Config{Provider: "anthropic", Model: "claude", SystemPrompt: strp("You are mecha.\nBe thorough."),
		Temperature: fp(0.2), MaxTokens: 200, ToolSpecs: []transcript.ToolSpec{
			spec("fs_read", "Read a file, whole or in part.", `{"properties":{"path":{"type":"string"}},"type":"object"}`),
			spec("web_fetch", "Fetch a page.", `{"type":"object"}`),
		}}
	changes, prints := requestChanges(2, rec, now)
	var names []string
	for _, c := range changes {
		names = append(names, c.Name())
		if c.Attach != 2 {
			t.Errorf("%s: attach %d", c.Name(), c.Attach)
		}
	}
	if want := []string{"system_prompt", "tools", "tool_spec:fs_read", "model", "provider", "max_tokens"}; !slices.Equal(names, want) {
		t.Fatalf("changes %q, want %q", names, want)
	}
	if d := changes[0].Diff; !strings.Contains(d, "--- recorded\n+++ now\n") || !strings.Contains(d, "-Be brief.\n+Be thorough.\n") {
		t.Errorf("system prompt diff:\n%s", d)
	}
	if c := changes[1]; !slices.Equal(c.Added, []string{"web_fetch"}) || !slices.Equal(c.Removed, []string{"fs_edit"}) {
		t.Errorf("tools: added %q, removed %q", c.Added, c.Removed)
	}
	// The schema differs only in key order: the description alone changed.
	if c := changes[2]; !slices.Equal(c.Changed, []string{SpecDescription}) || !strings.Contains(c.Diff, "-Read a file.\n+Read a file, whole or in part.\n") {
		t.Errorf("spec change %+v", c)
	}
	if c := changes[3]; c.Recorded != "qwen" || c.Now != "claude" {
		t.Errorf("model %+v", c)
	}
	if c := changes[5]; c.Recorded != json.Number("100") || c.Now != json.Number("200") {
		t.Errorf("max_tokens %+v", c)
	}
	if prints.Attach != 2 || prints.Recorded["temperature"] != "" || prints.Recorded["sampling"] != prints.Now["sampling"] ||
		prints.Recorded["tool_spec:fs_read"] == prints.Now["tool_spec:fs_read"] {
		t.Errorf("fingerprints %+v", prints)
	}
}

// TestRequestUnchanged: the same request, laid out differently, is no
// change, and a recording without specs compares no tools.
func TestRequestUnchanged(t *testing.T) {
	t.Parallel()
	rec := &transcript.Config{Provider: "local", Model: "qwen", ToolSpecs: []transcript.ToolSpec{spec("fs_read", "R", `{"type": "object", "required": ["path"]}`)}}
	now := &transcript.Config{Provider: "local", Model: "qwen", ToolSpecs: []transcript.ToolSpec{spec("fs_read", "R", `{"required":["path"],"type":"object"}`)}}
	if changes, prints := requestChanges(1, rec, now); len(changes) != 0 || !equalPrints(prints.Recorded, prints.Now) {
		t.Errorf("changes %+v, fingerprints %+v", changes, prints)
	}
	old := &transcript.Config{Provider: "local", Model: "qwen"}
	if changes, _ := requestChanges(1, old, now); len(changes) != 0 {
		t.Errorf("a recording without specs: changes %+v", changes)
	}
}

func equalPrints(a, b Fingerprint) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestExplain: a divergence lists its attach's changes, those naming one
// of its tools first.
func TestExplain(t *testing.T) {
	t.Parallel()
	changes := []RequestChange{
		{Attach: 1, Field: FieldSystemPrompt},
		{Attach: 1, Field: FieldToolSpec, Tool: "fs_read"},
		{Attach: 1, Field: FieldTools, Added: []string{"web_fetch"}},
		{Attach: 1, Field: FieldModel},
		{Attach: 2, Field: "temperature"},
	}
	d := Divergence{Kind: KindTool, Expected: &CallRef{Name: "fs_list"}, Actual: &CallRef{Name: "web_fetch"}}
	if got := explain(d, changes, 1); !slices.Equal(got, []string{"tools", "system_prompt", "tool_spec:fs_read", "model"}) {
		t.Errorf("explain = %q", got)
	}
	d.Actual.Name = "fs_read"
	if got := explain(d, changes, 1); got[0] != "tool_spec:fs_read" {
		t.Errorf("explain = %q", got)
	}
	if got := explain(d, changes, 2); !slices.Equal(got, []string{"temperature"}) {
		t.Errorf("attach 2: %q", got)
	}
}

// TestReplaySystemPrompt: a system prompt tried against the recording is
// sent, reported as the first change, and named by the divergence after it.
func TestReplaySystemPrompt(t *testing.T) {
	t.Parallel()
	f := &fixture{prov: &script{answers: [][]transcript.Block{blocks(use("a", "fs_write", `{"path":"out"}`))}}, runs: &atomic.Int64{}}
	s := recording()
	second := *s.Records[0].(*transcript.Config) // two attaches, each its own record
	s.Records[5] = &second
	rep, err := Replay(context.Background(), Options{
		Session: s, Providers: only(f.prov), Mode: ModeStop, SystemPrompt: strp("Be terse."),
		Tools: f.tools("fs_read", "fs_write"), Recorder: f,
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.prov.reqs[0].System != "Be terse." {
		t.Errorf("sent system prompt %q", f.prov.reqs[0].System)
	}
	if len(rep.RequestChanges) != 2 || rep.RequestChanges[0].Field != FieldSystemPrompt || rep.RequestChanges[1].Attach != 2 {
		t.Fatalf("changes %+v", rep.RequestChanges)
	}
	if !strings.Contains(rep.RequestChanges[0].Diff, "+Be terse.\n") || len(rep.RequestFingerprints) != 2 {
		t.Errorf("diff %q, fingerprints %d", rep.RequestChanges[0].Diff, len(rep.RequestFingerprints))
	}
	if len(rep.Divergences) != 1 || !slices.Equal(rep.Divergences[0].After, []string{"system_prompt"}) {
		t.Errorf("divergences %+v", rep.Divergences)
	}
}
