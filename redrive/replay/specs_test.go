package replay

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// withSpecs is recording() with tool specs in its config records: attach 1
// recorded first, attach 2 second.
func withSpecs(first, second []transcript.ToolSpec) *session.Session {
	s := recording()
	n := 0
	for i, r := range s.Records {
		if c, ok := r.(*transcript.Config); ok {
			cp := *c
			cp.ToolSpecs = first
			if n > 0 {
				cp.ToolSpecs = second
			}
			s.Records[i] = &cp
			n++
		}
	}
	return s
}

func spec(name, desc, schema string) transcript.ToolSpec {
	return transcript.ToolSpec{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
}

func TestReplayNotesChangedToolSpecs(t *testing.T) {
	t.Parallel()
	// Today's tools (counted) describe themselves as "live NAME" with the
	// schema {"type":"object"}.
	same := []transcript.ToolSpec{spec("fs_read", "live fs_read", `{"type": "object"}`), spec("fs_write", "live fs_write", `{"type":"object"}`)}
	tests := []struct {
		name          string
		first, second []transcript.ToolSpec
		want          []SpecChange
	}{
		{"a recording without specs cannot tell", nil, nil, nil},
		{"the same specs, spelled differently", same, same, []SpecChange{}},
		{"a description", []transcript.ToolSpec{spec("fs_read", "read a file", `{"type":"object"}`), same[1]}, same,
			[]SpecChange{{Tool: "fs_read", Changed: []string{SpecDescription}}}},
		{"a schema", same, []transcript.ToolSpec{same[0], spec("fs_write", "live fs_write", `{"type":"object","required":["path"]}`)},
			[]SpecChange{{Tool: "fs_write", Changed: []string{SpecInputSchema}}}},
		{"both, over two attaches, one entry", []transcript.ToolSpec{same[0], spec("fs_write", "live fs_write", `{}`)},
			[]transcript.ToolSpec{same[0], spec("fs_write", "write", `{"type":"object"}`)},
			[]SpecChange{{Tool: "fs_write", Changed: []string{SpecDescription, SpecInputSchema}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fixture{runs: &atomic.Int64{}, prov: &script{answers: [][]transcript.Block{
				blocks(use("1", "fs_read", `{"path":"x"}`), use("2", "fs_write", `{"path":"out","content":"1"}`)),
				blocks(text("done")), blocks(use("3", "fs_read", `{"path":"y"}`)), blocks(text("done again")),
			}}}
			rep, err := Replay(context.Background(), Options{Session: withSpecs(tt.first, tt.second), Providers: only(f.prov),
				Mode: ModeStop, Tools: f.tools("fs_read", "fs_write"), Recorder: f})
			if err != nil {
				t.Fatal(err)
			}
			// A note, never a divergence.
			if rep.Status != StatusClean {
				t.Errorf("status %s: %+v", rep.Status, rep.Divergences)
			}
			if !reflect.DeepEqual(rep.ToolSpecChanges, tt.want) {
				t.Errorf("changes %#v, want %#v", rep.ToolSpecChanges, tt.want)
			}
		})
	}
}

func TestReplayRecordsTheSpecsItOffered(t *testing.T) {
	t.Parallel()
	old := []transcript.ToolSpec{spec("fs_read", "old", `{}`), spec("fs_write", "old", `{}`)}
	f := &fixture{runs: &atomic.Int64{}, prov: &script{answers: [][]transcript.Block{
		blocks(use("1", "fs_read", `{"path":"x"}`), use("2", "fs_write", `{"path":"out","content":"1"}`)),
		blocks(text("done")), blocks(use("3", "fs_read", `{"path":"y"}`)), blocks(text("done again")),
	}}}
	if _, err := Replay(context.Background(), Options{Session: withSpecs(old, old), Providers: only(f.prov),
		Mode: ModeStop, Tools: f.tools("fs_read", "fs_write"), Recorder: f}); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.recs {
		if c, ok := r.(*transcript.Config); ok {
			if len(c.ToolSpecs) != 2 || c.ToolSpecs[0].Description != "live fs_read" || c.ToolSpecs[1].Name != "fs_write" {
				t.Errorf("the replay recorded specs %+v, not the live ones", c.ToolSpecs)
			}
		}
	}
}
