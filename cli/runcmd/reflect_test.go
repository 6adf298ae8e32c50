package runcmd

import (
	"context"
	"errors"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestReflectOption(t *testing.T) {
	on, off := &config.Config{Reflect: true}, &config.Config{}
	given := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, g := range names {
				if g == n {
					return true
				}
			}
			return false
		}
	}
	reflection := &session.Session{Meta: transcript.Meta{ReflectsOn: "X"}}
	distill := &session.Session{Meta: transcript.Meta{Distill: true}}
	for _, tc := range []struct {
		name string
		o    Options
		cfg  *config.Config
		prev *session.Session
		want bool
	}{
		{"flag", Options{Reflect: true, Given: given("reflect")}, off, nil, true},
		{"config", Options{}, on, nil, true},
		{"flag false over config", Options{Reflect: false, Given: given("reflect")}, on, nil, false},
		{"neither", Options{}, off, nil, false},
		{"config, no session", Options{NoSession: true}, on, nil, false},
		{"resumed run", Options{}, on, &session.Session{}, true},
		{"resumed reflection", Options{}, on, reflection, false},
		{"resumed distillation", Options{Reflect: true, Given: given("reflect")}, off, distill, false},
	} {
		if got := tc.o.reflect(tc.cfg, tc.prev); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	cmd := NewCmdRun(&cmdkit.Env{}, func(context.Context, *Options) error { t.Error("ran"); return nil })
	var ue *cmdkit.UsageError
	if err := cmdtest.Execute(cmd, "--reflect", "--no-session", "x"); !errors.As(err, &ue) {
		t.Errorf("--reflect --no-session: %v", err)
	}
}
