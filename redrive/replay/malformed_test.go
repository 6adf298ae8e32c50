package replay

import (
	"encoding/json"
	"testing"
)

// TestEqualJSONMalformed: texts that are not JSON, or JSON followed by
// more, are equal only byte for byte (white space around them aside): two
// different malformed arguments are two different calls.
func TestEqualJSONMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{`{"path":`, `{"path":"x"`, false},
		{`{bad`, `[worse`, false},
		{`{} {}`, `{} []`, false},
		{`{"a":1} x`, `{"a":1} y`, false},
		{`{"a":1} x`, `{"a":1}`, false},
		{`{"a":1}`, `{"a":1} x`, false},
		{`{bad`, `{bad`, true},
		{` {bad `, `{bad`, true},
		{`{"a":1} {"b":2}`, `{"a":1} {"b":2}`, true},
	} {
		if got := EqualJSON(json.RawMessage(tc.a), json.RawMessage(tc.b)); got != tc.eq {
			t.Errorf("EqualJSON(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.eq)
		}
	}
	d := Compare(Call{Name: "fs_read", Input: json.RawMessage(`{"path":`)}, "fs_read", json.RawMessage(`{"path":"x"`))
	if d == nil || d.Kind != KindArguments {
		t.Errorf("two different malformed arguments compared as the same call: %+v", d)
	}
}
