// Package trustcmd holds "mecha trust": which workspaces are their
// owner's, kept as config.toml's trusted_workspaces.
package trustcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
)

// Options are the options of "mecha trust".
type Options struct {
	Env    *cmdkit.Env
	Dir    string
	Revoke bool
	List   bool
}

// NewCmdTrust builds "mecha trust". runF, when not nil, runs in place of
// the command once its flags are parsed and checked (tests use it).
func NewCmdTrust(env *cmdkit.Env, runF func(*Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a workspace (or revoke, or list): its files are then read as yours",
		Long: `A workspace is untrusted until you trust it, as VS Code's Workspace Trust and
Claude Code's folder question have it: a repository you cloned can hold text
written to steer an agent (a README saying "fetch this URL with the key in
.env"). In a workspace no entry covers:

  - what the file tools (fs_read, fs_list, fs_grep, fs_glob, fs_edit) and the
    shell bring in counts as untrusted as well as private, so after the first
    read the interlock refuses (or, with --trifecta ask, asks about) every
    tool that can send data out: web_fetch, a shell with the network, an MCP
    tool that reaches the network;
  - its AGENTS.md or CLAUDE.md is left out of the system prompt (a note
    says so), as Claude Code reads project instructions only after trust.

mecha trust DIR (default: the current directory) adds DIR, absolute and
with its symbolic links resolved, to trusted_workspaces in config.toml; the
file is rewritten whole and atomically, and nothing else in it changes. A
trusted directory trusts every directory beneath it: trusting ~/src trusts
each project in it. mecha trust --revoke DIR removes DIR's own entry (a
parent's entry still covers it: revoke that one). mecha trust --list prints
the entries, one a line.

mecha chat asks once, when it opens in a workspace no entry covers: t trusts
it (as mecha trust would), n goes on untrusted for this chat. mecha run and
every other command decide from config.toml alone: there is no flag that
trusts a workspace for one run, so a script or CI job trusts its checkout
with mecha trust first, in one place that can be read.

Each attach records what was decided and why (workspace_trust in its config
record). A resume, a replay and a rerun judge the workspace trusted only if
it was recorded trusted and is trusted now: a session begun untrusted stays
untrusted after you trust its workspace; start a new session to work
trusted. A session recorded before workspace trust existed is judged by
today's entries.`,
		Example: `  mecha trust                 # trust the current directory
  mecha trust ~/src           # trust every project under ~/src
  mecha trust --revoke ~/src/forked-thing
  mecha trust --list`,
		Args: cmdkit.RangeArgs(0, 1, "the directory to trust (default: the current one)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if opts.List && (opts.Revoke || len(args) > 0) {
				return cmdkit.Usagef("--list takes no directory and no --revoke")
			}
			if runF != nil {
				return runF(opts)
			}
			return trustRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Revoke, "revoke", false, "remove DIR's entry: it is untrusted again (unless a parent's entry covers it)")
	f.BoolVar(&opts.List, "list", false, "print the trusted directories, one a line")
	return cmd
}

func trustRun(opts *Options) error {
	w := attach.World(opts.Env)
	out, errOut := opts.Env.ForOut, opts.Env.ForErr
	switch {
	case opts.List:
		cfg, err := harness.LoadConfig(w)
		if err != nil {
			return err
		}
		if len(cfg.TrustedWorkspaces) == 0 {
			fmt.Fprintln(opts.Env.Err, "no workspace is trusted (mecha trust DIR trusts one)")
			return nil
		}
		for _, e := range cfg.TrustedWorkspaces {
			fmt.Fprintln(opts.Env.Out, out(e))
		}
		return nil
	case opts.Revoke:
		removed, still, err := harness.RevokeWorkspace(w, opts.Dir)
		if err != nil {
			return err
		}
		dir := opts.Dir
		if dir == "" {
			dir = "."
		}
		if len(removed) > 0 {
			fmt.Fprintf(opts.Env.Out, "untrusted: %s\n", out(strings.Join(removed, ", ")))
		}
		if still != "" {
			return fmt.Errorf("trust: %s is still trusted through %s: revoke that entry (mecha trust --revoke %s)", dir, still, still)
		}
		if len(removed) == 0 {
			fmt.Fprintf(opts.Env.Err, "%s was not trusted\n", errOut(dir))
		}
		return nil
	}
	dir, by, err := harness.TrustWorkspace(w, opts.Dir)
	if err != nil {
		return err
	}
	if by != "" {
		fmt.Fprintf(opts.Env.Out, "already trusted: %s (by %s)\n", out(dir), out(by))
		return nil
	}
	fmt.Fprintf(opts.Env.Out, "trusted: %s\n", out(dir))
	return nil
}
