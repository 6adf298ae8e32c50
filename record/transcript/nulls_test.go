package transcript

import (
	"bytes"
	"testing"
)

// TestConfigNullsRoundTrip: a config line holding null for settings whose
// type has none (as an import writes it) comes back from Decode and
// AppendEncode with the same nulls, not zeros; a line without them is
// written as before.
func TestConfigNullsRoundTrip(t *testing.T) {
	t.Parallel()
	line := []byte(`{"record":"config","mecha_version":null,"provider":"anthropic","model":"claude-opus-5","workspace":"/w","system_prompt":null,"tools":["fs_read"],"effort":null,"temperature":null,"seed":null,"thinking":null,"cache_prompt":null,"max_tokens":null,"max_turns":null,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":null,"permission_mode":null,"trifecta":null,"sandbox":null,"sandbox_network":null}` + "\n")
	rec, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	c := rec.(*Config)
	if len(c.Nulls) != 10 || c.Nulls[0] != "mecha_version" || c.MaxTokens != 0 {
		t.Fatalf("nulls %q, max_tokens %d", c.Nulls, c.MaxTokens)
	}
	got, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, line) {
		t.Errorf("re-encoded:\n got %s\nwant %s", got, line)
	}
	// Control: without Nulls the same record says zero, which is what
	// "show --json" printed for an import.
	c.Nulls = nil
	plain, _ := Encode(c)
	if !bytes.Contains(plain, []byte(`"max_tokens":0`)) || bytes.Equal(plain, line) {
		t.Errorf("without nulls: %s", plain)
	}
	// A line with no null decodes without Nulls and encodes as it was.
	full := []byte(`{"record":"config","mecha_version":"0.1.0","provider":"p","model":"m","workspace":"/w","system_prompt":null,"tools":[],"effort":null,"temperature":null,"seed":null,"thinking":false,"cache_prompt":false,"max_tokens":1,"max_turns":2,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":6,"permission_mode":"ask","trifecta":"refuse","sandbox":"none","sandbox_network":false}` + "\n")
	rec, _ = Decode(full)
	if c := rec.(*Config); c.Nulls != nil {
		t.Errorf("nulls %q in a line with none", c.Nulls)
	}
	if again, _ := Encode(rec); !bytes.Equal(again, full) {
		t.Errorf("re-encoded %s", again)
	}
}
