package harness

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestRecordSent: a setting the provider does not send is recorded as
// null whatever was asked, and named for the note only when it was asked
// for; a flag an earlier provider left null gets its default back when
// this one sends it; nulls of other settings (an import's) stay.
func TestRecordSent(t *testing.T) {
	t.Parallel()
	seed, temp, high := uint64(42), 0.5, "high"
	tests := []struct {
		name  string
		in    transcript.Config
		want  transcript.Config
		asked []string
	}{
		{"anthropic takes no seed, and no effort without thinking",
			transcript.Config{Provider: "anthropic", Seed: &seed, Effort: &high, Temperature: &temp, CachePrompt: true},
			transcript.Config{Provider: "anthropic", Temperature: &temp, CachePrompt: true},
			[]string{"--seed", "--effort"}},
		{"anthropic takes effort with thinking",
			transcript.Config{Provider: "anthropic", Effort: &high, Thinking: true},
			transcript.Config{Provider: "anthropic", Effort: &high, Thinking: true},
			nil},
		{"openai takes no thinking and no cache_prompt",
			transcript.Config{Provider: "openai", Seed: &seed, Effort: &high, Thinking: true, CachePrompt: true},
			transcript.Config{Provider: "openai", Seed: &seed, Effort: &high, Nulls: []string{"thinking", "cache_prompt"}},
			[]string{"--thinking"}},
		{"--no-cache-prompt to openai is said",
			transcript.Config{Provider: "openai"},
			transcript.Config{Provider: "openai", Nulls: []string{"thinking", "cache_prompt"}},
			[]string{"--no-cache-prompt"}},
		{"a null cache_prompt inherited is not asked for",
			transcript.Config{Provider: "openai", Nulls: []string{"cache_prompt"}},
			transcript.Config{Provider: "openai", Nulls: []string{"cache_prompt", "thinking"}},
			nil},
		{"local takes cache_prompt",
			transcript.Config{Provider: "local", Seed: &seed, CachePrompt: true},
			transcript.Config{Provider: "local", Seed: &seed, CachePrompt: true, Nulls: []string{"thinking"}},
			nil},
		{"anthropic after openai: the flags' defaults back, an import's nulls kept",
			transcript.Config{Provider: "anthropic", Nulls: []string{"mecha_version", "thinking", "cache_prompt"}},
			transcript.Config{Provider: "anthropic", CachePrompt: true, Nulls: []string{"mecha_version"}},
			nil},
		{"the mock takes everything",
			transcript.Config{Provider: "mock", Seed: &seed, Thinking: true},
			transcript.Config{Provider: "mock", Seed: &seed, Thinking: true},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := tt.in
			asked := recordSent(&rc)
			if !reflect.DeepEqual(rc, tt.want) || !reflect.DeepEqual(asked, tt.asked) {
				t.Errorf("recordSent = %+v, %q\nwant %+v, %q", rc, asked, tt.want, tt.asked)
			}
		})
	}
}

// TestUnsentSaidOnce: a door whose prompts ask Anthropic for a seed says
// once that it is not sent, and every attach's config records it as null.
func TestUnsentSaidOnce(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer srv.Close()
	w, dir := testWorld(t)
	home := w.Getenv("MECHA_HOME")
	var errw bytes.Buffer
	w.Err = &errw
	w.Getenv = func(k string) string {
		return map[string]string{"MECHA_HOME": home, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.URL}[k]
	}
	s := testSettings(t)
	s.Provider, s.Seed = "anthropic", 42
	s.Given = func(name string) bool { return name == "provider" || name == "seed" }
	d, err := Open(context.Background(), w, Attach{Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, p := range []string{"one", "two"} {
		if _, err := d.Run(context.Background(), Prompt{Text: p}); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(errw.String(), "not sent to anthropic"); got != 1 {
		t.Errorf("said %d times:\n%s", got, errw.String())
	}
	sess, err := store(dir).Load(sessions(t, dir)[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range sess.Configs() {
		if c.Seed != nil {
			t.Errorf("attach %d records seed %d", i+1, *c.Seed)
		}
	}
}
