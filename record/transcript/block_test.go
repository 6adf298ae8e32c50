package transcript

import (
	"encoding/json"
	"strings"
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

// TestImageBlockRoundTrip: an image block is written as the reference to
// its blob (name, media type, sha256, size), never its bytes, and reads
// back the same, without bytes; an image block without a sha256 (another
// tool's base64 block) is kept verbatim.
func TestImageBlockRoundTrip(t *testing.T) {
	t.Parallel()
	sum := strings.Repeat("ab", 32)
	b := ImageBlock("d/shot.png", "image/png", sum, []byte("\x89PNG-secret-bytes"))
	line, err := Encode(&Message{Role: RoleUser, Content: []Block{TextBlock("look"), b}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"image","name":"d/shot.png","media_type":"image/png","sha256":"` + sum + `","size":17}`
	if !strings.Contains(string(line), want) || strings.Contains(string(line), "secret") || strings.Contains(string(line), "iVBOR") {
		t.Fatalf("encoded %s", line)
	}
	r, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	got := r.(*Message).Content[1]
	if got.Type != BlockImage || got.Name != "d/shot.png" || got.MediaType != "image/png" || got.SHA256 != sum || got.Size != 17 || got.Data != nil || got.Raw != nil {
		t.Errorf("decoded %+v", got)
	}
	foreign := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}`
	var f Block
	if err := json.Unmarshal([]byte(foreign), &f); err != nil || string(f.Raw) != foreign {
		t.Fatalf("foreign image block: %+v %v", f, err)
	}
	if back, _ := json.Marshal(f); string(back) != foreign {
		t.Errorf("foreign image block re-encodes as %s", back)
	}
}
