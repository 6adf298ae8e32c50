package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestTerminalAskerAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		answer string
		want   bool
	}{
		{"y\n", true},
		{"Y\n", true},
		{"yes\n", true},
		{"  YES \r\n", true},
		{"y", true}, // last line without a newline
		{"n\n", false},
		{"no\n", false},
		{"\n", false},
		{"yeah\n", false},
		{"", false}, // end of input
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.answer), func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			a := NewTerminalAsker(strings.NewReader(tt.answer), &out)
			got, err := a.Confirm(context.Background(), Request{Tool: "fs_write", Input: json.RawMessage(`{"path": "a.txt", "content": "hi\n"}`)})
			if err != nil {
				t.Fatalf("Confirm: %v", err)
			}
			if got != tt.want {
				t.Errorf("Confirm(%q) = %v, want %v", tt.answer, got, tt.want)
			}
			wantPrompt := `allow fs_write {"path":"a.txt","content":"hi\n"}? [y/N] `
			if tt.answer == "" {
				wantPrompt += "\n"
			}
			if out.String() != wantPrompt {
				t.Errorf("prompt = %q, want %q", out.String(), wantPrompt)
			}
		})
	}
}

func TestTerminalAskerReadsOneLinePerCall(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	a := NewTerminalAsker(strings.NewReader("y\nn\nyes\n"), &out)
	var got []bool
	for range 4 {
		ok, err := a.Confirm(context.Background(), Request{Tool: "shell", Input: json.RawMessage(`{"command":"ls"}`)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ok)
	}
	if want := []bool{true, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("answers = %v, want %v", got, want)
	}
	if n := strings.Count(out.String(), `allow shell {"command":"ls"}? [y/N] `); n != 4 {
		t.Errorf("%d prompts written, want 4: %q", n, out.String())
	}
}

func TestTerminalAskerShowInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		max   int
		input string
		want  string
	}{
		{name: "compacted", input: "{ \"a\" : 1 }", want: `{"a":1}`},
		{name: "empty", input: "", want: `{}`},
		{name: "cut", max: 10, input: `{"content":"0123456789"}`, want: `{"content"... [14 more bytes not shown]`},
		{name: "cut on rune boundary", max: 9, input: `{"a":"ééé"}`, want: `{"a":"é... [6 more bytes not shown]`},
		{name: "no limit", max: -1, input: `{"content":"0123456789"}`, want: `{"content":"0123456789"}`},
		{name: "invalid JSON quoted", input: "\x1b[2Jboom", want: `"\x1b[2Jboom"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := NewTerminalAsker(strings.NewReader(""), &strings.Builder{})
			a.MaxInputBytes = tt.max
			if got := a.showInput(json.RawMessage(tt.input)); got != tt.want {
				t.Errorf("showInput(%q) = %q, want %q", tt.input, got, tt.want)
			}
		})
	}
}

func TestTerminalAskerErrors(t *testing.T) {
	t.Parallel()
	t.Run("cancelled context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out strings.Builder
		a := NewTerminalAsker(strings.NewReader("y\n"), &out)
		ok, err := a.Confirm(ctx, Request{Tool: "shell"})
		if ok || !errors.Is(err, context.Canceled) {
			t.Errorf("Confirm = %v, %v; want false, context.Canceled", ok, err)
		}
		if out.Len() != 0 {
			t.Errorf("prompted on a cancelled context: %q", out.String())
		}
	})
	t.Run("read error", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		a := NewTerminalAsker(iotest.ErrReader(boom), &strings.Builder{})
		ok, err := a.Confirm(context.Background(), Request{Tool: "shell"})
		if ok || !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "tool: ") {
			t.Errorf("Confirm = %v, %v; want false and a wrapped boom", ok, err)
		}
	})
	t.Run("gate turns asker errors into harness errors", func(t *testing.T) {
		t.Parallel()
		a := NewTerminalAsker(iotest.ErrReader(errors.New("boom")), &strings.Builder{})
		inner := &fakeTool{name: "fs_write", caps: Capabilities{ModifiesWorkspace: true}}
		_, err := Gate(inner, ModeAsk, a).Run(context.Background(), nil)
		if err == nil || inner.runs != 0 {
			t.Errorf("Run error = %v, runs = %d; want an error and no run", err, inner.runs)
		}
	})
}

// TestTerminalAskerShowsNothingRaw: a tool name, an input and a reason
// holding a set-title sequence, a DEL, a C1 control and a bidi override
// reach the prompt as escapes. The control: the same text written as it
// is holds the raw bytes the check looks for.
func TestTerminalAskerShowsNothingRaw(t *testing.T) {
	t.Parallel()
	name := "evil\x1b]0;pwned\x07"
	input := json.RawMessage("{\"path\":\"a\u202eb\u009b\x7f\"}")
	reason := "because \x1b[2J"
	raw := func(s string) bool {
		return strings.ContainsAny(s, "\x1b\x07\x7f\u202e\u009b")
	}
	if !raw(name) || !raw(string(input)) || !raw(reason) {
		t.Fatal("the attack holds no raw control: the check could not fail")
	}
	var out bytes.Buffer
	a := NewTerminalAsker(strings.NewReader("n\n"), &out)
	if ok, err := a.Confirm(context.Background(), Request{Tool: name, Input: input, Reason: reason, Permission: name + " runs commands"}); ok || err != nil {
		t.Fatalf("Confirm = %v, %v", ok, err)
	}
	if raw(out.String()) {
		t.Errorf("the prompt holds a raw control: %q", out.String())
	}
	for _, want := range []string{`evil\x1b]0;pwned\x07`, `a\u202eb\u009b\x7f`, `because \x1b[2J`, `evil\x1b]0;pwned\x07 runs commands, which`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("prompt %q lacks %q", out.String(), want)
		}
	}
}

// The prompts of the three questions: the gate's alone, the interlock's
// alone, and the two as one (see Policy), which says so.
func TestTerminalAskerPrompts(t *testing.T) {
	t.Parallel()
	const (
		reason = "refused: lethal trifecta: the conversation holds private data (x) and untrusted content (y); web_fetch could send it out: it reaches the network."
		allow  = `allow web_fetch {"url":"u"}? [y/N] `
	)
	for _, tt := range []struct {
		name string
		req  Request
		want string
	}{
		{"the gate's", Request{Permission: "web_fetch reaches the network"}, allow},
		{"the interlock's", Request{Reason: reason}, reason + "\n" + allow},
		{"both", Request{Reason: reason, Permission: "web_fetch reaches the network"},
			reason + "\nweb_fetch reaches the network, which needs your permission too: one answer for both.\n" + allow},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			tt.req.Tool, tt.req.Input = "web_fetch", json.RawMessage(`{"url":"u"}`)
			if _, err := NewTerminalAsker(strings.NewReader("n\n"), &out).Confirm(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("prompt %q,\nwant   %q", out.String(), tt.want)
			}
		})
	}
}
