//go:build unix

package mcpclient

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadFileRefusesAFIFO: a FIFO given as --mcp-config is refused at
// once; opened for reading the ordinary way it would block until a
// writer came.
func TestLoadFileRefusesAFIFO(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), ".mcp.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := LoadFile(p)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("LoadFile of a FIFO: %v", err)
	}
}
