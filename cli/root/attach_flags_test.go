package root

import (
	"io"
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/chatcmd"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/regresscmd"
	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/cli/runcmd"
	"github.com/mecha-agent/mecha/harness"
)

// TestChatTakesRunsAttachFlags compares the flag sets of run and chat:
// every flag that shapes an attach (attach.Flags) is on both with the same
// shorthand, type, default and help, and the two differ only by the flags
// that are about a single run's output and record.
func TestChatTakesRunsAttachFlags(t *testing.T) {
	env := &cmdkit.Env{Out: io.Discard, Err: io.Discard}
	run, chat := runcmd.NewCmdRun(env, nil), chatcmd.NewCmdChat(env, nil)
	shaping := &cobra.Command{Use: "x"}
	attach.Flags(shaping, &harness.Settings{})
	n := 0
	shaping.Flags().VisitAll(func(want *pflag.Flag) {
		n++
		for _, c := range []*cobra.Command{run, chat} {
			got := c.Flags().Lookup(want.Name)
			switch {
			case got == nil:
				t.Errorf("%s does not take --%s", c.Name(), want.Name)
			case !sameFlag(got, want):
				t.Errorf("%s --%s is not attach.Flags' --%s: %+v", c.Name(), want.Name, want.Name, got)
			}
		}
	})
	if n < 25 {
		t.Fatalf("attach.Flags declares %d flags; the attach is shaped by more", n)
	}
	runOnly, chatOnly := difference(run, chat), difference(chat, run)
	if want := []string{"file", "json", "no-session", "reflect", "stream-json"}; !slices.Equal(runOnly, want) {
		t.Errorf("flags of run alone: %q, want %q", runOnly, want)
	}
	if len(chatOnly) != 0 {
		t.Errorf("flags of chat alone: %q", chatOnly)
	}
}

// TestReplayTakesTheSharedAttachFlags: replay and regress take the flags
// they share with run from cli/attach: -p, -m and --mock-script as
// attach.ReplayModelFlags declares them (they replace the recorded
// provider and model; regress's -m, repeatable beside --models, as
// attach.CompareModelFlags does), --system-prompt-file as
// attach.ReplayPromptFlag, and --request-timeout, --mcp-config, --no-mcp
// (and, for replay, --yes and --read-only) exactly as run takes them.
func TestReplayTakesTheSharedAttachFlags(t *testing.T) {
	env := &cmdkit.Env{Out: io.Discard, Err: io.Discard}
	run := runcmd.NewCmdRun(env, nil)
	model := &cobra.Command{Use: "x"}
	attach.ReplayModelFlags(model, &harness.Settings{})
	attach.ReplayPromptFlag(model, &harness.Settings{})
	models := &cobra.Command{Use: "y"}
	attach.CompareModelFlags(models, &harness.Settings{}, new([]string), new([]string))
	for _, c := range []struct {
		cmd      *cobra.Command
		asRun    []string
		asReplay []string
		compared []string
	}{
		{replaycmd.NewCmdReplay(env, nil), []string{"request-timeout", "mcp-config", "no-mcp", "yes", "read-only"},
			[]string{"provider", "model", "mock-script", "system-prompt-file"}, nil},
		{regresscmd.NewCmdRegress(env, nil), []string{"request-timeout", "mcp-config", "no-mcp"},
			[]string{"provider", "mock-script", "system-prompt-file"}, []string{"model", "models"}},
	} {
		same := func(from *cobra.Command, names []string) {
			for _, name := range names {
				want, got := from.Flags().Lookup(name), c.cmd.Flags().Lookup(name)
				if got == nil || !sameFlag(got, want) {
					t.Errorf("%s --%s = %+v, want %+v", c.cmd.Name(), name, got, want)
				}
			}
		}
		same(run, c.asRun)
		same(model, c.asReplay)
		same(models, c.compared)
	}
}

func sameFlag(a, b *pflag.Flag) bool {
	return a.Shorthand == b.Shorthand && a.Value.Type() == b.Value.Type() && a.DefValue == b.DefValue && a.Usage == b.Usage
}

// difference lists, sorted, the flags of a that b does not take.
func difference(a, b *cobra.Command) []string {
	var out []string
	a.Flags().VisitAll(func(f *pflag.Flag) {
		if b.Flags().Lookup(f.Name) == nil {
			out = append(out, f.Name)
		}
	})
	slices.Sort(out)
	return out
}
