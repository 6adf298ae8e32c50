package sandbox_test

import (
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// TestResolve: the setting never claims more than the kernel enforces,
// and says so in one line when it is less than asked.
func TestResolve(t *testing.T) {
	t.Parallel()
	full := sandbox.Support{Landlock: 7, Seccomp: true}
	cut := sandbox.Setting{Mode: sandbox.ModeLandlock}
	open := sandbox.Setting{Mode: sandbox.ModeLandlock, Network: true}
	for _, tc := range []struct {
		want sandbox.Setting
		sup  sandbox.Support
		got  sandbox.Setting
		note bool
	}{
		{cut, full, cut, false},
		{open, full, open, false},
		{sandbox.Setting{Mode: sandbox.ModeNone}, full, sandbox.None, false},
		{cut, sandbox.Support{}, sandbox.None, true},
		// ABI 1, the first Landlock, confines: it is not "no Landlock".
		{cut, sandbox.Support{Landlock: 1, Seccomp: true}, cut, false},
		{open, sandbox.Support{Landlock: 1}, open, false},
		{cut, sandbox.Support{Landlock: 1}, open, true},
		{open, sandbox.Support{Seccomp: true}, sandbox.None, true},
		{cut, sandbox.Support{Landlock: 3}, open, true},
		{open, sandbox.Support{Landlock: 3}, open, false},
	} {
		got, note := sandbox.Resolve(tc.want, tc.sup)
		if got != tc.got || (note != "") != tc.note {
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
