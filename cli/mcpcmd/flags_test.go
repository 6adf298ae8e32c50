package mcpcmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestProxyFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		usage   string // a usage error containing this, or "" for none
		command string
		rest    string
	}{
		{args: []string{"--", "npx", "-y", "server"}, command: "npx", rest: "-y server"},
		{args: []string{"--name", "e", "--http", "9000", "--", "srv"}, command: "srv"},
		{args: []string{"--url", "http://127.0.0.1:1/mcp"}},
		{args: []string{}, usage: "no upstream"},
		{args: []string{"srv"}, usage: "after --"},
		{args: []string{"--url", "http://x", "--", "srv"}, usage: "not both"},
	} {
		var got *ProxyOptions
		cmd := NewCmdProxy(&cmdkit.Env{}, func(_ context.Context, o *ProxyOptions) error { got = o; return nil })
		err := cmdtest.Execute(cmd, tc.args...)
		var ue *cmdkit.UsageError
		switch {
		case tc.usage != "":
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
				t.Errorf("%v: err %v, want a usage error about %q", tc.args, err, tc.usage)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case got.Command != tc.command || strings.Join(got.Args, " ") != tc.rest:
			t.Errorf("%v: command %q args %q", tc.args, got.Command, got.Args)
		}
	}
}

func TestServeFlags(t *testing.T) {
	t.Parallel()
	cmd := NewCmdServe(&cmdkit.Env{}, func(context.Context, *ServeOptions) error { return nil })
	var ue *cmdkit.UsageError
	if err := cmdtest.Execute(cmd, "--yes", "--read-only"); !errors.As(err, &ue) {
		t.Fatalf("--yes --read-only: %v", err)
	}
	var got *ServeOptions
	cmd = NewCmdServe(&cmdkit.Env{}, func(_ context.Context, o *ServeOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "-w", "/w", "--tool", "fs_read", "--tool", "fs_list", "--http", "8080"); err != nil {
		t.Fatal(err)
	}
	if got.Workspace != "/w" || strings.Join(got.Tools, ",") != "fs_read,fs_list" || got.HTTP.Addr != "8080" || got.Yes || got.ReadOnly {
		t.Fatalf("options %+v", got)
	}
}
