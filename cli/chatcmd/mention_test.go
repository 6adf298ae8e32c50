package chatcmd

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/record/blobs"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// TestChatMentions: Tab completes an @mention from the workspace's files;
// the file's content goes after the prompt and the conversation is
// private from then on, as after fs_read. A mention that leads out of the
// workspace through a link is refused and nothing is sent (the attack);
// the same file inside the workspace is attached (the control, above).
func TestChatMentions(t *testing.T) {
	c := startChat(t, []fakellm.Turn{{Text: "Summarised."}})
	outside := filepath.Join(t.TempDir(), "secret.txt")
	for p, text := range map[string]string{
		filepath.Join(c.ws, "notes.txt"):  "NOTES-CONTENT line\n",
		filepath.Join(c.ws, "nothing.md"): "x",
		outside:                           "OUTSIDE-SECRET\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(c.ws, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	c.enter("read @leak.txt")
	c.waitFor("@leak.txt leads outside the workspace")
	c.waitFor("│ read @leak.txt") // the prompt stays in the box
	for range len("read @leak.txt") {
		c.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	c.typed("summarize @no")
	c.send(tea.KeyPressMsg{Code: tea.KeyTab})
	c.waitFor("notes.txt  nothing.md") // two match: both listed
	c.typed("e")                       // after the common "not"
	c.send(tea.KeyPressMsg{Code: tea.KeyTab})
	c.waitFor("│ summarize @notes.txt")
	c.prompt(" please", "Summarised.")
	c.quit()
	if c.frames.index(0, "ready · private ·") < 0 {
		t.Error("the status line never said private")
	}

	reqs := c.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests; want 1 (the refused prompt sends nothing)", len(reqs))
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, `summarize @notes.txt please`) || !strings.Contains(body, `\u003cfile path=\"notes.txt\"\u003e\nNOTES-CONTENT line\n\u003c/file\u003e`) &&
		!strings.Contains(body, `<file path=\"notes.txt\">\nNOTES-CONTENT line\n</file>`) {
		t.Errorf("the request does not carry the prompt and the file: %s", body)
	}
	if strings.Contains(body, "OUTSIDE-SECRET") {
		t.Error("the file outside the workspace was sent")
	}
	if s := c.onlySession(); !s.Taint().Private {
		t.Errorf("the session's taint %+v; want private", s.Taint())
	}
}

// TestChatImageMention: an @mentioned PNG is attached as an image: the
// request carries it as a base64 image block after the prompt's text, the
// chat shows it as a line (name, type, size), the conversation is private,
// and the transcript names the blob rather than holding the bytes.
func TestChatImageMention(t *testing.T) {
	c := startChat(t, []fakellm.Turn{{Text: "A grey square."}})
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.ws, "shot.png"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c.prompt("what is @shot.png", "A grey square.")
	c.quit()
	if line := fmt.Sprintf("attached [image shot.png, image/png, %d bytes]", buf.Len()); c.frames.index(0, line) < 0 {
		t.Errorf("no screen showed %q", line)
	}
	reqs := c.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	b64 := base64.StdEncoding.EncodeToString(buf.Bytes())
	want := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}`
	if body := string(reqs[0].Body); !strings.Contains(body, want) || !strings.Contains(body, "what is @shot.png") {
		t.Errorf("the request does not carry the prompt and the image: %s", body)
	}
	s := c.onlySession()
	if !s.Taint().Private {
		t.Errorf("the session's taint %+v; want private", s.Taint())
	}
	raw, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"sha256":"`+blobs.Sum(buf.Bytes())+`"`) || strings.Contains(string(raw), b64) {
		t.Errorf("the transcript does not name the blob, or holds the bytes")
	}
}
