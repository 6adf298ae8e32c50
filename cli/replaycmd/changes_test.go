package replaycmd

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/redrive/replay"
)

// TestPrintChanges: the changes, attach by attach when there are several,
// a diff indented and cut at maxDiffLines, nothing a terminal would act
// on printed raw.
func TestPrintChanges(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	long.WriteString("--- recorded\n+++ now\n@@ -1,50 +1,50 @@\n")
	for i := range 50 {
		fmt.Fprintf(&long, "-line %d\n", i)
	}
	changes := []replay.RequestChange{
		{Attach: 1, Field: replay.FieldSystemPrompt, Diff: "--- recorded\n+++ now\n@@ -1 +1 @@\n-a\n+b\x1b]0;pwned\x07\n"},
		{Attach: 1, Field: replay.FieldTools, Added: []string{"web_fetch"}, Removed: []string{"fs_edit"}},
		{Attach: 2, Field: replay.FieldToolSpec, Tool: "fs_read", Changed: []string{"description", "input_schema"}, Diff: long.String()},
		{Attach: 2, Field: "temperature", Recorded: 0.2, Now: nil},
	}
	var out bytes.Buffer
	printChanges(&out, changes)
	got := out.String()
	for _, want := range []string{
		"changed since the recording, attach 1:\n  system prompt:\n    --- recorded\n    +++ now\n    @@ -1 +1 @@\n    -a\n    +b",
		"  tools offered: added web_fetch; removed fs_edit\n",
		"changed since the recording, attach 2:\n  tool fs_read: description and input schema changed; the model was offered today's\n",
		"    -line 36\n    … 13 more lines (--json and --html have the whole diff)\n",
		"  temperature: 0.2 → null\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q in\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("raw escape in %q", got)
	}
	if afterLine([]string{"tool_spec:fs_read", "system_prompt", "seed"}) != "after the changes to: fs_read's spec, system prompt, seed" {
		t.Errorf("after line %q", afterLine([]string{"tool_spec:fs_read", "system_prompt", "seed"}))
	}
}
