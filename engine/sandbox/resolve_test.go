package sandbox_test

import (
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// TestResolve: the setting never claims more than the kernel enforces,
// and says so in one line when it is less than asked.
func TestResolve(t *testing.T) {
	t.Parallel()
	full := sandbox.Support{Landlock: 7, Seccomp: true, Namespaces: true}
	cut := sandbox.Setting{Mode: sandbox.ModeLandlock}
	open := sandbox.Setting{Mode: sandbox.ModeLandlock, Network: true}
	nsCut := sandbox.Setting{Mode: sandbox.ModeLandlock, Namespaces: true}
	nsOpen := sandbox.Setting{Mode: sandbox.ModeLandlock, Network: true, Namespaces: true}
	for _, tc := range []struct {
		want sandbox.Setting
		sup  sandbox.Support
		got  sandbox.Setting
		note bool
	}{
		{cut, full, nsCut, false},
		{open, full, nsOpen, false},
		// Asking for namespaces gets them only where the trial succeeded.
		{nsCut, full, nsCut, false},
		{nsCut, sandbox.Support{Landlock: 7, Seccomp: true}, cut, true},
		{nsOpen, sandbox.Support{Landlock: 7, Seccomp: true}, open, true},
		{sandbox.Setting{Mode: sandbox.ModeNone}, full, sandbox.None, false},
		{cut, sandbox.Support{}, sandbox.None, true},
		// ABI 1, the first Landlock, confines: it is not "no Landlock".
		{cut, sandbox.Support{Landlock: 1, Seccomp: true, Namespaces: true}, nsCut, false},
		{open, sandbox.Support{Landlock: 1, Namespaces: true}, nsOpen, false},
		{cut, sandbox.Support{Landlock: 1, Namespaces: true}, nsOpen, true},
		{open, sandbox.Support{Seccomp: true, Namespaces: true}, sandbox.None, true},
		{cut, sandbox.Support{Landlock: 3, Namespaces: true}, nsOpen, true},
		{open, sandbox.Support{Landlock: 3, Namespaces: true}, nsOpen, false},
	} {
		got, note := sandbox.Resolve(tc.want, tc.sup)
		if got != tc.got || (note != "") != tc.note || strings.Contains(note, "\n") {
			t.Errorf("Resolve(%+v, %+v) = %+v, %q; want %+v, note %v", tc.want, tc.sup, got, note, tc.got, tc.note)
		}
	}
}

// TestParseMode: the two modes are accepted as they are; anything else is
// an error, and never a mode.
func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, m := range []string{sandbox.ModeLandlock, sandbox.ModeNone} {
		if got, err := sandbox.ParseMode(m); got != m || err != nil {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	for _, m := range []string{"", "Landlock", "bwrap", "none ", "off"} {
		got, err := sandbox.ParseMode(m)
		if err == nil || got != "" {
			t.Errorf("ParseMode(%q) = %q, %v; want an error", m, got, err)
		}
	}
}

// TestResolveNote: without namespaces the note says so, once, in one line,
// with the other shortfall when there is one.
func TestResolveNote(t *testing.T) {
	t.Parallel()
	_, note := sandbox.Resolve(sandbox.Setting{Mode: sandbox.ModeLandlock}, sandbox.Support{Landlock: 7})
	if !strings.Contains(note, "no seccomp") || !strings.Contains(note, "user namespaces are refused") || !strings.HasPrefix(note, "sandbox: ") {
		t.Errorf("note %q", note)
	}
}

// TestResolveEgress: the allowlist holds only with namespaces and seccomp
// and the network otherwise cut; without them the network stays cut, and
// the note says so.
func TestResolveEgress(t *testing.T) {
	t.Parallel()
	want := sandbox.Setting{Mode: sandbox.ModeLandlock, Egress: true}
	full := sandbox.Support{Landlock: 7, Seccomp: true, Namespaces: true}
	if got, note := sandbox.Resolve(want, full); !got.Egress || note != "" {
		t.Errorf("with namespaces: %+v, %q", got, note)
	}
	got, note := sandbox.Resolve(want, sandbox.Support{Landlock: 7, Seccomp: true})
	if got.Egress || got.Network || !strings.Contains(note, "the egress allowlist needs namespaces and seccomp; the network stays cut") {
		t.Errorf("without namespaces: %+v, %q", got, note)
	}
	if got, _ := sandbox.Resolve(sandbox.Setting{Mode: sandbox.ModeLandlock, Egress: true, Network: true}, full); got.Egress || !got.Network {
		t.Errorf("with the network on: %+v", got)
	}
}
