package chatcmd

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain\ttext\nlines": "plain\ttext\nlines",
		"\x1b]0;title\x07":   `\x1b]0;title\x07`,
		"\x1b[2J":            `\x1b[2J`,
		"csi \u009b1m":       `csi \u009b1m`,
		"bad \xff byte":      `bad \xff byte`,
		"bidi \u202e":        `bidi \u202e`,
		"del \x7f, é ok":     `del \x7f, é ok`,
	} {
		if got := textfmt.Visible(in); got != want {
			t.Errorf("textfmt.Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDescribeCall: a write is shown as a diff against the file it
// replaces, an edit as old → new, a command as its text; escape sequences
// in any of them are made visible.
func TestDescribeCall(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	req := func(name string, in map[string]string) tool.Request {
		b, _ := json.Marshal(in)
		return tool.Request{Tool: name, Input: b}
	}
	for _, tc := range []struct {
		req       tool.Request
		want, not []string
	}{
		{req("fs_write", map[string]string{"path": "a.txt", "content": "one\nthree\n"}),
			[]string{"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three"}, []string{`\n`}},
		{req("fs_write", map[string]string{"path": "new.txt", "content": "fresh\n"}), []string{"@@ -0,0 +1 @@\n+fresh"}, []string{"fresh\n "}},
		{req("fs_write", map[string]string{"path": "a.txt", "content": "one\ntwo"}),
			[]string{"-two\n+two\n\\ No newline at end of file"}, nil},
		{req("fs_write", map[string]string{"path": "../a.txt", "content": "x"}), []string{"+x"}, []string{"-one"}},
		{req("fs_edit", map[string]string{"path": "a.txt", "old_string": "two", "new_string": "2\x1b[31m"}),
			[]string{"-two", `+2\x1b[31m`}, []string{"\x1b", "No newline"}},
		{req("shell", map[string]string{"command": "ls -l"}), []string{"$ ls -l"}, nil},
		{req("web_fetch", map[string]string{"url": "https://x"}), []string{`"url":"https://x"`}, nil},
	} {
		got := describeCall(ws, tc.req)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.req.Tool, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q has %q", tc.req.Tool, got, n)
			}
		}
	}
}

// TestContinueSession: -c picks the newest session of the workspace that a
// person ran, passing over newer replays, reruns and reflections and other
// workspaces' sessions.
func TestContinueSession(t *testing.T) {
	t.Parallel()
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	env := &cmdkit.Env{Out: io.Discard, Err: io.Discard, Vars: func(k string) string {
		if k == "MECHA_HOME" {
			return home
		}
		return ""
	}}
	store, _ := env.Store()
	create := func(m transcript.Meta) string {
		w, err := store.Create(m)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		return w.ID()
	}
	if _, err := env.ContinueID(ws); err == nil {
		t.Error("-c with no session: no error")
	}
	want := create(transcript.Meta{Workspace: ws, Title: "mine"})
	create(transcript.Meta{Workspace: other, Title: "elsewhere"})
	create(transcript.Meta{Workspace: ws, Title: "a replay", ReplayOf: want})
	create(transcript.Meta{Workspace: ws, Title: "a rerun", RerunOf: want})
	create(transcript.Meta{Workspace: ws, Title: "a reflection", ReflectsOn: want})
	got, err := env.ContinueID(ws)
	if err != nil || got != (session.Ref{Dir: store.Dir, ID: want}) {
		t.Errorf("-c = %+v, %v; want %s", got, err, want)
	}
}

// TestMarkdown: without colour the markers go and the text stays; with
// colour bold and code are styled; a fence's body is kept as written,
// escape sequences inside it made visible.
func TestMarkdown(t *testing.T) {
	t.Parallel()
	in := "# Title\nSome **bold**, *italic* and `code`.\n\n- one\n- two\n  1. nested\n\n3. three\n4. four\n\n> quoted\n\n" +
		"```go\nx := **y**\n\x1b[2J\n```\n\n| a | b |\n|---|---|\n| 1 | 22 |\n\nSee [docs](https://example.com/d) and <b>raw</b>.\n\nafter"
	want := "Title\n\nSome bold, italic and code.\n\n• one\n• two\n  1. nested\n\n3. three\n4. four\n\n│ quoted\n\n  go\n  x := **y**\n  \\x1b[2J\n\n" +
		"┌───┬────┐\n│ a │ b  │\n├───┼────┤\n│ 1 │ 22 │\n└───┴────┘\n\nSee docs (https://example.com/d) and <b>raw</b>.\n\nafter"
	if got := newMarkdown(false).render(in); got != want {
		t.Errorf("plain:\n%s\nwant:\n%s", got, want)
	}
	got := newMarkdown(true).render("Some **bold** and *it* text")
	if !strings.Contains(got, "\x1b[1mbold\x1b[") || !strings.Contains(got, "\x1b[3mit\x1b[") {
		t.Errorf("coloured: %q has no bold or no italics", got)
	}
	md := newMarkdown(false)
	md.setWidth(20)
	if got := md.render(strings.Repeat("word ", 10)); strings.Count(got, "\n") < 2 {
		t.Errorf("not wrapped at 20: %q", got)
	}
}

// TestStatusLine: the status line fits its width, giving way in order (the
// Esc hint, the provider's name, the session id, the tokens, then the
// model's name clipped or dropped), and keeps the state, the taint and the
// cost while there is room. At 120 columns a long id and model lose only
// the hint and the provider's name (the line was cut to "c…" there).
func TestStatusLine(t *testing.T) {
	t.Parallel()
	prices := pricing.Table{"anthropic": {"*": {Input: 3, Output: 15}}}
	s := status{id: "20261201T152514-0a1b2c3d", provider: "anthropic", model: "claude-sonnet-4-5-20250929",
		usage: transcript.Usage{InputTokens: 123456, OutputTokens: 7890}, cost: 0.4887, priced: true,
		taint: transcript.Taint{Private: true}}
	for _, tc := range []struct {
		width     int
		running   bool
		want, not []string
	}{
		{200, true, []string{" working (Esc interrupts) · private · 20261201T152514-0a1b2c3d · anthropic/claude-sonnet-4-5-20250929 · 123,456 in / 7,890 out · cost $0.4887 "}, nil},
		{120, false, []string{" ready · private · 20261201T152514-0a1b2c3d · claude-sonnet-4-5-20250929 · 123,456 in / 7,890 out · cost $0.4887 "}, nil},
		{118, true, []string{" working · private · 20261201T152514-0a1b2c3d · claude-sonnet-4-5-20250929 · 123,456 in / 7,890 out · cost $0.4887 "}, nil},
		{80, true, []string{" working · private · claude-sonnet-4-5-20250929 · cost $0.4887 "}, nil},
		{50, true, []string{" working · private · claude-sonne… · cost $0.4887 "}, nil},
		{36, true, []string{" working · private · cost $0.4887 "}, nil},
		{12, false, []string{"ready · pr…"}, nil},
	} {
		got := s.line(prices, tc.running, tc.width)
		if w := lipgloss.Width(got); w > tc.width {
			t.Errorf("width %d: %q is %d wide", tc.width, got, w)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("width %d: %q lacks %q", tc.width, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("width %d: %q has %q", tc.width, got, n)
			}
		}
	}
}

// TestChatSaysMissingKey: a provider whose key is not set is reported when
// the chat opens, with the variable to set and how to make another
// provider the default; with the key set nothing is said.
func TestChatSaysMissingKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "a-key"} {
		vars := map[string]string{"MECHA_HOME": t.TempDir(), "ANTHROPIC_API_KEY": key}
		env := &cmdkit.Env{Out: io.Discard, Err: io.Discard, Vars: func(k string) string { return vars[k] }}
		var opts *Options
		cmd := NewCmdChat(env, func(_ context.Context, o *Options) error { opts = o; return nil })
		if err := cmdtest.Execute(cmd, "-p", "anthropic", "-w", t.TempDir()); err != nil {
			t.Fatal(err)
		}
		eng, m, err := setup(context.Background(), opts, func(tea.Msg) {})
		if err != nil {
			t.Fatal(err)
		}
		eng.close()
		var errs []string
		for _, e := range m.entries {
			if e.kind == kError {
				errs = append(errs, e.text)
			}
		}
		switch {
		case key == "" && (len(errs) != 1 || !strings.Contains(errs[0], "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=<your key>") ||
			!strings.Contains(errs[0], "default_provider in config.toml (mecha config path")):
			t.Errorf("no key: the chat opens saying %q", errs)
		case key != "" && len(errs) != 0:
			t.Errorf("with a key: the chat opens saying %q", errs)
		}
	}
}
