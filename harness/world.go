package harness

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionindex"
)

// World is what the harness reads from outside the process's code. The
// CLI builds it from its Env; tests build one with fixed values. A nil
// field means "nothing" (no variables), or the real thing where there is
// no nothing (the clock, the executable, the kernel's sandbox support).
type World struct {
	// Getenv reads one variable (keys, base URLs, MECHA_HOME).
	Getenv func(string) string
	// Environ is the environment handed on to the commands tools run,
	// less credentials (ScrubbedEnv).
	Environ func() []string
	Now     func() time.Time
	// HTTPClient makes the providers' and the MCP servers' requests
	// (nil: a client of the harness's own, never http.DefaultClient).
	HTTPClient *http.Client
	// Executable is mecha's own executable, which the shell re-executes as
	// the sandbox helper.
	Executable func() (string, error)
	// SandboxSupport is what this kernel enforces of the sandbox.
	SandboxSupport func() sandbox.Support
	// Err receives notes: the session started, a sandbox weaker than asked,
	// an MCP server that did not start, a retry. Nil: none.
	Err io.Writer
	// In and InTTY are where a person answers questions when the Attach
	// names no Asker (a terminal prompt; no terminal: nobody asks).
	In    io.Reader
	InTTY bool
	// Version is mecha's version, recorded in each config record.
	Version string

	// sandboxNoted are the sandbox notes written (see sandboxNote).
	sandboxNoted map[string]bool
}

func (w *World) getenv(k string) string {
	if w.Getenv == nil {
		return ""
	}
	return w.Getenv(k)
}

func (w *World) environ() []string {
	if w.Environ == nil {
		return nil
	}
	return w.Environ()
}

func (w *World) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

func (w *World) clock() func() time.Time { return w.now }

func (w *World) client() *http.Client {
	if w.HTTPClient == nil {
		w.HTTPClient = &http.Client{}
	}
	return w.HTTPClient
}

func (w *World) errw() io.Writer {
	if w.Err == nil {
		return io.Discard
	}
	return w.Err
}

func (w *World) executable() (string, error) {
	if w.Executable == nil {
		return os.Executable()
	}
	return w.Executable()
}

// Home is $MECHA_HOME (default ~/.mecha).
func (w *World) Home() (string, error) { return config.Home(w.getenv) }

// Store is the session store: its directory from MECHA_SESSION_DIR or
// MECHA_HOME, its clock the World's; the sessions it creates sync turn
// boundaries in the background (Close waits for the last).
func (w *World) Store() (*session.Store, error) {
	dir, err := config.SessionDir(w.getenv)
	if err != nil {
		return nil, err
	}
	warn := func(line string) { fmt.Fprintf(w.errw(), "mecha: %s\n", line) }
	return &session.Store{Dir: dir, Now: w.clock(), BackgroundSync: true, Index: sessionindex.For(dir, warn)}, nil
}
