package mcpserve_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/disktest"
)

// TestServeOnAFullDisk fills a 64 KiB tmpfs: the calls after the disk is
// full are answered, stderr says so once, and the session keeps every
// record written before, whole.
func TestServeOnAFullDisk(t *testing.T) {
	small := disktest.Small(t, "64k")
	// A filler, removed once the disk is full, leaves room for the summary
	// that says recording stopped.
	filler := filepath.Join(small, "filler")
	if err := os.WriteFile(filler, make([]byte, 8<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, rec, warn, wsDir := serve(t, filepath.Join(small, "sessions"), tool.ModeYes)
	if err := os.WriteFile(filepath.Join(wsDir, "big"), bytes.Repeat([]byte("x"), 30000), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs_read", Arguments: map[string]any{"path": "big"}})
		if err != nil || r.IsError {
			t.Fatalf("call %d failed: %v %+v", i, err, r)
		}
	}
	if n := strings.Count(warn.String(), "mecha: recording stopped"); n != 1 || !strings.Contains(warn.String(), "no space left on device") {
		t.Fatalf("stderr:\n%s", warn.String())
	}
	ref := session.Ref{Dir: filepath.Join(small, "sessions"), ID: rec.ID()}
	os.Remove(filler)
	if err := rec.Close(); err == nil {
		t.Fatal("Close forgot the failure")
	}
	l, err := rec.Store.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	if l.Skipped != 0 {
		t.Fatalf("torn records: %+v", l.SkippedLines)
	}
	last, ok := l.Records[len(l.Records)-1].(*transcript.Summary)
	if !ok || last.StopReason != "recording_stopped" || !strings.Contains(last.Error, "no space left on device") {
		t.Fatalf("the session does not say recording stopped: %#v", l.Records[len(l.Records)-1])
	}
	if n := len(l.Records); n < 3 {
		t.Fatalf("only %d records: the calls before the disk filled are missing", n)
	}
}
