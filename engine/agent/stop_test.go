package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

// native answers with text and the given stop reasons.
func native(text, stop, nativeStop string) func(*provider.Request) (*provider.Response, error) {
	return func(*provider.Request) (*provider.Response, error) {
		return &provider.Response{Content: []transcript.Block{transcript.TextBlock(text)}, StopReason: stop,
			NativeStopReason: nativeStop, Usage: u(1, 1)}, nil
	}
}

// TestStopReasonRecorded: each assistant message carries the model's own
// stop reason; a user message carries none.
func TestStopReasonRecorded(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		func(*provider.Request) (*provider.Response, error) {
			return &provider.Response{Content: []transcript.Block{use("c1", "fast", `{}`)}, StopReason: provider.StopToolUse,
				NativeStopReason: "tool_use"}, nil
		},
		native("I cannot help with that.", provider.StopOther, "refusal"),
	}}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "fast"})
	res, err := Run(context.Background(), opts, "go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rec.recs {
		if m, ok := r.(*transcript.Message); ok {
			got = append(got, m.Role+":"+m.StopReason)
		}
	}
	if want := "user: assistant:tool_use user: assistant:refusal"; strings.Join(got, " ") != want {
		t.Errorf("messages = %s, want %s", strings.Join(got, " "), want)
	}
	if res.StopReason != StopEndTurn {
		t.Errorf("run stop = %q", res.StopReason)
	}
}
