package transcript

import (
	"encoding/json"
	"testing"
)

func TestTextOf(t *testing.T) {
	t.Parallel()
	use := ToolUseBlock("t1", "shell", json.RawMessage(`{}`))
	think := Block{Type: BlockThinking, Thinking: "hm"}
	for _, tc := range []struct {
		name   string
		blocks []Block
		want   string
	}{
		{"none", nil, ""},
		{"one", []Block{TextBlock("hello")}, "hello"},
		// Citations split a sentence into blocks: no line break inside it.
		{"split by citations", []Block{TextBlock("The capital is "), TextBlock("Paris"), TextBlock(", on the Seine.")}, "The capital is Paris, on the Seine."},
		{"an empty block between", []Block{TextBlock("a "), TextBlock(""), TextBlock("b")}, "a b"},
		{"apart around a call", []Block{TextBlock("Looking."), use, TextBlock("Done.")}, "Looking.\nDone."},
		{"apart around thinking", []Block{TextBlock("One."), think, TextBlock("Two.")}, "One.\nTwo."},
		{"a call first", []Block{use, TextBlock("after")}, "after"},
		{"a call last", []Block{TextBlock("before"), use}, "before"},
	} {
		if got := TextOf(tc.blocks); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
