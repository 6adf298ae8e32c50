// Package importcmd is "mecha import": Claude Code transcripts and Codex
// rollouts converted into mecha sessions.
package importcmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/importer"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Options are the options of "mecha import".
type Options struct {
	Env     *cmdkit.Env
	Harness string
	Paths   []string
	All     bool
	DryRun  bool
	JSON    bool
}

// NewCmdImport builds "mecha import".
func NewCmdImport(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "import claude-code|codex [PATH ...] [--all] [--dry-run]",
		Short: "Import Claude Code transcripts or Codex rollouts as mecha sessions",
		Long: `Convert another harness's transcripts into mecha sessions, which "sessions
show", "script" and "replay" then work on. claude-code reads
~/.claude/projects/<dir>/<session>.jsonl, codex reads
~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl; name files as PATHs, or give
--all to import every file of the harness's directory under $HOME.

An imported session names its source in its header (imported_from), holds
a config record with what the source knew (model, workspace, the tools
called) and null for the rest, and is armed: its content has unknown
provenance. Tools map onto mecha's where they mean the same (Read, Write,
Edit, Bash; Codex's shell and exec_command), approximately where they do
not quite (Glob and Grep as shell commands; apply_patch), which makes a
script of them "reconstructed"; others keep their names, and a replay
refuses them, naming them.

A Claude Code session's sub-agents (Task or Agent calls) become child
sessions naming the session and the call that started them, as mecha's
own subagents' runs do ("sessions show" links them, "replay --deep"
replays them): their sidechain entries in the file, their files in
<session>/subagents/ (2.1), or agent-*.jsonl beside the file naming its
session (earlier versions); a sub-agent's file that answers no call is
named and not imported. The calls map onto mecha's agent tool,
approximately (the agent type has no counterpart).

A Claude Code transcript is a tree (a rewind leaves the abandoned branch in
the file): the import takes the branch the conversation last took, with
what hangs off it (the results of parallel calls, the rest of a response
split around a result), rejoins each API response into one message, and
keeps compactions as compactions. Entries Claude Code or Codex wrote
themselves (isMeta entries, slash-command wrappers, injected environment
and instructions) are no prompts.

Nothing is lost silently: every entry (line) of a file is either imported
or counted as not imported under a reason, in the report, in --json's
"skipped" and in the session's imported_from, which "sessions show" names:
off branch (a rewound branch), sidechain, not understood (a torn last
line, a record type not known), server tool, duplicate, injected, command,
reasoning and bookkeeping (progress lines, snapshots, echoed events).
Importing a file again finds the session it made ("already imported"; the
id comes from the file's first timestamp and a hash of its path and
content, so a transcript that has grown since is imported anew). A file
that cannot be read is reported, the others are still imported, and the
exit status is 1. --dry-run parses and reports, writing nothing.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdkit.Usagef("import: name the harness: claude-code or codex")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Harness, opts.Paths = args[0], args[1:]
			if opts.Harness != importer.ClaudeCode && opts.Harness != importer.Codex {
				return cmdkit.Usagef("import: unknown harness %q: claude-code or codex", opts.Harness)
			}
			if opts.All == (len(opts.Paths) > 0) {
				return cmdkit.Usagef("import: name the files to import, or give --all (not both)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return importRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "import every transcript of the harness's directory under $HOME")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "parse and report, writing nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print one {"source","harness","id","status","messages","calls","approximate","entries","skipped","children"} per file, one per line`)
	cmd.ValidArgsFunction = completeImport
	return cmd
}

// Sources returns the files --all imports for a harness under home. A
// Claude Code sub-agent's file (agent-*.jsonl, which versions before 2.1
// wrote beside the session's) is not one: it is imported with the session
// that started it, as its child.
func Sources(harness, home string) ([]string, error) {
	pattern := filepath.Join(home, ".claude", "projects", "*", "*.jsonl")
	if harness == importer.Codex {
		pattern = filepath.Join(home, ".codex", "sessions", "[0-9]*", "[0-9]*", "[0-9]*", "rollout-*.jsonl")
	}
	m, err := filepath.Glob(pattern)
	if harness == importer.ClaudeCode {
		m = slices.DeleteFunc(m, func(p string) bool { return strings.HasPrefix(filepath.Base(p), "agent-") })
	}
	sort.Strings(m)
	return m, err
}

func importRun(opts *Options) error {
	env := opts.Env
	paths := opts.Paths
	if opts.All {
		home := env.Vars.Get("HOME")
		if home == "" {
			return fmt.Errorf("import: --all needs $HOME")
		}
		var err error
		if paths, err = Sources(opts.Harness, home); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if len(paths) == 0 {
			fmt.Fprintf(env.Err, "import: no %s transcripts under %s\n", opts.Harness, home)
			return nil
		}
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	failed := 0
	for _, p := range paths {
		res, err := importer.File(store, opts.Harness, p, opts.DryRun)
		if err != nil {
			// One file that cannot be read does not stop the others.
			failed++
			fmt.Fprintf(env.Err, "import: %s\n", env.ForErr(fmt.Sprintf("%s: %v", p, err)))
			continue
		}
		if opts.JSON {
			// One object per file per line, as the help says.
			if err := cmdkit.WriteJSONLine(env.Out, res); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(env.Out, report(res, env.ForOut))
		writeChildren(env.Out, res.Children, "  ", env.ForOut)
		for _, u := range res.Unjoined {
			fmt.Fprintf(env.Out, "  not imported: %s (a sub-agent's file that answers no call of the session)\n", env.ForOut(u))
		}
	}
	if failed > 0 {
		return fmt.Errorf("import: %d of %d files could not be imported", failed, len(paths))
	}
	return nil
}

// report is the line that says what became of one file: its session,
// what it holds, and what of the source was not imported, by reason. out
// makes the source's path safe to show.
func report(res importer.Result, out func(string) string) string {
	line := fmt.Sprintf("%s %s: %s (%d messages, %d calls", res.ID, res.Status, out(res.Source), res.Messages, res.Calls)
	if res.Approximate > 0 {
		line += fmt.Sprintf(", %d mapped approximately", res.Approximate)
	}
	skipped := 0
	for _, n := range res.Skipped {
		skipped += n
	}
	if skipped > 0 {
		line += fmt.Sprintf("; %d of %d entries not imported: %s", skipped, res.Entries, transcript.DescribeSkipped(res.Skipped))
	}
	return line + ")"
}

// writeChildren reports the child sessions of sub-agents under their
// parent's line, indented.
func writeChildren(w io.Writer, kids []importer.Result, indent string, out func(string) string) {
	for _, k := range kids {
		fmt.Fprintf(w, "%s⤷ call %s: %s\n", indent, out(k.CallID), report(k, out))
		writeChildren(w, k.Children, indent+"  ", out)
	}
}

// completeImport completes the harness, then transcript files.
func completeImport(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return []cobra.Completion{"claude-code\tClaude Code transcripts (~/.claude/projects)", "codex\tCodex rollouts (~/.codex/sessions)"}, cobra.ShellCompDirectiveNoFileComp
	}
	return []cobra.Completion{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
}
