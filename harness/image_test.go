package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/record/blobs"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/replay"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// pngFile writes a small real PNG at path and returns its bytes.
func pngFile(t *testing.T, path string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imageWorld is a World whose anthropic provider is a fakellm server
// playing script.
func imageWorld(t *testing.T, script *fakellm.Script) (*World, string, *fakellm.Server) {
	t.Helper()
	srv := fakellm.New(t, script, fakellm.Options{})
	home := t.TempDir()
	env := map[string]string{"MECHA_HOME": home, "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "k"}
	return &World{
		Getenv:         func(k string) string { return env[k] },
		Now:            func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) },
		Err:            io.Discard,
		SandboxSupport: func() sandbox.Support { return sandbox.Support{} },
	}, home, srv
}

// TestImageMentionRecordsAndResumes: an @mentioned PNG goes to the model
// as a base64 image block; the transcript names its blob (sha256, type,
// size, name) and holds no byte of it; the conversation is private; a
// resume sends the image again, read from the blob store; with the blob
// gone, a resume is one line naming it, and nothing is sent.
func TestImageMentionRecordsAndResumes(t *testing.T) {
	t.Parallel()
	w, home, srv := imageWorld(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "a grey square"}, {Text: "still grey"}, {Text: "a grey square"}, {Text: "still grey"}}})
	s := testSettings(t)
	s.Provider = "anthropic"
	data := pngFile(t, filepath.Join(s.Workspace, "shot.png"))
	b64 := base64.StdEncoding.EncodeToString(data)
	sum := blobs.Sum(data)

	d, err := Open(context.Background(), w, Attach{Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	att, err := d.Run(context.Background(), Prompt{Text: "what is @shot.png", Files: []string{"shot.png"}})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	reqs := srv.Requests()
	wantPart := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}`
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), wantPart) {
		t.Fatalf("first request does not carry the image:\n%s", reqs[0].Body)
	}
	raw, err := os.ReadFile(att.Session.Path())
	if err != nil {
		t.Fatal(err)
	}
	wantBlock := `{"type":"image","name":"shot.png","media_type":"image/png","sha256":"` + sum + `","size":` + itoa(len(data)) + `}`
	if !strings.Contains(string(raw), wantBlock) || strings.Contains(string(raw), b64[:16]) {
		t.Fatalf("transcript does not name the blob, or holds the bytes:\n%s", raw)
	}
	got, err := (blobs.Store{Dir: filepath.Join(home, "blobs")}).Get(sum)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob: %v", err)
	}
	if !strings.Contains(string(raw), `"private":true`) {
		t.Errorf("attaching an image did not make the session private:\n%s", raw)
	}

	// sessions show: the image is a line (name, type, size).
	var show bytes.Buffer
	if err := sessionview.WriteText(&show, att.Session.Path(), nil, sessionview.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "what is @shot.png\n[image shot.png, image/png, " + strconv.Itoa(len(data)) + " bytes]\n"; !strings.Contains(show.String(), want) {
		t.Errorf("sessions show:\n%s\nwant it to hold %q", show.String(), want)
	}

	// Resume: the image goes again, from the blob.
	d, err = Open(context.Background(), w, Attach{Settings: DefaultSettings(), Resume: att.Session})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(context.Background(), Prompt{Text: "and now?"}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	reqs = srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), wantPart) || !strings.Contains(string(reqs[1].Body), "and now?") {
		t.Fatalf("resumed request does not carry the image:\n%s", reqs[len(reqs)-1].Body)
	}

	// Replay: the recorded turn is sent again with the image, from the blob.
	of, err := store(filepath.Join(home, "sessions")).Load(att.Session)
	if err != nil {
		t.Fatal(err)
	}
	rs := DefaultSettings()
	rs.Provider, rs.Yes = "", true
	rd, err := OpenReplay(context.Background(), w, Attach{Settings: rs, NoSession: true}, Replayed{Session: of, Mode: replay.ModeStop})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Replay(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	rd.Close()
	reqs = srv.Requests()
	if len(reqs) < 3 || !strings.Contains(string(reqs[2].Body), wantPart) {
		t.Fatalf("replayed request does not carry the image:\n%s", reqs[len(reqs)-1].Body)
	}
	sent := len(reqs)

	// The blob gone: one line naming it, nothing sent.
	if err := os.Remove(filepath.Join(home, "blobs", "sha256", sum[:2], sum[2:])); err != nil {
		t.Fatal(err)
	}
	d, err = Open(context.Background(), w, Attach{Settings: DefaultSettings(), Resume: att.Session})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Run(context.Background(), Prompt{Text: "once more"})
	if err == nil || !strings.Contains(err.Error(), "shot.png") || !strings.Contains(err.Error(), sum) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("missing blob: %v", err)
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("%d requests after a refused resume", n)
	}
}

// TestImageRefusedByMock: the mock takes no images; a prompt attaching one
// is one line and records nothing.
func TestImageRefusedByMock(t *testing.T) {
	t.Parallel()
	w, dir := testWorld(t)
	s := testSettings(t)
	pngFile(t, filepath.Join(s.Workspace, "shot.png"))
	_, err := Run(context.Background(), w, Attach{Settings: s}, Prompt{Text: "@shot.png", Files: []string{"shot.png"}})
	if err == nil || err.Error() != "mock does not take images (shot.png): use a provider that does (anthropic, openai, local)" {
		t.Fatalf("mock with an image: %v", err)
	}
	if got := sessions(t, dir); len(got) != 0 {
		t.Errorf("a refused image prompt recorded %d sessions", len(got))
	}
}

// TestImageAttachTaintAndConfinement: an image is read as a text file is,
// inside the workspace: it taints the history private (and untrusted in
// an untrusted workspace); a link leading to an image outside is refused,
// though the same file read without the guard (following the link) is an
// image that would have been attached.
func TestImageAttachTaintAndConfinement(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	data := pngFile(t, filepath.Join(ws, "in.png"))
	var h agent.History
	text, imgs, err := attachFiles(ws, "look", []string{"in.png"}, true, &h)
	if err != nil || text != "look" || len(imgs) != 1 {
		t.Fatalf("attach: %q %d %v", text, len(imgs), err)
	}
	if b := imgs[0]; b.Type != transcript.BlockImage || b.MediaType != "image/png" || b.SHA256 != blobs.Sum(data) || b.Size != int64(len(data)) || !bytes.Equal(b.Data, data) {
		t.Errorf("image block %+v", b)
	}
	if !h.Taint.Private || !h.Taint.Untrusted || !strings.Contains(h.TaintWhy, "in.png") {
		t.Errorf("taint %+v (%s)", h.Taint, h.TaintWhy)
	}

	// An absolute path inside the workspace (a pasted path) is the same file.
	if _, imgs, err := attachFiles(ws, "x", []string{filepath.Join(ws, "in.png")}, false, &agent.History{}); err != nil || len(imgs) != 1 || imgs[0].Name != "in.png" {
		t.Fatalf("absolute path inside: %d, %v", len(imgs), err)
	}
	// Bounded: an image past MaxAttachedImage is refused.
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, MaxAttachedImage)...)
	if err := os.WriteFile(filepath.Join(ws, "big.png"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, imgs, err := attachFiles(ws, "x", []string{"big.png"}, false, &agent.History{}); err == nil || len(imgs) != 0 || !strings.Contains(err.Error(), "big.png") {
		t.Fatalf("an image past the bound: %d, %v", len(imgs), err)
	}

	outside := filepath.Join(t.TempDir(), "secret.png")
	pngFile(t, outside)
	link := filepath.Join(ws, "link.png")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	// Control: without the guard the link leads to an image.
	if b, err := os.ReadFile(link); err != nil || !bytes.Equal(b[:8], []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("control: %v", err)
	}
	var h2 agent.History
	if _, imgs, err := attachFiles(ws, "x", []string{"link.png"}, false, &h2); err == nil || len(imgs) != 0 {
		t.Fatalf("an image outside the workspace was attached through a link: %d, %v", len(imgs), err)
	}
	if _, _, err := attachFiles(ws, "x", []string{outside}, false, &h2); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("an absolute path outside the workspace: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestImageCacheReadsOnce: a replay reads each image from the blob store
// once, however many turns carry it; an image the store never held is
// still the one error naming it.
func TestImageCacheReadsOnce(t *testing.T) {
	store := blobs.Store{Dir: t.TempDir()}
	sum, err := store.Put([]byte("\x89PNG\r\n\x1a\nimage"))
	if err != nil {
		t.Fatal(err)
	}
	var c imageCache
	get := func(s string) ([]byte, error) { return c.get(store, s) }
	msgs := []transcript.Message{{Role: "user", Content: []transcript.Block{{Type: transcript.BlockImage, Name: "a.png", SHA256: sum}}}}
	for range 3 {
		out, err := loadImagesWith(store, get, msgs)
		if err != nil || out[0].Content[0].Data == nil {
			t.Fatalf("turn: %v", err)
		}
		if msgs[0].Content[0].Data != nil {
			t.Fatal("the recorded message was changed in place")
		}
	}
	if err := os.RemoveAll(store.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := c.get(store, sum); err != nil {
		t.Fatalf("a cached image read the store again: %v", err)
	}
	missing := []transcript.Message{{Role: "user", Content: []transcript.Block{{Type: transcript.BlockImage, Name: "b.png", SHA256: strings.Repeat("0", 64)}}}}
	if _, err := loadImagesWith(store, func(s string) ([]byte, error) { return c.get(store, s) }, missing); err == nil || !strings.Contains(err.Error(), "b.png") {
		t.Fatalf("a missing image: %v", err)
	}
}
