// Package complete is shell completion: Register gives every command of
// a tree the completions its arguments and flags call for, by what they
// are: a session id argument (a "ID" word in Use), -p, -m, --tool,
// --resume, the flags that take one of a few words, and files and
// directories. A command that registered its own keeps it. What only the
// harness knows (providers, models, tools, MCP servers) comes in a
// Catalog, so that the CLI's kit builds none of them.
package complete

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
)

// fixedValues are the flags that take one of a few words.
var fixedValues = map[string][]string{
	"on-divergence": {"stop\tend the replay at the first structural divergence", "error\tstop and exit 1 on any divergence", "live\tgo on against the real tools"},
	"trifecta":      {"refuse\trefuse calls that could send data out of an armed conversation", "ask\tput them to a person", "off\tallow them"},
	"effort":        {"low", "medium", "high"},
	"sandbox":       {"landlock\tconfine the shell where the kernel has Landlock", "none\tthe shell runs unconfined"},
	"kind":          {"run", "replay", "rerun", "reflection", "serve", "proxy", "imported"},
	"role":          {"user", "assistant", "tool"},
	"transport":     {"http\tstreamable HTTP", "sse\tserver-sent events"},
	"mcp-transport": {"http\tstreamable HTTP", "sse\tserver-sent events"},
}

// Catalog is what completion offers that only the harness knows: the
// providers and their default models, the built-in tools and the
// configured MCP servers. cli/root fills it from the harness, so that this
// package builds no provider, tool or MCP client itself.
type Catalog struct {
	// Providers are the values -p accepts, in the order offered.
	Providers []string
	// DefaultModel is a provider's model when -m is not given.
	DefaultModel func(cfg *config.Config, provider string) string
	// Tools are the built-in tools' names and one-line descriptions.
	Tools func() []Named
	// MCPServers are the servers config.toml configures.
	MCPServers func(cfg *config.Config) []Named
}

// Named is a name and what it is. For an MCP server, Prefix is the
// prefix of its tools' names (mcp__SERVER) and Off says it is disabled.
type Named struct {
	Name, Desc, Prefix string
	Off                bool
}

// catalog is the Catalog Register was given.
var catalog Catalog

// Register walks cmd and its subcommands, completing with cat.
func Register(cmd *cobra.Command, env *cmdkit.Env, cat Catalog) {
	catalog = cat
	registerCompletions(cmd, env)
}

func registerCompletions(cmd *cobra.Command, env *cmdkit.Env) {
	if cmd.ValidArgsFunction == nil {
		if many, ok := takesSessionIDs(cmd.Use); ok {
			cmd.ValidArgsFunction = CompleteSessions(env, many)
		}
	}
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { registerFlag(cmd, env, f) })
	cmd.PersistentFlags().VisitAll(func(f *pflag.Flag) { registerFlag(cmd, env, f) })
	for _, c := range cmd.Commands() {
		registerCompletions(c, env)
	}
}

// takesSessionIDs reports whether a Use line names session ids as its
// arguments ("show ID", "rm ID...", "regress [ID...]") and whether more
// than one.
func takesSessionIDs(use string) (many, ok bool) {
	for _, w := range strings.Fields(use)[1:] {
		w = strings.Trim(w, "[]")
		switch w {
		case "ID":
			return false, true
		case "ID...":
			return true, true
		}
	}
	return false, false
}

func registerFlag(cmd *cobra.Command, env *cmdkit.Env, f *pflag.Flag) {
	if _, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
		return
	}
	var fn cobra.CompletionFunc
	switch varname, _ := pflag.UnquoteUsage(f); {
	case f.Name == "provider":
		fn = CompleteProviders(env)
	case f.Name == "model":
		fn = CompleteModels(env)
	case f.Name == "tool":
		fn = CompleteToolNames(env)
	case f.Name == "resume":
		fn = CompleteSessions(env, false)
	case fixedValues[f.Name] != nil:
		fn = cobra.FixedCompletions(accepted(fixedValues[f.Name], f.Usage), cobra.ShellCompDirectiveNoFileComp)
	case f.Name == "workspace" || varname == "DIR":
		fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
	case varname == "FILE":
		fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		}
	default:
		return
	}
	// The flag is one of cmd's and has no function yet: this cannot fail.
	_ = cmd.RegisterFlagCompletionFunc(f.Name, fn)
}

// accepted keeps the values a flag's usage names (regress takes stop or
// error, replay also live); all of them when it names none.
func accepted(values []string, usage string) []string {
	var out []string
	for _, v := range values {
		word, _, _ := strings.Cut(v, "\t")
		if strings.Contains(usage, word) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return values
	}
	return out
}

// CompleteSessions completes session ids, newest first, each described by
// its title and creation time, after "last"; from the headers alone (one
// small read per file). many lets it complete every argument, leaving out
// the ids already given. A word that looks like a path completes as a
// .jsonl file.
func CompleteSessions(env *cmdkit.Env, many bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if !many && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.ContainsAny(toComplete, "/~") || strings.HasPrefix(toComplete, ".") {
			return []cobra.Completion{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
		}
		store, err := env.Store()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		l, err := store.List()
		if err != nil || len(l.Sessions) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		if strings.HasPrefix(session.Last, toComplete) && !slices.Contains(args, session.Last) {
			out = append(out, cobra.CompletionWithDesc(session.Last, "the newest: "+describeSession(env, l.Sessions[0])))
		}
		for _, s := range l.Sessions {
			if id := s.Meta.ID; strings.HasPrefix(id, toComplete) && !slices.Contains(args, id) {
				out = append(out, cobra.CompletionWithDesc(id, describeSession(env, s)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// describeSession is a session's title and creation time, on one line of
// printable characters (a title may hold escape sequences).
func describeSession(env *cmdkit.Env, s session.Info) string {
	title := textfmt.Clip(textfmt.OneLine(s.Meta.Title), 60)
	if title == "" {
		title = "(untitled)"
	}
	return Printable(title) + " · " + s.Meta.CreatedAt.In(env.Zone()).Format("2006-01-02 15:04")
}

// Printable writes control and other unprintable characters of s as
// escapes (\x1b, \u200b), so that nothing reaches a terminal raw.
func Printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar || unicode.IsPrint(r) || r == ' ':
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// CompleteProviders completes -p, the default described as such.
func CompleteProviders(env *cmdkit.Env) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		def := "mock"
		if cfg, err := env.Config(); err == nil && cfg.DefaultProvider != "" {
			def = cfg.DefaultProvider
		}
		desc := map[string]string{"anthropic": "Claude (ANTHROPIC_API_KEY)", "openai": "OpenAI (OPENAI_API_KEY)",
			"local": "llama-server or Ollama at MECHA_LOCAL_URL", "mock": "built in, no network"}
		var out []cobra.Completion
		for _, p := range catalog.Providers {
			d := desc[p]
			if p == def {
				d += "; the default"
			}
			out = append(out, cobra.CompletionWithDesc(p, d))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteModels completes -m: for the provider -p names (else the
// default provider, or every provider on a command whose -p has no
// default), its default model and the models config.toml prices.
func CompleteModels(env *cmdkit.Env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := env.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		providers := catalog.Providers
		if f := cmd.Flags().Lookup("provider"); f != nil && (f.Changed || f.DefValue != "") {
			p := f.Value.String()
			if !f.Changed && cfg.DefaultProvider != "" {
				p = cfg.DefaultProvider
			}
			providers = []string{p}
		}
		var out []cobra.Completion
		seen := map[string]bool{}
		add := func(m, desc string) {
			if m != "" && !seen[m] && !strings.Contains(m, "*") {
				seen[m] = true
				out = append(out, cobra.CompletionWithDesc(m, desc))
			}
		}
		for _, p := range providers {
			if catalog.DefaultModel != nil {
				add(catalog.DefaultModel(cfg, p), p+", its default")
			}
			// config.toml's priced models, then the built-in table's
			// (their names, not their dated aliases) still in effect.
			for _, m := range slices.Sorted(maps.Keys(cfg.FilePrices[p])) {
				add(m, p+", priced in config.toml")
			}
			for _, m := range pricing.Builtin().Models[p] {
				if _, ok := cfg.Prices()[p][m]; ok {
					add(m, p+", priced in mecha's table")
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// CompleteToolNames completes a tool name: the built-in tools, then
// mcp__SERVER for each configured server that is enabled (its tools are
// not listed: that would start it).
func CompleteToolNames(env *cmdkit.Env) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		if catalog.Tools != nil {
			for _, t := range catalog.Tools() {
				desc, _, _ := strings.Cut(t.Desc, ".")
				out = append(out, cobra.CompletionWithDesc(t.Name, Printable(textfmt.Clip(textfmt.OneLine(desc), 70))))
			}
		}
		if cfg, err := env.Config(); err == nil && catalog.MCPServers != nil {
			for _, s := range catalog.MCPServers(cfg) {
				if !s.Off {
					out = append(out, cobra.CompletionWithDesc(s.Prefix, "the tools of the MCP server "+s.Name+" ("+s.Prefix+"__TOOL)"))
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// FirstArg completes the first argument with fn and nothing after it.
func FirstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// CompleteMCPServers completes the name of a configured MCP server.
func CompleteMCPServers(env *cmdkit.Env) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := env.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		if catalog.MCPServers != nil {
			for _, s := range catalog.MCPServers(cfg) {
				out = append(out, cobra.CompletionWithDesc(s.Name, s.Desc))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
