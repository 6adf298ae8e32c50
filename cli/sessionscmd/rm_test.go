package sessionscmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestRmPruneFlags(t *testing.T) {
	t.Parallel()
	env := &cmdkit.Env{}
	var rm *RmOptions
	if err := cmdtest.Execute(NewCmdRm(env, func(o *RmOptions) error { rm = o; return nil }), "-y", "a", "b"); err != nil || !rm.Yes || len(rm.IDs) != 2 {
		t.Errorf("rm: %v %+v", err, rm)
	}
	var pr *PruneOptions
	if err := cmdtest.Execute(NewCmdPrune(env, func(o *PruneOptions) error { pr = o; return nil }), "--older-than", "90d", "--dry-run"); err != nil || !pr.DryRun || pr.OlderThan != 90*24*time.Hour {
		t.Errorf("prune: %v %+v", err, pr)
	}
	for _, args := range [][]string{{}, {"--older-than", "0d"}, {"--older-than", "-1h"}, {"--older-than", "ninety"}, {"--older-than", "90d", "extra"}} {
		err := cmdtest.Execute(NewCmdPrune(env, func(*PruneOptions) error { t.Error("ran despite bad usage"); return nil }), args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("prune %q: %v, want a usage error", args, err)
		}
	}
	if err := cmdtest.Execute(NewCmdRm(env, func(*RmOptions) error { t.Error("ran"); return nil })); err == nil {
		t.Error("rm with no ids ran")
	}
}

func TestParseAge(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "12h": 12 * time.Hour, "1h30m": 90 * time.Minute} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v", in, got, err)
		}
	}
}

func TestPinned(t *testing.T) {
	t.Parallel()
	s := session.Info{Meta: transcript.Meta{ID: "20260805T091500-aaaaaaaa"}, Ref: session.Ref{Dir: "/s", ID: "20260805T091500-aaaaaaaa"}}
	for _, tc := range []struct {
		pins []string
		want bool
	}{{nil, false}, {[]string{"20260805T091500-aaaaaaaa"}, true}, {[]string{"20260805T0915"}, true}, {[]string{"/s/20260805T091500-aaaaaaaa.jsonl"}, true}, {[]string{"20260806"}, false}} {
		if got := pinned(tc.pins, s); got != tc.want {
			t.Errorf("pinned(%q) = %v", tc.pins, got)
		}
	}
}

func TestConfirm(t *testing.T) {
	t.Parallel()
	if ok, err := confirm(&cmdkit.Env{}, false, "?"); ok || !errors.Is(err, errNotConfirmed) {
		t.Errorf("no terminal: %v %v", ok, err)
	}
	for answer, want := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "\n": false, "": false} {
		env := &cmdkit.Env{InTTY: true, In: stringsReader(answer), Err: discard{}}
		if ok, err := confirm(env, false, "?"); ok != want || err != nil {
			t.Errorf("%q: %v %v", answer, ok, err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
