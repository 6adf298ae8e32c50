package inspectlog

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/testkit/browsertest"
	"github.com/mecha-agent/mecha/testkit/inspecttest"
)

// TestViewerShowsLog bundles a log with Inspect's own viewer ("inspect
// view bundle") and loads the bundle in Chromium, served from loopback
// and nothing else reached (inline data: URLs aside): the viewer opens
// the log and shows its sample. It skips, saying why, without Inspect or
// Chromium.
func TestViewerShowsLog(t *testing.T) {
	browsertest.Chromium(t)
	py := inspecttest.Python(t)
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	l := New("mecha-sessions", "anthropic/claude", "test", t0, []Sample{FromSession(child(), nil)})
	name := "2026-12-01T10-00-00+00-00_mecha-sessions_viewer.json"
	f, err := os.Create(filepath.Join(logs, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, l); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bundle := filepath.Join(dir, "bundle")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, py, "-m", "inspect_ai", "view", "bundle", "--log-dir", logs, "--output-dir", bundle).CombinedOutput(); err != nil {
		t.Fatalf("inspect view bundle: %v\n%s", err, out)
	}
	// The log's page: the viewer reads it and shows its sample, by its
	// input.
	pg := browsertest.OpenServed(t, bundle, "#/logs/"+name)
	waitText(t, pg, "read x")
	origin, _, _ := strings.Cut(pg.URL, "#")
	for _, r := range pg.Requests() {
		if !strings.HasPrefix(r, origin) && !strings.HasPrefix(r, "data:") {
			t.Errorf("the viewer requested %s", r)
		}
	}
}

// waitText waits until the page's text holds want, and returns it.
func waitText(t *testing.T, pg *browsertest.Page, want string) string {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	var text string
	for time.Now().Before(deadline) {
		text = browsertest.Eval[string](t, pg, `document.body.innerText`)
		if strings.Contains(text, want) {
			return text
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the viewer never showed %q; it shows:\n%s", want, text)
	return ""
}
