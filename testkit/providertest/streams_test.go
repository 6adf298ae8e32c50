package providertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
)

// streamDir holds streams written here after the shapes real servers
// send. Each file says, in its first lines (SSE comments), which public
// recording or document it follows; README.md lists them.
var streamDir = filepath.Join("testdata", "streams")

// shape is one way real servers answer, played byte for byte.
type shape struct {
	name string
	file string // in streamDir
	wire string // "anthropic" or "openai"
	// content is the response's content as JSON; stop and native its
	// neutral and native stop reasons; deltas what OnDelta saw.
	content      string
	stop, native string
	deltas       string
}

// shapes is the conformance table: one row per shape.
var shapes = []shape{
	{
		name: "refusal", file: "anthropic_refusal.sse", wire: "anthropic",
		content: `[{"type":"text","text":"Here is how"}]`,
		stop:    provider.StopOther, native: "refusal", deltas: "text:Here is how|",
	},
	{
		name: "stop_sequence", file: "anthropic_stop_sequence.sse", wire: "anthropic",
		content: `[{"type":"text","text":"first part"}]`,
		stop:    provider.StopOther, native: "stop_sequence", deltas: "text:first part|",
	},
}

// play serves a shape's file as the fake's one answer and returns a client
// of the shape's wire pointed at it.
func (s shape) play(t *testing.T, more ...string) (provider.Provider, func(n int) map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(streamDir, s.file))
	if err != nil {
		t.Fatal(err)
	}
	ct := "text/event-stream"
	if strings.HasSuffix(s.file, ".json") {
		ct = "application/json"
	}
	turn, err := json.Marshal(map[string]string{"body": string(data), "content_type": ct})
	if err != nil {
		t.Fatal(err)
	}
	script := `{"turns":[` + string(turn)
	for _, m := range more {
		script += "," + m
	}
	script += "]}"
	var f flavour
	for _, fl := range flavours() {
		if fl.wire == s.wire {
			f = fl
			break
		}
	}
	p, srv := f.start(t, script)
	return p, func(n int) map[string]any { return body(t, srv, n) }
}

// TestRealShapes plays each shape to its wire's client: the answer's
// content (blocks the client does not interpret kept whole, their streamed
// input in them), the neutral stop reason and the provider's own.
func TestRealShapes(t *testing.T) {
	t.Parallel()
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			p, _ := s.play(t)
			resp, deltas, err := ask(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(resp.Content)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(s.content)) {
				t.Errorf("content\n got %s\nwant %s", got, s.content)
			}
			if resp.StopReason != s.stop || resp.NativeStopReason != s.native {
				t.Errorf("stop reasons = %q, %q; want %q, %q", resp.StopReason, resp.NativeStopReason, s.stop, s.native)
			}
			if deltas != s.deltas {
				t.Errorf("deltas = %q, want %q", deltas, s.deltas)
			}
		})
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}
