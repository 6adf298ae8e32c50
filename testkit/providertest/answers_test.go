package providertest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

func TestTextAnswer(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		p, _ := f.start(t, `{"turns":[{"text":"Hello there, world."}]}`)
		resp, deltas, err := ask(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Content) != 1 || resp.Content[0].Type != transcript.BlockText || resp.Content[0].Text != "Hello there, world." {
			t.Errorf("content = %+v", resp.Content)
		}
		if deltas != "text:Hello |text:there, |text:world.|" {
			t.Errorf("deltas = %q", deltas)
		}
		if resp.StopReason != provider.StopEndTurn || resp.Model != "test-model" {
			t.Errorf("stop, model = %q, %q", resp.StopReason, resp.Model)
		}
		if p.Name() != f.provider {
			t.Errorf("Name() = %q, want %q", p.Name(), f.provider)
		}
	})
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	const script = `{"turns":[
		{"tool_calls":[{"name":"fs_read","input":{"path":"go.mod"}}]},
		{"text":"Reading both.","tool_calls":[
			{"name":"fs_read","input":{"path":"a.txt","limit":10}},
			{"id":"given-id","name":"fs_list","input":{"path":"dir/ü"}}]},
		{"tool_calls":[{"name":"fs_read","arguments":"{\"path\": \"cut"}]}
	]}`
	forEach(t, func(t *testing.T, f flavour) {
		p, _ := f.start(t, script)

		resp, _, err := ask(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.ToolCalls()
		if len(calls) != 1 || calls[0].Name != "fs_read" || string(calls[0].Input) != `{"path":"go.mod"}` || calls[0].ID == "" {
			t.Errorf("one call: %+v", calls)
		}
		if resp.StopReason != provider.StopToolUse {
			t.Errorf("stop = %q", resp.StopReason)
		}

		resp, _, err = ask(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls = resp.ToolCalls()
		if len(calls) != 2 || string(calls[0].Input) != `{"path":"a.txt","limit":10}` ||
			calls[1].ID != "given-id" || calls[1].Name != "fs_list" || string(calls[1].Input) != `{"path":"dir/ü"}` || calls[0].ID == calls[1].ID {
			t.Errorf("parallel calls: %+v", calls)
		}
		if resp.Content[0].Text != "Reading both." || resp.StopReason != provider.StopToolUse {
			t.Errorf("parallel calls: content %+v, stop %q", resp.Content, resp.StopReason)
		}

		// Arguments that are not JSON come back as a JSON string.
		resp, _, err = ask(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls = resp.ToolCalls()
		var s string
		if len(calls) != 1 || json.Unmarshal(calls[0].Input, &s) != nil || s != `{"path": "cut` {
			t.Errorf("invalid arguments: %+v", calls)
		}
	})
}

func TestThinking(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		p, _ := f.start(t, `{"turns":[{"thinking":"Let me think.","signature":"sig-1","text":"Done."}]}`)
		resp, deltas, err := ask(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Content) != 2 || resp.Content[0].Type != transcript.BlockThinking || resp.Content[0].Thinking != "Let me think." || resp.Content[1].Text != "Done." {
			t.Fatalf("content = %+v", resp.Content)
		}
		if f.wire == "anthropic" && resp.Content[0].Signature != "sig-1" {
			t.Errorf("signature = %q", resp.Content[0].Signature)
		}
		if deltas != "thinking:Let |thinking:me |thinking:think.|text:Done.|" {
			t.Errorf("deltas = %q", deltas)
		}
	})
}

func TestRedactedThinkingKeptVerbatim(t *testing.T) {
	t.Parallel()
	f := flavours()[0]
	p, srv := f.start(t, `{"turns":[{"redacted_thinking":"opaque==","text":"Hi."},{"text":"Again."}]}`)
	resp, _, err := ask(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if len(resp.Content) != 2 || resp.Content[0].Type != "redacted_thinking" || json.Unmarshal(resp.Content[0].Raw, &raw) != nil || raw["data"] != "opaque==" {
		t.Fatalf("content = %+v", resp.Content)
	}
	req := &provider.Request{Model: "m", Messages: []transcript.Message{
		{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("q")}},
		{Role: transcript.RoleAssistant, Content: resp.Content},
		{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("again")}},
	}}
	if _, _, err := ask(p, req); err != nil {
		t.Fatal(err)
	}
	if got := path(body(t, srv, 1), "messages", 1, "content", 0, "data"); got != "opaque==" {
		t.Errorf("redacted thinking sent back as %v", got)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		p, _ := f.start(t, `{"turns":[{"text":"ok","stop_reason":"max_tokens","model":"served-model",
			"usage":{"input_tokens":100,"output_tokens":20,"cache_read_tokens":30,"cache_write_tokens":10}}]}`)
		resp, _, err := ask(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := transcript.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 10}
		if f.wire == "openai" {
			want.CacheWriteTokens = 0 // the wire has no cache writes
		}
		if resp.Usage != want {
			t.Errorf("usage = %+v, want %+v", resp.Usage, want)
		}
		if resp.StopReason != provider.StopMaxTokens || resp.Model != "served-model" {
			t.Errorf("stop, model = %q, %q", resp.StopReason, resp.Model)
		}
	})
}

// TestToolRoundTrip sends an answer's calls back with results: the fake
// refuses the second request unless every result answers a call of the
// previous assistant message in the wire's own way.
func TestToolRoundTrip(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		p, srv := f.start(t, `{"turns":[
			{"thinking":"Two reads.","text":"Reading.","tool_calls":[{"name":"fs_read","input":{"path":"a"}},{"name":"fs_read","input":{"path":"b"}}]},
			{"text":"Both read."}]}`)
		req := &provider.Request{Model: "test-model", Thinking: f.wire == "anthropic", MaxTokens: 500, Messages: []transcript.Message{
			{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("read a and b")}}}}
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var results []transcript.Block
		for i, c := range resp.ToolCalls() {
			results = append(results, transcript.ToolResultBlock(c.ID, "content "+c.ID, i == 1))
		}
		req.Messages = append(req.Messages,
			transcript.Message{Role: transcript.RoleAssistant, Content: resp.Content},
			transcript.Message{Role: transcript.RoleUser, Content: append(results, transcript.TextBlock("and be brief"))})
		resp, err = p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content[0].Text != "Both read." || srv.Remaining() != 0 {
			t.Errorf("second answer %+v, %d turns left", resp.Content, srv.Remaining())
		}
	})
}
