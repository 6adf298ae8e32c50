package toolreplay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// TestScriptHeader compares the header of a script whose calls do every
// kind of thing (modify, run commands, reach the network, an MCP tool, a
// tool mecha does not have here, a call not redone) with
// testdata/script_header.golden; -update rewrites it.
func TestScriptHeader(t *testing.T) {
	t.Parallel()
	docs := &transcript.MCPServer{Name: "docs", Transport: "stdio", Command: "docs-mcp", Args: []string{"--root", "${HOME}/docs"},
		ServerName: "docs-server", ServerVersion: "1.2"}
	in := json.RawMessage(`{}`)
	c := &Calls{
		Meta: transcript.Meta{ID: "20260101T000000-0000abcd", Title: "fix the build", Workspace: "/home/me/proj",
			CreatedAt: time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC)},
		Source: SourceTranscript,
		Calls: []Call{
			{Index: 1, Name: "fs_write", Input: in, Expect: Succeed},
			{Index: 2, Name: "shell", Input: in, Expect: Fail},
			{Index: 3, Name: "mcp__docs__search", Input: in, Expect: Succeed, Server: docs},
			{Index: 4, Name: "old_tool", Input: in, Expect: Succeed},
			{Index: 5, Name: "fs_write", Input: in, Expect: Skip, Note: "not redone: it never ran (denied by the user)"},
		},
	}
	caps := func(name string) (tool.Capabilities, bool) {
		switch name {
		case "fs_write":
			return tool.Capabilities{ModifiesWorkspace: true}, true
		case "shell":
			return tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true}, true
		}
		return tool.Capabilities{}, false
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	writeHeader(w, c, ScriptOptions{Version: "v1.2.3", Caps: caps})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "script_header.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("header:\n%s\nwant (%s):\n%s", buf.Bytes(), golden, want)
	}
}
