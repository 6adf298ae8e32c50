package learncmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/learn"
)

// RulesFile is the file learned rules are kept in, under $MECHA_HOME.
const RulesFile = "learned_rules.md"

// maxRulesFile bounds learned_rules.md (as mecha run reads it).
const maxRulesFile = 4 << 20

// DistillOptions are the options of "mecha distill".
type DistillOptions struct {
	Env *cmdkit.Env
	DistillFlags
	JSON bool
}

// NewCmdDistill builds "mecha distill".
func NewCmdDistill(env *cmdkit.Env, runF func(context.Context, *DistillOptions) error) *cobra.Command {
	opts := &DistillOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "distill",
		Short: "Merge the candidate rules of trusted reflections into a short list",
		Long: `Collect the reflections ("mecha reflect", "mecha run --reflect") of the last
--days days, newest first, and judge each by its own taint record: one whose
checkpoints say untrusted (the session it reflects on had brought in
content from outside: a web page, an MCP server) or that has a message no
checkpoint covers (unknown provenance) is dropped, and said so with why.
Only the candidate rules of the reflections kept are sent to the model,
which merges them into a short, deduplicated list, each rule naming the
reflections it came from; a dropped reflection's text never reaches it. A
rule drawn from a private reflection is marked private. The distillation
is recorded as a session (distill); nothing is written to
learned_rules.md ("mecha learn" does that).

The model answers with lines "- RULE (from: ID, ID)"; a rule naming none of
the reflections kept is taken to come from all of them.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return distillRun(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"session","kept","dropped","rules"}`)
	return cmd
}

func distillRun(ctx context.Context, opts *DistillOptions) error {
	report := opts.Env.Out
	if opts.JSON {
		report = opts.Env.Err
	}
	d, err := distill(ctx, opts.Env, opts.DistillFlags, report)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdkit.WriteJSON(opts.Env.Out, d)
	}
	for _, r := range d.Rules {
		priv := ""
		if r.Private {
			priv = " [private]"
		}
		fmt.Fprintf(opts.Env.Out, "- %s (from: %s)%s\n", opts.Env.ForOut(r.Text), strings.Join(r.From, ", "), priv)
	}
	return nil
}

// LearnOptions are the options of "mecha learn".
type LearnOptions struct {
	Env *cmdkit.Env
	DistillFlags
	DryRun, Yes, List bool
	Forget            int
	given             func(string) bool
}

// NewCmdLearn builds "mecha learn".
func NewCmdLearn(env *cmdkit.Env, runF func(context.Context, *LearnOptions) error) *cobra.Command {
	opts := &LearnOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "learn",
		Short: "Distill reflections and add the rules to learned_rules.md",
		Long: `Distill (see "mecha distill"), then show the change to
$MECHA_HOME/learned_rules.md as a unified diff on stdout and write it once
confirmed: --yes writes without asking, a terminal is asked, and with no
terminal and no --yes nothing is written (exit status 0; the diff says what
would have been). --dry-run shows the diff and writes nothing. Only rules
the file does not hold yet are added.

learned_rules.md is plain Markdown that mecha run appends to the system
prompt (--no-learned-rules leaves it out). Each rule mecha writes is a line
"- RULE <!-- mecha: from: ID, ID -->", with "private; " before "from:" when
it came from a reflection that read private data: a run whose prompt holds
a private rule starts private, so the trifecta interlock treats the prompt
like the data it came from. Edit the file freely: lines that are not rules
are kept as they are, and a rule written by hand is neither private nor
sourced.

--list shows the rules, numbered, with their sources; --forget N removes
rule N (with --dry-run, shows the change only).`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.given = cmdkit.Changed(cmd)
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return learnRun(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	f := cmd.Flags()
	f.BoolVar(&opts.DryRun, "dry-run", false, "show the change and write nothing")
	f.BoolVar(&opts.Yes, "yes", false, "write the change without asking")
	f.BoolVar(&opts.List, "list", false, "list the learned rules with their sources")
	f.IntVar(&opts.Forget, "forget", 0, "remove rule `N` (as --list numbers them)")
	return cmd
}

func (o *LearnOptions) validate() error {
	distilling := []string{"days", "provider", "model", "mock-script", "request-timeout"}
	switch {
	case o.List && (o.given("forget") || o.DryRun || o.Yes || o.anyGiven(distilling)):
		return cmdkit.Usagef("--list goes with no other flag")
	case o.given("forget") && o.Forget < 1:
		return cmdkit.Usagef("--forget needs a rule number of 1 or more (see mecha learn --list)")
	case o.given("forget") && (o.Yes || o.anyGiven(distilling)):
		return cmdkit.Usagef("--forget removes one rule and distills nothing; it goes only with --dry-run")
	case o.DryRun && o.Yes:
		return cmdkit.Usagef("--dry-run and --yes contradict each other")
	}
	return o.DistillFlags.validate()
}

func (o *LearnOptions) anyGiven(names []string) bool {
	for _, n := range names {
		if o.given(n) {
			return true
		}
	}
	return false
}

func learnRun(ctx context.Context, opts *LearnOptions) error {
	path, before, err := readRules(opts.Env)
	if err != nil {
		return err
	}
	f := learn.ParseFile(before)
	switch {
	case opts.List:
		return list(opts.Env, f)
	case opts.given("forget"):
		r, err := f.Forget(opts.Forget)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.Env.Err, "forget rule %d: %s\n", opts.Forget, opts.Env.ForErr(r.Text))
		// Removing a rule needs no confirmation: it was asked for by number.
		return confirmAndWrite(opts, path, before, f.String(), false)
	default:
		d, err := distill(ctx, opts.Env, opts.DistillFlags, opts.Env.Err)
		if err != nil {
			return err
		}
		if n := f.Add(d.Rules); n == 0 {
			fmt.Fprintf(opts.Env.Err, "%s: nothing new to learn\n", RulesFile)
			return nil
		}
	}
	return confirmAndWrite(opts, path, before, f.String(), true)
}

// confirmAndWrite shows the change as a diff and writes it, once confirmed
// when ask is true.
func confirmAndWrite(opts *LearnOptions, path, before, after string, ask bool) error {
	env := opts.Env
	fmt.Fprint(env.Out, env.ForOut(learn.Diff(before, after, RulesFile)))
	switch {
	case opts.DryRun:
		fmt.Fprintln(env.Err, "dry run: nothing written")
		return nil
	case opts.Yes || !ask:
	case !env.InTTY:
		fmt.Fprintf(env.Err, "no terminal to confirm on: nothing written to %s (--yes writes without asking)\n", path)
		return nil
	default:
		fmt.Fprintf(env.Err, "write this to %s? [y/N] ", path)
		answer, _ := bufio.NewReader(env.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(env.Err, "nothing written")
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, []byte(after), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(env.Err, "wrote %s\n", path)
	return nil
}

// readRules reads learned_rules.md ("" when there is none).
func readRules(env *cmdkit.Env) (path, text string, err error) {
	home, err := env.Home()
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(home, RulesFile)
	b, err := safeopen.ReadFile(path, maxRulesFile)
	if errors.Is(err, os.ErrNotExist) {
		return path, "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("learned rules: %w", err)
	}
	return path, string(b), nil
}

// list prints the rules, numbered from 1, with their sources and privacy.
func list(env *cmdkit.Env, f *learn.File) error {
	rules := f.Rules()
	if len(rules) == 0 {
		fmt.Fprintf(env.Err, "%s holds no rules\n", RulesFile)
		return nil
	}
	for i, r := range rules {
		fmt.Fprintf(env.Out, "%d. %s\n", i+1, env.ForOut(r.Text))
		src := "written by hand"
		if len(r.From) > 0 {
			src = "from " + strings.Join(r.From, ", ")
		}
		if r.Private {
			src += " · private"
		}
		fmt.Fprintf(env.Out, "   %s\n", src)
	}
	return nil
}
