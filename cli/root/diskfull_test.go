//go:build linux

package root

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/testkit/disktest"
)

// TestRunOnAFullDisk records a run into a 64 KiB tmpfs until the disk is
// full: the run must stop with one line naming the problem and exit 1, and
// the transcript must hold, whole, every record written before. It needs
// to mount a file system (root, as in CI) and skips otherwise.
func TestRunOnAFullDisk(t *testing.T) {
	small := disktest.Small(t, "64k")

	ws := t.TempDir()
	script := filepath.Join(t.TempDir(), "fill.json")
	big := `{"tool_calls": [{"name": "shell", "input": {"command": "head -c 40000 /dev/zero | tr '\\0' x"}}]}`
	if err := os.WriteFile(script, []byte(`{"turns": [`+big+`,`+big+`,`+big+`, {"text": "done"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := &cmdkit.Env{Out: &out, Err: &errOut, Vars: func(k string) string {
		switch k {
		case "MECHA_SESSION_DIR":
			return filepath.Join(small, "sessions")
		case "MECHA_HOME":
			return filepath.Join(ws, ".home")
		}
		return ""
	}}
	// --trifecta off: the unconfined shell arms the conversation by itself
	// (it reads the workspace and brings in outside output), and this test
	// is about the disk, not the interlock.
	code := Run(context.Background(), env, []string{"run", "--yes", "--trifecta", "off", "-w", ws, "--mock-script", script, "fill the disk"})
	if code != ExitFailure {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "mecha: agent: recording failed: session: write ") || !strings.Contains(last, "no space left on device") ||
		strings.Count(last, "write ") != 1 || !strings.Contains(last, "has stopped") {
		t.Errorf("error line: %q", last)
	}
	if !strings.Contains(errOut.String(), ", error\n") {
		t.Errorf("the closing line should give the stop reason:\n%s", errOut.String())
	}
	store := &session.Store{Dir: filepath.Join(small, "sessions")}
	l, err := store.List()
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("%v, %+v", err, l)
	}
	s, err := store.Load(l.Sessions[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing half-written: every line parses, and the messages stop at a
	// record boundary (the user turn, at least one answer and its result).
	if s.Skipped != 0 || len(s.Messages()) < 3 || len(s.Configs()) != 1 {
		t.Errorf("transcript after a full disk: %d messages, %d configs, %d skipped", len(s.Messages()), len(s.Configs()), s.Skipped)
	}
}
