package replay

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestEqualJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		eq   bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"n":1}`, `{"n":1.0}`, true},
		{`{"n":1e3}`, `{"n":1000}`, true},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891}`, false},
		{`{"p":"a.txt"}`, `{"p":"./a.txt"}`, false},
		{` {"a" : true} `, `{"a":true}`, true},
		{`{"a":null}`, `{}`, false},
		{`[1,2]`, `[2,1]`, false},
		{``, `{}`, true},
		{`not json`, `not json`, true},
		{`not json`, `{}`, false},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d"}}`, false},
	}
	for _, tt := range tests {
		if got := EqualJSON(json.RawMessage(tt.a), json.RawMessage(tt.b)); got != tt.eq {
			t.Errorf("EqualJSON(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	rec := Call{Name: "fs_read", Input: json.RawMessage(`{"path":"a.txt","limit":10}`)}
	if d := Compare(rec, "fs_read", json.RawMessage(`{"limit":10.0,"path":"a.txt"}`)); d != nil {
		t.Errorf("same call reported: %+v", d)
	}
	d := Compare(rec, "fs_list", json.RawMessage(`{}`))
	if d == nil || d.Kind != KindTool || !d.Structural || d.Expected.Name != "fs_read" || d.Actual.Name != "fs_list" {
		t.Errorf("tool: %+v", d)
	}
	d = Compare(rec, "fs_read", json.RawMessage(`{"path":"./a.txt","limit":10}`))
	if d == nil || d.Kind != KindArguments || d.Structural {
		t.Errorf("arguments: %+v", d)
	}
	for kind, structural := range map[string]bool{KindTool: true, KindArguments: false, KindExtra: true, KindMissing: true} {
		if IsStructural(kind) != structural {
			t.Errorf("IsStructural(%s) = %v", kind, !structural)
		}
	}
}

func TestArgDiff(t *testing.T) {
	t.Parallel()
	got := ArgDiff(json.RawMessage(`{"path":"a.txt","limit":10,"old":1}`), json.RawMessage(`{"path":"./a.txt","limit":10,"new":true}`))
	want := []string{`new: (absent) → true`, `old: 1 → (absent)`, `path: "a.txt" → "./a.txt"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ArgDiff = %q", got)
	}
	if got := ArgDiff(json.RawMessage(`[1]`), json.RawMessage(`{}`)); len(got) != 1 || got[0] != "[1] → {}" {
		t.Errorf("non-objects: %q", got)
	}
}
