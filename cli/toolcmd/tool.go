// Package tool is "mecha tool": list the tools a run would offer, and call
// one of them once, with no model, exactly as the agent loop would.
package toolcmd

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// NewCmdTool builds "mecha tool" and its subcommands.
func NewCmdTool(env *cmdkit.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tool",
		Short: "List the tools a run offers, or call one with no model",
		Long: `Use mecha's tools directly. A call goes through the same surface a run
builds: confined to the workspace, behind the permission gate, its output
truncated and cleared of secret values, shell commands run in a scrubbed
environment. Scripts written by "mecha script" are made of these calls.

The built-in tools ("mecha tool list" shows what each declares):

  fs_list, fs_read, fs_write, fs_edit
      files inside the workspace. A name that is not UTF-8, which JSON
      cannot carry, is listed with each stray byte as \xHH and each
      backslash as \\, and every path given to the tools is read back the
      same way, so a listed name always leads to the file it lists.
  fs_grep, fs_glob
      search the workspace without asking: fs_grep for lines matching a
      regular expression (Go's RE2), as path:line:text; fs_glob for paths
      matching a pattern with **. Both skip .git and what .gitignore files
      exclude, follow no symbolic link they meet, and stop at a cap they
      state; fs_grep skips binary files and redacts secrets before it
      matches, so a pattern cannot probe for one.
  shell
      /bin/sh -c in the workspace, with mecha's environment less every
      variable named like a credential (SECRET, TOKEN, PASSWORD, API_KEY,
      PRIVATE_KEY, COOKIE, WEBHOOK, DSN, ... anywhere in the name; PASS,
      PWD, AUTH, SESSION, KEY as its last word) or holding a URL with a
      password; secrets left in its output, hex and base64 forms included,
      are redacted. Sandboxed by default (--sandbox landlock): it reads
      anything, writes only in the workspace and a private TMPDIR, and
      reaches no network at all (no TCP, UDP, DNS or socket of any kind).
      --sandbox-network gives the network back; --sandbox none runs it
      unconfined. Where the kernel lacks a layer, mecha says so in one
      line and records what it enforces. Confined with the network cut,
      the shell may run in a conversation the trifecta interlock has
      armed; with the network it is refused there. See SECURITY.md.
  web_fetch
      GET an http or https URL: its text (HTML converted to Markdown-like
      text), the final URL and the status; at most 5 redirects, 2 MiB of
      body, 30 s. It never connects to link-local or cloud-metadata
      addresses (in any IPv6 form either), however it is led there;
      loopback and private networks are allowed unless config.toml sets
      [web_fetch] refuse_private = true. It asks first, and what it
      returns makes the conversation untrusted.
  agent
      a sub-task run as a child run; offered only when asked for (see
      "mecha run --help").

Which command redoes what:
  mecha replay   the world held fixed (recorded tool results), the model
                 varies, nothing executes: does another model, prompt or
                 build still do the same work?
  mecha rerun    the calls held fixed, the world varies, no model: does
                 the same work still give the same results?
  mecha script   the calls as a plain sh script of "mecha tool call"s, to
                 redo them later, elsewhere, or without model access.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(env, nil), NewCmdCall(env, nil))
	return cmd
}
