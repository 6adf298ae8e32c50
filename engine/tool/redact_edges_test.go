package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func redactRun(t *testing.T, tl Tool, out string) string {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"Out": out})
	res, err := tl.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return res.Content
}

// TestRedactContainedSecretEitherOrder: a secret that contains another is
// replaced whole whichever of the two is configured first, so the
// longest-first order is what decides, not the configuration's; and the
// shorter alone is still replaced.
func TestRedactContainedSecretEitherOrder(t *testing.T) {
	t.Parallel()
	long := Secret{"ANTHROPIC_API_KEY", "sk-ant-CANARY-0123456789"}
	short := Secret{"PREFIX_TOKEN", "sk-ant-CANARY"}
	inner := Secret{"MIDDLE_TOKEN", "CANARY-0123"}
	for name, secrets := range map[string][]Secret{
		"long first":           {long, short},
		"short first":          {short, long},
		"inner first":          {inner, long},
		"short, inner, long":   {short, inner, long},
		"inner, short, long":   {inner, short, long},
		"long last of several": {Secret{"OTHER_TOKEN", "unrelated-value"}, short, long},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tl := Redact(&echoTool{fakeTool{name: "echo"}}, secrets)
			if got, want := redactRun(t, tl, "key="+long.Value+"\n"), "key=[redacted ANTHROPIC_API_KEY]\n"; got != want {
				t.Errorf("the long secret: %q, want %q", got, want)
			}
			if got := redactRun(t, tl, long.Value); strings.Contains(got, "0123456789") || strings.Contains(got, "CANARY") {
				t.Errorf("a part of the long secret leaked: %q", got)
			}
			for _, s := range secrets {
				if s != short {
					continue
				}
				if got, want := redactRun(t, tl, "sk-ant-CANARY-x"), "[redacted PREFIX_TOKEN]-x"; got != want {
					t.Errorf("the short secret alone: %q, want %q", got, want)
				}
			}
		})
	}
}

// TestRedactAtMinSecretLen: a value of exactly MinSecretLen bytes is
// redacted; one byte shorter is left alone.
func TestRedactAtMinSecretLen(t *testing.T) {
	t.Parallel()
	at := strings.Repeat("k", MinSecretLen)
	below := strings.Repeat("s", MinSecretLen-1)
	tl := Redact(&echoTool{fakeTool{name: "echo"}}, []Secret{{"AT_LIMIT", at}, {"BELOW_LIMIT", below}})
	if got, want := redactRun(t, tl, "a="+at+" b="+below), "a=[redacted AT_LIMIT] b="+below; got != want {
		t.Errorf("Run = %q, want %q", got, want)
	}
	if got := Redact(&echoTool{fakeTool{name: "echo"}}, []Secret{{"BELOW_LIMIT", below}}); got == nil {
		t.Fatal("Redact returned nil")
	} else if _, wrapped := got.(*redacted); wrapped {
		t.Errorf("a value of %d bytes is redacted; the least is %d", len(below), MinSecretLen)
	}
}
