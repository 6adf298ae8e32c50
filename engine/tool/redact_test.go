package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// echoTool returns its input as the result, and as an error when asked:
// whatever a call is made to print, the tool prints.
type echoTool struct{ fakeTool }

func (e *echoTool) Run(_ context.Context, input json.RawMessage) (Result, error) {
	var in struct {
		Out, Err string
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, err
	}
	var err error
	if in.Err != "" {
		err = fmt.Errorf("tool: %s: %w", in.Err, context.Canceled)
	}
	return Result{Content: in.Out}, err
}

func TestRedact(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-CANARY-0123456789"
	secrets := []Secret{
		{"ANTHROPIC_API_KEY", key},
		{"PREFIX_TOKEN", "sk-ant-CANARY"}, // inside the key: the key is replaced whole
		{"SHORT_TOKEN", "abc123"},         // too short to redact
		{"EMPTY_SECRET", ""},
		{"SAME_API_KEY", key}, // the same value under a later name
	}
	tests := []struct {
		name, out, want string
	}{
		{"whole", "key=" + key + "\n", "key=[redacted ANTHROPIC_API_KEY]\n"},
		{"every occurrence", key + key + " " + key, "[redacted ANTHROPIC_API_KEY][redacted ANTHROPIC_API_KEY] [redacted ANTHROPIC_API_KEY]"},
		{"contained secret alone", "sk-ant-CANARY-x", "[redacted PREFIX_TOKEN]-x"},
		{"short value left alone", "abc123 and abc", "abc123 and abc"},
		{"nothing to redact", "plain text", "plain text"},
	}
	tl := Redact(&echoTool{fakeTool{name: "echo"}}, secrets)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, _ := json.Marshal(map[string]string{"Out": tt.out})
			res, err := tl.Run(context.Background(), in)
			if err != nil || res.Content != tt.want {
				t.Errorf("Run = %q, %v; want %q", res.Content, err, tt.want)
			}
		})
	}
	t.Run("error message", func(t *testing.T) {
		t.Parallel()
		_, err := tl.Run(context.Background(), json.RawMessage(`{"Err":"bad key `+key+`"}`))
		if err == nil || strings.Contains(err.Error(), "CANARY") || !strings.Contains(err.Error(), "[redacted ANTHROPIC_API_KEY]") {
			t.Errorf("error = %v", err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the redacted error lost what it wraps: %v", err)
		}
	})
}

func TestRedactWithoutSecretsIsTheTool(t *testing.T) {
	t.Parallel()
	inner := &echoTool{fakeTool{name: "echo"}}
	if got := Redact(inner, []Secret{{"SHORT_TOKEN", "x"}}); got != Tool(inner) {
		t.Errorf("Redact with nothing to redact = %T, want the tool itself", got)
	}
	if got := Redact(inner, []Secret{{"K_API_KEY", "0123456789"}}); got.(interface{ Unwrap() Tool }).Unwrap() != Tool(inner) {
		t.Error("Unwrap does not return the tool")
	}
}
