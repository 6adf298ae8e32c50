package complete

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/spf13/cobra"
)

func TestTakesSessionIDs(t *testing.T) {
	t.Parallel()
	for use, want := range map[string][2]bool{
		"show ID": {false, true}, "rm ID...": {true, true}, "regress [ID...]": {true, true}, "replay ID": {false, true},
		"list": {false, false}, "call NAME [JSON | -]": {false, false}, "search QUERY": {false, false},
	} {
		many, ok := takesSessionIDs(use)
		if [2]bool{many, ok} != want {
			t.Errorf("takesSessionIDs(%q) = %v, %v; want %v", use, many, ok, want)
		}
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"plain · ünïcode": "plain · ünïcode", "a\x1b]0;x\x07b": `a\x1b]0;x\x07b`, "zero\u200bwidth\u202e": `zero\u200bwidth\u202e`, "tab\tnl\n": `tab\x09nl\x0a`} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// complete runs a completion function and returns its choices' values.
func complete(fn cobra.CompletionFunc, cmd *cobra.Command, args []string, word string) []string {
	got, _ := fn(cmd, args, word)
	var out []string
	for _, c := range got {
		v, _, _ := strings.Cut(c, "\t")
		out = append(out, v)
	}
	return out
}

func TestRegister(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := "[providers.openai]\nmodel = \"gpt-x\"\n[prices.openai.gpt-y]\ninput = 1\noutput = 1\n[mcp.servers.s]\ncommand = \"x\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &cmdkit.Env{Vars: func(k string) string { return map[string]string{"MECHA_HOME": home}[k] }}
	root := &cobra.Command{Use: "mecha"}
	show := &cobra.Command{Use: "show ID", Run: func(*cobra.Command, []string) {}}
	own := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"mine"}, cobra.ShellCompDirectiveNoFileComp
	}
	run := &cobra.Command{Use: "run TASK", Run: func(*cobra.Command, []string) {}}
	run.Flags().StringP("provider", "p", "mock", "")
	run.Flags().StringP("model", "m", "", "")
	run.Flags().StringArray("tool", nil, "")
	run.Flags().String("effort", "", "")
	run.Flags().String("trifecta", "", "")
	if err := run.RegisterFlagCompletionFunc("trifecta", own); err != nil {
		t.Fatal(err)
	}
	root.AddCommand(show, run)
	Register(root, env, testCatalog)

	if show.ValidArgsFunction == nil || run.ValidArgsFunction != nil {
		t.Error("session ids: registered where Use says ID only")
	}
	get := func(name string) cobra.CompletionFunc { fn, _ := run.GetFlagCompletionFunc(name); return fn }
	if got := complete(get("trifecta"), run, nil, ""); strings.Join(got, ",") != "mine" {
		t.Errorf("a command's own completion was replaced: %v", got)
	}
	if got := complete(get("effort"), run, nil, ""); strings.Join(got, ",") != "low,medium,high" {
		t.Errorf("--effort: %v", got)
	}
	if got := complete(get("model"), run, nil, ""); strings.Join(got, ",") != "mock-1" {
		t.Errorf("-m with the default provider: %v", got)
	}
	if err := run.Flags().Set("provider", "openai"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(complete(get("model"), run, nil, ""), ","); !strings.HasPrefix(got, "gpt-x,gpt-y,") || !strings.Contains(got, ",gpt-5-mini,") || strings.Contains(got, "2025") {
		t.Errorf("-m with -p openai: %v", got)
	}
	if got := complete(get("tool"), run, nil, ""); !strings.Contains(strings.Join(got, ","), "fs_read,fs_list,fs_write,fs_edit,shell,web_fetch,mcp__s") {
		t.Errorf("--tool: %v", got)
	}
	if got := complete(FirstArg(CompleteToolNames(env)), run, []string{"fs_read"}, ""); got != nil {
		t.Errorf("FirstArg past the first: %v", got)
	}
}

// testCatalog stands for the harness's catalog (cli/root's test holds the
// real one to the harness).
var testCatalog = Catalog{
	Providers: []string{"anthropic", "openai", "local", "mock"},
	DefaultModel: func(cfg *config.Config, p string) string {
		if m := cfg.Model(p); m != "" {
			return m
		}
		return map[string]string{"mock": "mock-1", "openai": "gpt-4o"}[p]
	},
	Tools: func() []Named {
		var out []Named
		for _, n := range []string{"fs_read", "fs_list", "fs_write", "fs_edit", "shell", "web_fetch"} {
			out = append(out, Named{Name: n, Desc: "the tool " + n + ". More."})
		}
		return out
	},
	MCPServers: func(cfg *config.Config) []Named {
		var out []Named
		for n := range cfg.MCP.Servers {
			out = append(out, Named{Name: n, Desc: "stdio", Prefix: "mcp__" + n})
		}
		return out
	},
}
