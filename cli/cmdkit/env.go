package cmdkit

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"golang.org/x/term"

	"github.com/mecha-agent/mecha/cli/backfill"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionindex"
)

// Env is what commands get from the world. Main builds the real one with
// System; tests build one with fixed values. Each field has one name, and
// a zero field means "nothing" where that makes sense (no variables, no
// environment) and the real thing where it does not (the clock).
type Env struct {
	In       io.Reader
	Out, Err io.Writer
	// OutTTY is true when Out is a terminal (colour, progress lines).
	OutTTY bool
	// ErrTTY is true when Err is a terminal.
	ErrTTY bool
	// InTTY is true when In is a terminal a person can answer prompts on.
	InTTY bool

	// Vars reads mecha's environment variables (Vars.Get).
	Vars Vars
	// Environ is the environment handed on to the commands tools run
	// (Environ.List).
	Environ Environ
	// Clock tells the time (Clock.Now).
	Clock Clock
	// Location is the time zone times are shown in (nil: UTC).
	Location *time.Location
	// HTTPClient makes every HTTP request of a command, the providers' and
	// MCP servers' included. System sets one of mecha's own (never
	// http.DefaultClient); a nil one leaves the harness to make its own.
	HTTPClient *http.Client
	// SetGCPercent tunes the collector for a command that allocates a
	// lot and keeps it; it returns the previous setting. Nil: no tuning.
	SetGCPercent func(int) int
	// Executable is mecha's own executable, which the shell re-executes
	// as the sandbox helper (nil: os.Executable).
	Executable func() (string, error)
	// Interrupted is closed when the person interrupts the command (the
	// first Ctrl-C): a long indexing of the sessions stops at it (nil:
	// never).
	Interrupted <-chan struct{}
	// GOOS picks the platform's opener for OpenFile ("": runtime.GOOS).
	GOOS string
}

// Vars reads one environment variable.
type Vars func(string) string

// Get returns the variable k ("" when unset, or when v is nil).
func (v Vars) Get(k string) string {
	if v == nil {
		return ""
	}
	return v(k)
}

// Environ lists an environment as KEY=VALUE strings.
type Environ func() []string

// List returns the environment (none when e is nil).
func (e Environ) List() []string {
	if e == nil {
		return nil
	}
	return e()
}

// Clock tells the time.
type Clock func() time.Time

// Now returns the current time (the real clock's when c is nil).
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}

// System returns the Env of the real process.
func System() *Env {
	return &Env{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutTTY:       term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY:       term.IsTerminal(int(os.Stderr.Fd())),
		InTTY:        term.IsTerminal(int(os.Stdin.Fd())),
		Vars:         os.Getenv,
		Environ:      os.Environ,
		Clock:        time.Now,
		Location:     time.Local,
		HTTPClient:   &http.Client{Transport: transport()},
		SetGCPercent: debug.SetGCPercent,
		Executable:   os.Executable,
	}
}

// Zone returns the time zone times are shown in.
func (e *Env) Zone() *time.Location {
	if e.Location == nil {
		return time.UTC
	}
	return e.Location
}

// TuneGC sets the collector's target percentage for the rest of a command
// and returns what restores the previous one.
func (e *Env) TuneGC(percent int) (restore func()) {
	if e.SetGCPercent == nil {
		return func() {}
	}
	old := e.SetGCPercent(percent)
	return func() { e.SetGCPercent(old) }
}

// Color reports whether output to Out may use colour.
func (e *Env) Color() bool {
	return e.OutTTY && e.Vars.Get("NO_COLOR") == "" && e.Vars.Get("TERM") != "dumb"
}

// Home returns $MECHA_HOME (default ~/.mecha).
func (e *Env) Home() (string, error) { return config.Home(e.Vars.Get) }

// Store is the session store: its directory from MECHA_SESSION_DIR or
// MECHA_HOME, its clock the Env's; resolving "last" notes on Err each file
// the listing passed over.
func (e *Env) Store() (*session.Store, error) {
	dir, err := config.SessionDir(e.Vars.Get)
	if err != nil {
		return nil, err
	}
	ix := sessionindex.For(dir, e.noteIndex).StopOn(e.Interrupted)
	if e.Executable != nil && e.Vars.Get("MECHA_INDEX_BACKGROUND") != "0" {
		// A large indexing runs in the background (see backfill).
		ix.SetBackfill(backfill.Starter(dir, e.Executable, e.Environ.List, e.Clock.Now, e.Err))
	} else {
		ix.SetBackfill(nil)
	}
	return &session.Store{Dir: dir, Now: e.Clock.Now, Skipped: e.NoteSkipped, Index: ix}, nil
}

// noteIndex says on Err what went wrong with the session index (once: the
// index is a cache, and the files are read without it).
func (e *Env) noteIndex(line string) { fmt.Fprintf(e.Err, "mecha: %s\n", line) }

// Config loads $MECHA_HOME/config.toml.
func (e *Env) Config() (*config.Config, error) {
	home, err := e.Home()
	if err != nil {
		return nil, err
	}
	return config.Load(home + "/config.toml")
}

// ForOut is text as Out may be given it: on a terminal, with every control
// character and escape sequence made visible (textfmt.Visible), so nothing
// a model, a tool or a server wrote acts on it; to a pipe or a file, byte
// for byte.
func (e *Env) ForOut(text string) string {
	if e.OutTTY {
		return textfmt.Visible(text)
	}
	return text
}

// ForErr is text as Err may be given it, as ForOut is for Out.
func (e *Env) ForErr(text string) string {
	if e.ErrTTY {
		return textfmt.Visible(text)
	}
	return text
}

// LoadSession resolves arg (as ResolveSession does), loads the session
// tolerantly and notes on Err a header that claims another id. It returns
// the session and its Ref.
func (e *Env) LoadSession(arg string) (*session.Session, session.Ref, error) {
	store, err := e.Store()
	if err != nil {
		return nil, session.Ref{}, err
	}
	ref, err := store.Resolve(arg)
	if err != nil {
		return nil, session.Ref{}, err
	}
	s, err := store.Load(ref)
	if err != nil {
		return nil, session.Ref{}, err
	}
	e.NoteForeignID(ref, s.HeaderID)
	return s, ref, nil
}

// ResolveSession turns an argument into the session it names: an id, a
// unique prefix, a path to a .jsonl file, or session.Last for the newest
// session (with a note on Err for each file the listing passed over).
func (e *Env) ResolveSession(arg string) (session.Ref, error) {
	store, err := e.Store()
	if err != nil {
		return session.Ref{}, err
	}
	return store.Resolve(arg)
}

// transport is Go's default transport without its own 30-second dial and
// 10-second TLS limits: a provider's connect timeout (configurable, see
// provider.Timeouts) bounds both, and a longer one must be able to apply.
// Requests that are not a provider's carry a deadline in their context.
func transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 0
	return tr
}
