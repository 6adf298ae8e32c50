package root

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/complete"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
)

// completionExamples are the install lines of each shell's script.
var completionExamples = map[string]string{
	"bash": `  source <(mecha completion bash)
  mecha completion bash > ~/.local/share/bash-completion/completions/mecha`,
	"zsh": `  mecha completion zsh > "${fpath[1]}/_mecha"
  source <(mecha completion zsh)`,
	"fish":       `  mecha completion fish > ~/.config/fish/completions/mecha.fish`,
	"powershell": `  mecha completion powershell | Out-String | Invoke-Expression`,
}

// addCompletion adds cobra's completion and help commands now rather
// than when the tree runs, so that they have examples and mecha's usage
// errors like every other command, and registers what each argument and
// flag of the tree completes with (complete.Register) when registered is
// set.
func addCompletion(root *cobra.Command, env *cmdkit.Env, registered bool) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  mecha help\n  mecha help sessions show"
			c.Run, c.RunE = nil, helpTopic(root)
		case "completion":
			c.Example = "  mecha completion bash\n  mecha completion zsh > \"${fpath[1]}/_mecha\""
			c.Args = cmdkit.NoArgs
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			for _, sh := range c.Commands() {
				sh.Example = completionExamples[sh.Name()]
				sh.Args = cmdkit.NoArgs
			}
		}
	}
	if registered {
		complete.Register(root, env, catalog())
	}
	addExamples(root)
}

// completing reports whether args are a completion request: cobra's
// hidden __complete and __completeNoDesc commands, which the scripts of
// "mecha completion SHELL" call.
func completing(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// helpTopic is the help command: the help of the command its arguments
// name, or a usage error naming the nearest ones when they name none.
func helpTopic(root *cobra.Command) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		found, rest, err := root.Find(args)
		if err != nil {
			return &cmdkit.UsageError{Err: err}
		}
		if len(rest) > 0 && found.HasSubCommands() {
			return cmdkit.NoArgs(found, rest)
		}
		return found.Help()
	}
}

// catalog is what completion knows of the harness.
func catalog() complete.Catalog {
	return complete.Catalog{
		Providers:    harness.Providers(),
		DefaultModel: harness.DefaultModel,
		Tools: func() []complete.Named {
			var out []complete.Named
			for _, t := range harness.BuiltinTools() {
				out = append(out, complete.Named{Name: t.Name, Desc: t.Description})
			}
			return out
		},
		MCPServers: func(cfg *config.Config) []complete.Named {
			var out []complete.Named
			for _, s := range harness.ConfiguredServers(cfg) {
				out = append(out, complete.Named{Name: s.Name, Desc: s.Kind, Prefix: s.Prefix, Off: s.Disabled})
			}
			return out
		},
	}
}
