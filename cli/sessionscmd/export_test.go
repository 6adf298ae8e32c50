package sessionscmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

var update = flag.Bool("update", false, "rewrite the export golden files")

// fixtureID is the session of sessionview/html/testdata: tool calls, a
// denial, an interlock refusal, a compaction, two attaches, armed taint,
// and markup in every place a transcript can hold it.
const fixtureID = "20260805T091500-3f2a1b7c"

// exportEnv is a store holding the fixture, with prices configured.
func exportEnv(t *testing.T) (*cmdkit.Env, *bytes.Buffer, string) {
	t.Helper()
	home := t.TempDir()
	sessions := filepath.Join(home, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "record", "sessionview", "html", "testdata", fixtureID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sessions, fixtureID+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	prices := "[prices.anthropic.\"claude-opus-5\"]\ninput = 15.0\noutput = 75.0\ncache_read = 1.5\ncache_write = 18.75\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(prices), 0o600); err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	vars := map[string]string{"MECHA_HOME": home, "MECHA_SESSION_DIR": sessions}
	return &cmdkit.Env{Out: out, Err: &bytes.Buffer{}, Vars: func(k string) string { return vars[k] }}, out, home
}

// TestExportGolden holds each format to its golden file (go test -run
// TestExportGolden -update rewrites them). The store's directory is
// written as $HOME in them.
func TestExportGolden(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"md", "html", "json"} {
		env, out, home := exportEnv(t)
		if err := exportRun(&ExportOptions{Env: env, ID: "20260805", Format: format}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		got := strings.ReplaceAll(out.String(), home, "$HOME")
		golden := filepath.Join("testdata", "export."+format+".golden")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s (go test -run TestExportGolden -update rewrites it):\n%s", format, golden, got)
		}
	}
}

// TestExportToFile: -o replaces the file whole, mode 0600, in the format
// its extension names; the same bytes as stdout.
func TestExportToFile(t *testing.T) {
	t.Parallel()
	env, out, home := exportEnv(t)
	if err := exportRun(&ExportOptions{Env: env, ID: fixtureID, Format: "json"}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, "s.json")
	o := &ExportOptions{Env: env, ID: fixtureID, Output: p}
	if err := o.resolveFormat(); err != nil || o.Format != "json" {
		t.Fatalf("format %q %v", o.Format, err)
	}
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exportRun(o); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !bytes.Equal(b, out.Bytes()) {
		t.Errorf("file and stdout differ")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}

func TestExportFlags(t *testing.T) {
	t.Parallel()
	env := &cmdkit.Env{}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"x"}, "md"}, {[]string{"-o", "a.HTML", "x"}, "html"}, {[]string{"-o", "a.json", "x"}, "json"},
		{[]string{"--format", "md", "-o", "a.json", "x"}, "md"}, {[]string{"--format", "markdown", "x"}, "md"},
	} {
		var o *ExportOptions
		if err := cmdtest.Execute(NewCmdExport(env, func(x *ExportOptions) error { o = x; return nil }), c.args...); err != nil || o.Format != c.want {
			t.Errorf("%q: %v %+v, want format %s", c.args, err, o, c.want)
		}
	}
	for _, args := range [][]string{{"--format", "pdf", "x"}, {}, {"a", "b"}} {
		err := cmdtest.Execute(NewCmdExport(env, func(*ExportOptions) error { t.Error("ran despite bad usage"); return nil }), args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	var v *ViewOptions
	if err := cmdtest.Execute(NewCmdView(env, func(x *ViewOptions) error { v = x; return nil }), "-o", "p.html", "--open", "x"); err != nil || v.Output != "p.html" || !v.Open || v.ID != "x" {
		t.Errorf("view: %v %+v", err, v)
	}
	err := cmdtest.Execute(NewCmdView(env, func(*ViewOptions) error { t.Error("ran"); return nil }), "-o", "-", "x")
	var ue *cmdkit.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("view -o -: %v, want a usage error", err)
	}
}

// TestExportToATerminal: a session whose title, file name, tool name and
// error carry a set-title sequence, an OSC 52 clipboard write, a clear
// screen and a bidi override is exported to a terminal with none of them
// raw, in every format; to a pipe (the control) the Markdown keeps them.
func TestExportToATerminal(t *testing.T) {
	t.Parallel()
	const attack = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e"
	for _, format := range []string{"md", "html", "json"} {
		for _, tty := range []bool{true, false} {
			env, out, home := exportEnv(t)
			env.OutTTY = tty
			path := filepath.Join(home, "sessions", "20260101T000000-0000e5c0.jsonl")
			writeSession(t, path,
				&transcript.Meta{Format: 1, ID: "20260101T000000-0000e5c0", Provider: "mock", Model: "m", Workspace: "/w", Title: "title " + attack},
				&transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("go")}},
				&transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{
					transcript.ToolUseBlock("a", "fs_read", json.RawMessage(`{"path":"evil\u001b]0;fname\u0007.txt"}`)),
					transcript.ToolUseBlock("b", "clip"+attack, json.RawMessage(`{}`))}},
				&transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{
					transcript.ToolResultBlock("a", "evil"+attack+".txt: no such file", true),
					transcript.ToolResultBlock("b", "unknown tool clip"+attack, true)}})
			if err := exportRun(&ExportOptions{Env: env, ID: "20260101T000000-0000e5c0", Format: format}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			got := out.String()
			switch raw := strings.ContainsAny(got, "\x1b\x07\u202e"); {
			case tty && raw:
				t.Errorf("%s to a terminal: a raw control:\n%q", format, got)
			case tty && format == "md" && !strings.Contains(got, `clip\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07`):
				t.Errorf("%s to a terminal: the tool name is not shown escaped:\n%s", format, got)
			case !tty && format == "md" && !strings.Contains(got, "clip"+attack):
				t.Errorf("md to a pipe: the tool name is not kept byte for byte:\n%q", got)
			}
		}
	}
}

func writeSession(t *testing.T, path string, recs ...transcript.Record) {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := transcript.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}
